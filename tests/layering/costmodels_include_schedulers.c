/* Deliberately against the layering (docs/design.md#layers): a cost model may not see the
 * schedulers that use it, so this file must fail to compile in the costmodels layer. */
#include "schedulers/scheduler.h"

int av_layering_probe_costmodels;
