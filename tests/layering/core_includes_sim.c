/* Deliberately against the layering (docs/design.md#layers): the core may not see the
 * simulator above it, so this file must fail to compile as part of anvil_core's layer. */
#include "sim/sim.h"

int av_layering_probe_core;
