/* Deliberately against the layering (docs/design.md#layers): the profile file format knows
 * nothing of the cost model that evaluates it, so this file must fail to compile in the
 * profile_format layer. */
#include "costmodels/costmodel.h"

int av_layering_probe_profile_format;
