/* Deliberately against the layering (docs/design.md#layers): the simulator may not see the
 * experiment pipeline, so this file must fail to compile in the sim layer. */
#include "pipeline/experiment.h"

int av_layering_probe_sim;
