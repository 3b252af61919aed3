/* Shared between the experiment file's loader (experiment.c) and its workload expansion
 * (experiment_workloads.c). */
#ifndef AV_PIPELINE_EXPERIMENT_INTERNAL_H
#define AV_PIPELINE_EXPERIMENT_INTERNAL_H

#include "core/json_util.h"
#include "pipeline/experiment.h"

/* `rel` relative to the directory of the experiment file `exp_path` (absolute stays). */
void av__experiment_resolve_path(char *out, size_t size, const char *exp_path, const char *rel);
/* Builds e->batches from root's "workloads". */
int av__experiment_parse_workloads(const av_jctx_t *c, const json_t *root, av_experiment_t *e);

/* e->limits from root's "limits" (the defaults where absent). */
int av__experiment_parse_limits(const av_jctx_t *c, const json_t *root, av_experiment_t *e);
/* Every batch, and every scheduler's plan of it, within e->limits (core/limits.h). */
int av__experiment_check_limits(const av_jctx_t *c, const av_experiment_t *e);

#endif
