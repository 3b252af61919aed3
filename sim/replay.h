/* Trace-driven replay: measured per-CTA durations pushed through the simulator's dispatch
 * model (durations fixed, placement simulated), so the error of the dispatch model (launch
 * overheads, streams, occupancy, wave/tail effects) is separated from the cost model's.
 *
 * Measured trace format (what the GPU executor writes, `anvil exec --cta-trace`):
 *   {
 *     "gpu": "H200-SXM",              GPU spec name the trace was recorded on
 *     "makespan_us": 812.4,           measured time of the whole plan (all launches + merge,
 *                                     CUDA events around them), >= 0
 *     "ctas": [                       one record per executed CTA
 *       {"item": 12,                  plan item (0 .. items-1); -1 for a merge-kernel CTA
 *        "head": 3,                   KV head (0 .. hkv-1); any for merge CTAs
 *        "sm": 17,                    SM id the CTA ran on (%smid), >= 0
 *        "start_us": 10.2,            start and end on one clock (globaltimer), end >= start
 *        "end_us": 14.9}, ...]
 *   }
 * Every (item, head) of the plan appears exactly once (persistent launches: one record per
 * item executed by a persistent CTA). Merge records are optional: when there is one per
 * merge-kernel CTA, in the kernel's CTA order (as the executor writes them), each simulated
 * merge CTA takes the measured duration of the kernel CTAs covering its rows; other counts
 * give every merge CTA their median; without them the merge phase is modelled. Unknown
 * keys, unknown items, heads out of range and end < start are rejected with the key path
 * (`ctas[12].end_us`). */
#ifndef AV_REPLAY_H
#define AV_REPLAY_H

#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "core/variants.h"
#include "core/workload.h"

typedef struct av_replay_trace {
  char gpu[64];
  double makespan_us;
  int32_t n;                   /* records */
  av_cta_event_t *ctas;        /* item, head, sm, start_us, end_us (launch from the plan) */
  double *durations_us;        /* plan items x hkv: measured duration of (item, head) */
  int32_t merge_records;
  double *merge_us;            /* merge_records: durations in record order, which is the merge
                                  kernel's CTA order (executor traces) */
  double merge_median_us;      /* median merge-CTA duration; 0 when none were recorded */
} av_replay_trace_t;

/* Loads and validates a measured trace against plan p. Caller owns *out
 * (av_replay_trace_free). */
int av_replay_load(const char *path, const av_plan_t *p, av_replay_trace_t *out,
                   av_error_t *err);
void av_replay_trace_free(av_replay_trace_t *t);

typedef struct av_replay_result {
  double measured_us, replayed_us;
  double rel_err;              /* (replayed - measured) / measured; 0 when measured is 0 */
  double measured_cta_us;      /* sum of measured CTA durations (partial items) */
  av_sim_result_t sim;         /* the replay's simulator result (owned: av_replay_result_free) */
} av_replay_result_t;

/* Replays trace t of plan p (for workload w) on gpu: every CTA takes its measured duration,
 * the engine places them. tl (optional, zero-initialised) receives the replayed timeline. */
int av_replay_run(const av_replay_trace_t *t, const av_plan_t *p, const av_workload_t *w,
                  const av_gpu_t *gpu, const av_variants_t *variants, av_replay_result_t *out,
                  av_timeline_t *tl, av_error_t *err);
void av_replay_result_free(av_replay_result_t *r);

/* The cost model's error, launch by launch: the measured CTA durations of trace t against
 * those the simulator predicted for the same plan (timeline pred of an av_sim_run with the
 * cost model). One row per plan launch, then one for the merge launch when the trace or the
 * prediction has merge CTAs. Item CTAs are paired by (item, head), so ratio_median is the
 * median of each CTA's measured / predicted; merge CTAs cannot be paired (several share a
 * head), so their row compares the two distributions (ratio_median = the medians' ratio). */
typedef struct av_replay_cta_cmp {
  int32_t launch;              /* plan launch; -1 for the merge launch */
  int32_t ctas;                /* item CTAs paired; merge: measured merge CTAs */
  double pred_median_us, meas_median_us, ratio_median;
  double pred_p90_us, meas_p90_us;
} av_replay_cta_cmp_t;

/* Fills *out (caller frees) with *n rows. */
int av_replay_compare(const av_replay_trace_t *t, const av_plan_t *p, const av_timeline_t *pred,
                      av_replay_cta_cmp_t **out, int32_t *n, av_error_t *err);

#endif
