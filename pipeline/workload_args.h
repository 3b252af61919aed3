/* A batch as a command names it: a workload spec file (docs/experiments.md) or a --levels
 * text in B/L notation ("B=1,4 L=128,32"); messages name the file, or "--levels" and the
 * list and entry at fault. */
#ifndef AV_PIPELINE_WORKLOAD_ARGS_H
#define AV_PIPELINE_WORKLOAD_ARGS_H

#include "core/error.h"
#include "core/workload.h"

/* Builds the workload from `spec_path` or `levels` (exactly one of the two; AV_ERR_USAGE
 * naming `cmd` otherwise). Heads default to `defaults`. Caller owns *out. */
int av_workload_args_load(const char *cmd, const char *spec_path, const char *levels,
                          const av_heads_t *defaults, av_workload_t **out, av_error_t *err);

#endif
