/* `anvil trace` as a library call: a JSONL decode trace (one batch per step, requests joining
 * and leaving) planned by one scheduler and predicted by the simulator, step by step. A step
 * whose batch tree keeps its structure, its leaves growing only within their requests' last
 * KV block, reuses the previous plan grown to the new lengths instead of planning again:
 * PAT's lazy update (PAT §5.1, pipeline/plan_reuse.h). Each step comes back as a row through
 * a callback; nothing is printed. */
#ifndef AV_PIPELINE_TRACE_RUN_H
#define AV_PIPELINE_TRACE_RUN_H

#include <stdint.h>

#include "core/error.h"
#include "core/workload.h"
#include "pipeline/models.h"

/* What a trace run is, known once the trace is loaded and within the limits; the names are
 * borrowed for the call only. */
typedef struct av_trace_start {
  int32_t steps;
  const char *scheduler, *cost_model, *sim, *gpu;
} av_trace_start_t;
typedef void (*av_trace_start_fn)(const av_trace_start_t *start, void *user);

typedef struct av_trace_opts {
  const char *path;        /* the trace (JSONL) */
  const char *gpu;         /* GPU spec name */
  const char *sim;         /* simulator model: "engine" or "waves" */
  av_model_names_t models; /* scheduler and cost model with their parameters */
  av_heads_t heads;        /* for steps that name none */
  int no_limits;           /* plan and simulate steps over the limits */
  av_trace_start_fn on_start; /* may be NULL; called before the first step, with the
                                 run's user pointer */
} av_trace_opts_t;

/* The defaults of `anvil trace`: H200-SXM, roofline, engine, heads 32,8 d128 fp16. */
void av_trace_opts_default(av_trace_opts_t *o);

/* One step. */
typedef struct av_trace_row {
  int32_t step, steps;     /* this step, and how many the trace has */
  int32_t requests, nodes, items;
  int reused;              /* 1: the previous plan grown; 0: planned afresh */
  double predicted_us, hbm_bytes, bubble_frac;
} av_trace_row_t;

/* Called once per step, in order; a non-zero return stops the run with that status (err
 * left for the callback to have filled). */
typedef int (*av_trace_row_fn)(const av_trace_row_t *row, void *user, av_error_t *err);

typedef struct av_trace_summary {
  int32_t steps, plans, reused;
  double total_us;         /* the steps' predicted times summed */
} av_trace_summary_t;

/* Loads the models, the GPU and the trace, checks the limits (unless no_limits), then plans
 * (or reuses) and simulates every step. `out` may be NULL. Messages name "trace" and the
 * option a user gave, as the `anvil` program prints them. */
int av_trace_run(const av_trace_opts_t *o, av_trace_row_fn on_row, void *user,
                 av_trace_summary_t *out, av_error_t *err);

#endif
