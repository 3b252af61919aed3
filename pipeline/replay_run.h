/* `anvil replay` as a library call: a measured per-CTA trace of a plan (format in
 * sim/replay.h) replayed through the simulator's dispatch model (measured durations fixed,
 * placement simulated), then the plan predicted with a cost model and its CTA durations set
 * beside the measured ones, launch by launch. The replay comes back through one callback, the
 * comparison's rows through another; nothing is printed. */
#ifndef AV_PIPELINE_REPLAY_RUN_H
#define AV_PIPELINE_REPLAY_RUN_H

#include <stdint.h>

#include "core/error.h"
#include "sim/sim.h"

/* The replay: the dispatch model's error alone. Borrowed for the callback's call only. */
typedef struct av_replay_report {
  int32_t plan_items, plan_launches, kv_heads;
  int32_t cta_records, merge_records;   /* of the trace; merge_records 0: merge modelled */
  const char *trace_gpu;                /* the GPU the trace was recorded on */
  int32_t n_launches;
  const av_sim_launch_result_t *launches;
  double sm_busy_frac, bubble_frac;
  double measured_us, replayed_us, rel_err;
  int32_t timeline_ctas;                /* CTAs written to the timeline (0 without one) */
} av_replay_report_t;
typedef void (*av_replay_report_fn)(const av_replay_report_t *r, void *user);

typedef struct av_replay_opts {
  const char *plan, *trace;   /* required */
  const char *gpu;            /* must match the trace's "gpu" */
  const char *timeline;       /* NULL, or where the replayed timeline goes (Chrome Trace) */
  const char *cost;           /* the model compared; NULL: "profile", and a profile this GPU
                                 lacks skips the comparison instead of failing */
  av_replay_report_fn on_report;  /* may be NULL; with the run's user pointer */
} av_replay_opts_t;

/* One launch's CTA durations, predicted and measured. */
typedef struct av_replay_row {
  int32_t launch;             /* plan launch; -1 for the merge launch */
  int32_t m_rows, n_tokens, warps;  /* the launch's tile; 0 for the merge launch */
  int32_t ctas;
  double pred_median_us, meas_median_us, ratio_median, pred_p90_us, meas_p90_us;
  double predicted_makespan_us;     /* the cost model's makespan of the plan, in every row */
} av_replay_row_t;
/* A non-zero return stops the run with that status (err filled by the callback). */
typedef int (*av_replay_row_fn)(const av_replay_row_t *row, void *user, av_error_t *err);

typedef struct av_replay_summary {
  int compared;               /* 0: the default cost model could not be made */
  char not_compared[1024];    /* why not (with compared 0) */
  double predicted_us;        /* the cost model's makespan (with compared 1) */
} av_replay_summary_t;

/* Replays and compares; `out` may be NULL. Messages name "replay" and the option a user
 * gave, as the `anvil` program prints them. */
int av_replay_measured(const av_replay_opts_t *o, av_replay_row_fn on_row, void *user,
                       av_replay_summary_t *out, av_error_t *err);

#endif
