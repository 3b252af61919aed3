/* Deliberately against the layering (docs/design.md#layers): a scheduler plans without the
 * simulator (predicting plans to choose among them is the selectors' work, above), so this
 * file must fail to compile in the schedulers layer. */
#include "sim/sim.h"

int av_layering_probe_schedulers;
