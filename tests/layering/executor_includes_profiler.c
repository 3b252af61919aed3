/* Deliberately against the layering (docs/design.md#layers): the executor runs plans and knows
 * nothing of the profiler that measures through it, so this file must fail to compile in the
 * executor layer. */
#include "profiler/profile.h"

int av_layering_probe_executor;
