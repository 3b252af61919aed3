/* Decode traces (`anvil trace`): every step of a JSONL trace planned by one scheduler (or
 * its previous plan reused, PAT's lazy update) and predicted by the simulator, each step
 * handed to a callback as a row. */
#ifndef ANVIL_TRACE_H
#define ANVIL_TRACE_H

#include <stdint.h>

#include "anvil/error.h"
#include "anvil/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the run is, once the trace is loaded and within the limits; names borrowed for the
 * call only. */
typedef struct anvil_trace_start {
  int32_t steps;
  const char *scheduler, *cost_model, *sim, *gpu;
} anvil_trace_start_t;
typedef void (*anvil_trace_start_fn)(const anvil_trace_start_t *start, void *user);

typedef struct anvil_trace_options {
  const char *path;                    /* the trace (JSONL; docs/simulator.md) */
  const char *scheduler;               /* required (anvil list shows them) */
  const char *const *scheduler_params; /* "KEY=VALUE" each */
  int n_scheduler_params;
  const char *cost_model;              /* default "roofline" */
  const char *const *cost_params;      /* "KEY=VALUE" each */
  int n_cost_params;
  const char *gpu;                     /* GPU spec; default "H200-SXM" */
  const char *sim;                     /* "engine" (default) or "waves" */
  anvil_heads_t heads;                 /* for steps that name none; default 32,8 d128 fp16 */
  int no_limits;                       /* plan and simulate steps over the limits */
  anvil_trace_start_fn on_start;       /* may be NULL; called before the first step with
                                          anvil_trace's user pointer */
} anvil_trace_options_t;

/* The defaults above, no path, no scheduler. */
void anvil_trace_options_default(anvil_trace_options_t *o);

/* One step. */
typedef struct anvil_trace_row {
  int32_t step, steps;                 /* this step, and how many the trace has */
  int32_t requests, nodes, items;
  int reused;                          /* 1: the previous plan grown; 0: planned afresh */
  double predicted_us, hbm_bytes, bubble_frac;
} anvil_trace_row_t;

/* Returns 0 to go on; any other value stops the run, which then returns ANVIL_ERR_USAGE. */
typedef int (*anvil_trace_row_fn)(const anvil_trace_row_t *row, void *user);

typedef struct anvil_trace_summary {
  int32_t steps, plans, reused;
  double total_us;                     /* the steps' predicted times summed */
} anvil_trace_summary_t;

/* Runs the trace, calling on_row (may be NULL) for each step in order; fills *out (may be
 * NULL) at the end. Errors are those `anvil trace` prints. */
int anvil_trace(const anvil_trace_options_t *o, anvil_trace_row_fn on_row, void *user,
                anvil_trace_summary_t *out, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
