/* Measured-trace replay (`anvil replay`): a plan's measured per-CTA durations replayed
 * through the simulator's dispatch model, the replayed makespan set against the measured one
 * (the dispatch model's error alone); then the plan predicted with a cost model and its CTA
 * durations compared with the measured ones, launch by launch (the cost model's error). */
#ifndef ANVIL_REPLAY_H
#define ANVIL_REPLAY_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_replay_launch {
  int32_t ctas, ctas_per_sm;
  double waves, start_us, end_us;       /* replayed */
} anvil_replay_launch_t;

/* The replay; borrowed for the callback's call only. */
typedef struct anvil_replay_report {
  int32_t plan_items, plan_launches, kv_heads;
  int32_t cta_records, merge_records;   /* of the trace; merge_records 0: merge modelled */
  const char *trace_gpu;                /* the GPU the trace was recorded on */
  int32_t n_launches;
  const anvil_replay_launch_t *launches;
  double sm_busy_frac, bubble_frac;
  double measured_us, replayed_us, rel_err;
  int32_t timeline_ctas;                /* CTAs written to the timeline (0 without one) */
} anvil_replay_report_t;
typedef void (*anvil_replay_report_fn)(const anvil_replay_report_t *r, void *user);

typedef struct anvil_replay_options {
  const char *plan;                     /* the plan that was executed (required) */
  const char *trace;                    /* its measured per-CTA records (required) */
  const char *gpu;                      /* NULL: "H200-SXM"; must match the trace's "gpu" */
  const char *timeline;                 /* NULL, or where the replayed timeline is written */
  const char *cost_model;               /* NULL: "profile", skipped when the GPU has none */
  anvil_replay_report_fn on_report;     /* may be NULL; with anvil_replay's user pointer */
} anvil_replay_options_t;

/* One launch's CTA durations, predicted and measured (us). */
typedef struct anvil_replay_row {
  int32_t launch;                       /* plan launch; -1 for the merge launch */
  int32_t m_rows, n_tokens, warps;      /* the launch's tile; 0 for the merge launch */
  int32_t ctas;
  double pred_median_us, meas_median_us, ratio_median, pred_p90_us, meas_p90_us;
  double predicted_makespan_us;         /* the cost model's makespan of the plan, every row */
} anvil_replay_row_t;
/* Returns 0 to go on; any other value stops the run, which then returns ANVIL_ERR_USAGE. */
typedef int (*anvil_replay_row_fn)(const anvil_replay_row_t *row, void *user);

typedef struct anvil_replay_summary {
  int compared;                         /* 0: the default cost model could not be made */
  char not_compared[1024];              /* why not (with compared 0) */
  double predicted_us;                  /* the cost model's makespan (with compared 1) */
} anvil_replay_summary_t;

/* Replays and compares, calling on_report once and on_row (may be NULL) per compared launch;
 * fills *out (may be NULL). Errors are those `anvil replay` prints. */
int anvil_replay(const anvil_replay_options_t *o, anvil_replay_row_fn on_row, void *user,
                 anvil_replay_summary_t *out, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
