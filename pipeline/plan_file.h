/* `anvil plan` as a library call: one batch (a workload spec file or --levels) planned by
 * one scheduler for a GPU, proved exact by the checker and written with its workload as
 * JSON. Its work is held to the default limits first (docs/reliability.md#limits). Nothing
 * is printed. */
#ifndef AV_PIPELINE_PLAN_FILE_H
#define AV_PIPELINE_PLAN_FILE_H

#include "core/error.h"
#include "core/plan.h"
#include "pipeline/models.h"

typedef struct av_plan_file_opts {
  const char *spec, *levels;      /* exactly one */
  const char *gpu;
  av_model_names_t models;        /* scheduler (required) and cost model, their parameters */
  av_heads_t heads;               /* when the spec has none */
  int no_limits;
  av_launch_model_t launch;
  const char *out;                /* where the plan goes (required) */
} av_plan_file_opts_t;

/* What was written. */
typedef struct av_plan_file_result {
  char scheduler[64], params[256], workload[128], gpu[64];
  av_plan_stats_t stats;
} av_plan_file_result_t;

/* Plans, proves and writes; fills *out (may be NULL). Messages name "plan" and the option a
 * user gave, as the `anvil` program prints them. */
int av_plan_file(const av_plan_file_opts_t *o, av_plan_file_result_t *out, av_error_t *err);

#endif
