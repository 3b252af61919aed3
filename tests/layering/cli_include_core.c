/* Deliberately against the layering (docs/design.md#layers): the command line sees the
 * public API of include/anvil/ only, so this file must fail to compile in the cli layer. */
#include "core/error.h"

int av_layering_probe_cli;
