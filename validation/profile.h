/* The profiler (`anvil profile`, issue 6 item 1): measures on the GPU what the simulator and
 * the `profile` cost model take as given — device copy bandwidth, kernel launch overhead,
 * each kernel variant's resident CTAs per SM, the rate and fixed cost of a lone CTA, and per
 * variant FlashForge §5.2's table C(n_q, n) of single-CTA times — and writes
 *   <out>.json         the profile, in the format costmodels/profile.c reads,
 *   <out>.spec.json    the GPU spec with the measured figures (gpus/ format),
 *   <out>.details.json every raw measurement and fit, for the record.
 * Host parts (workloads, plans, fits, files) work without a GPU and are unit-tested;
 * av_profile_measure needs one (validation/profile_run.c). */
#ifndef AV_PROFILE_H
#define AV_PROFILE_H

#include <jansson.h>
#include <stdint.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"
#include "validation/executor.h"

#define AV_PROF_MAX_NQ 8
#define AV_PROF_MAX_KV 12
#define AV_PROF_MAX_K 16                 /* co-resident CTAs per SM measured, at most */
#define AV_PROF_CORES_KV 2048            /* KV tokens of every co-residency CTA */

/* One variant's measurements. */
typedef struct av_profile_table {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n_nq, n_kv;
  int32_t nq[AV_PROF_MAX_NQ];            /* query rows (GQA group 1: rows = queries) */
  int64_t kv[AV_PROF_MAX_KV];            /* KV tokens */
  double time_us[AV_PROF_MAX_NQ][AV_PROF_MAX_KV]; /* C(nq[i], kv[j]): one CTA alone */
  int occ_predicted;                     /* core/occupancy.c from kernels/variants.json */
  int occ_measured;                      /* most CTAs seen resident on one SM; -1 unmeasured */
} av_profile_table_t;

/* One variant's co-residency curve (docs/validation.md, "Co-residency"): grids of exactly k
 * identical one-query CTAs per SM (k x SMs CTAs in one launch), each over AV_PROF_CORES_KV
 * tokens, L2 flushed first; mean per-CTA duration from the trace. Two batches per k:
 * "shared" (every CTA reads the same KV, which stays in L2 after the first touch: HBM cannot
 * be the bottleneck, so what remains is the SM's own contention) and "hbm" (every CTA its
 * own KV: adds HBM saturation at large k). The engine uses the shared curve; HBM is its
 * water level's business. */
typedef struct av_profile_cores {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n_k;                               /* k = 1 .. n_k (the variant's occupancy) */
  double dur_us[AV_PROF_MAX_K];          /* shared KV: mean CTA duration at k = i + 1 */
  double slowdown[AV_PROF_MAX_K];        /* (dur - fixed) / (dur at k=1 - fixed) */
  double hbm_dur_us[AV_PROF_MAX_K];      /* own KV: mean CTA duration */
  double hbm_GBps[AV_PROF_MAX_K];        /* own KV: all CTAs' KV bytes / launch span */
  int resident[AV_PROF_MAX_K];           /* most CTAs seen at once on one SM (shared run) */
} av_profile_cores_t;

#define AV_PROF_MAX_MERGE 12             /* slot counts measured per merge curve */
#define AV_PROF_MERGE_SEG 16             /* KV tokens of each measured partial item */

/* The merge kernel alone (validation/profile_merge.c): one request of `slots` partial states
 * per query head, one merge CTA of `rows` (request, query head) rows; mean traced duration. */
typedef struct av_profile_merge {
  int head_dim;
  av_dtype_t dtype;
  int rows;                              /* rows per merge CTA (all of them busy) */
  int n;
  int32_t slots[AV_PROF_MAX_MERGE];
  double time_us[AV_PROF_MAX_MERGE];     /* the partial states still in L2 */
  double time_cold_us[AV_PROF_MAX_MERGE]; /* evicted first (av_profile_merge_cold_workload);
                                            0: not measured */
} av_profile_merge_t;

#define AV_PROF_QUEUE_ITEMS 8             /* items in each measured queue */
#define AV_PROF_MAX_QUEUE 8              /* persistent variants with a queue curve */
#define AV_PROF_QUEUE_PTS 3              /* item lengths per curve */

/* One persistent variant's queue curve (validation/profile_queue.c): persistent CTAs whose
 * queues hold AV_PROF_QUEUE_ITEMS one-query items each, every item over its own root of kv[i]
 * tokens, L2 flushed; from the trace, the mean time of a queue's first item (from its CTA's
 * start) and of the others (each from the previous item's end). Once with one CTA alone on
 * the GPU, once with a full wave (loaded_ctas: SMs x the variant's occupancy), which is how
 * the schedulers launch persistent grids. */
typedef struct av_profile_queue {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n;
  int64_t kv[AV_PROF_QUEUE_PTS];
  double first_us[AV_PROF_QUEUE_PTS], next_us[AV_PROF_QUEUE_PTS];
  int loaded_ctas;
  double loaded_first_us[AV_PROF_QUEUE_PTS], loaded_next_us[AV_PROF_QUEUE_PTS];
} av_profile_queue_t;

#define AV_PROF_START_KV 2                /* item lengths of the start step */
#define AV_PROF_START_ROWS 2              /* query rows of the start step: 1 and the tile's m */

/* One variant's first-wave start waves (validation/profile_start.c, docs/validation.md
 * "The first-wave start cost"): per k = 1 .. the variant's occupancy one launch of k x SMs
 * one-item CTAs, each item over its own root of kv[j] tokens with rows[r] queries (GQA group
 * 1), L2 flushed; the mean traced CTA duration. Against C(rows, kv) (the same CTA alone) it
 * gives what starting together with the others costs beyond the bandwidth they share. */
typedef struct av_profile_start {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n_k;                               /* waves k = 1 .. n_k */
  int32_t ctas[AV_PROF_MAX_K];           /* k x SMs */
  int n_rows;
  int32_t rows[AV_PROF_START_ROWS];
  int64_t kv[AV_PROF_START_KV];
  double dur_us[AV_PROF_MAX_K][AV_PROF_START_ROWS][AV_PROF_START_KV];
} av_profile_start_t;

typedef struct av_profile {
  char gpu[64];                          /* spec name, e.g. "H200-SXM" */
  char device[256];                      /* the driver's name */
  char command[512];
  double copy_GBps;                      /* read + write bytes / s, median */
  double launch_us, launch_r2;           /* per-launch time on one stream (slope) and fit */
  double lone_GBps, cta_fixed_us, lone_r2; /* one CTA: KV bytes / slope, intercept, fit */
  double tensor_tflops;                  /* one CTA's mma rate x SMs (largest-m partial tile
                                            at its largest C); 0 when it was memory-bound */
  int n, cap;
  av_profile_table_t *t;
  int n_cores;                           /* co-residency curves (0: step not run) */
  av_profile_cores_t *cores;             /* owned */
  int n_merge;                           /* merge curves (0: step not run) */
  av_profile_merge_t merge[4];           /* per (head dim, dtype) profiled */
  double empty_cta_us;                   /* a persistent CTA with no work: its time in one
                                            CTA slot (0: not measured) */
  double empty_slope_us;                 /* the measured time per added empty CTA */
  int n_queue;                           /* queue curves (0: step not run) */
  av_profile_queue_t queue[AV_PROF_MAX_QUEUE];
  double join_us;                        /* last attention CTA's end -> first merge CTA */
  double tail_us;                        /* last CTA's end -> the run's end event */
  double refill_us;                      /* grid CTA: previous CTA's end -> its traced start
                                            on the slot, mean over the occupancy grids (0: none) */
  double launch_gap_us;                  /* one stream: a launch's last CTA end -> the next
                                            launch's first CTA start, traced (0: not measured) */
  int n_start;                           /* start-wave measurements (0: step not run) */
  av_profile_start_t *start;             /* owned */
} av_profile_t;

void av_profile_free(av_profile_t *p);
/* Appends a zeroed table; NULL when out of memory. */
av_profile_table_t *av_profile_add(av_profile_t *p);

/* --- host helpers -------------------------------------------------------------------- */
/* Measurement batch: one root per entry of kv (that many tokens), n_q requests ending at
 * each root, one KV head and one query head (GQA group 1) of head_dim/dtype, so an item over
 * one root has exactly n_q query rows. Caller owns. */
av_workload_t *av_profile_workload(int32_t n_q, const int64_t *kv, int32_t n_roots,
                                   int head_dim, av_dtype_t dtype, av_error_t *err);
/* A plan for that batch with `tile`: one item per root (all its queries, the whole root;
 * FINAL output for decode tiles, partial states otherwise; persistent tiles as a one-CTA
 * persistent grid per item). serial: one launch per item, all on stream 0 (every CTA runs
 * alone); else one launch for all items (a persistent tile gets one CTA per item). Finalized
 * and checked. Caller owns. */
av_plan_t *av_profile_plan(const av_workload_t *w, const av_tile_t *tile, int serial,
                           av_error_t *err);
/* The most attention CTAs resident at once on one SM in a measured trace ({"ctas": [{"sm",
 * "start_us", "end_us"}, ...]}, the executor's format; merge records, item -1, are not
 * counted); ends are exclusive. */
int av_profile_max_resident(const json_t *trace, int *out, av_error_t *err);
/* Dispatch gaps from a trace (validation/profile_dispatch.c): the mean refill gap of a grid's
 * CTAs in their SM slots (*n refills), and the mean gap between consecutive launches of one
 * stream of plan p. */
int av_profile_refill_gap(const json_t *trace, double *mean_us, int32_t *n, av_error_t *err);
int av_profile_stream_gap(const json_t *trace, const av_plan_t *p, double *mean_us,
                          av_error_t *err);
/* Co-residency batch: one root of kv tokens and n_req one-query requests on it (shared), or
 * n_req roots of kv tokens with one request each (!shared); one KV and one query head.
 * Caller owns. */
av_workload_t *av_profile_cores_workload(int32_t n_req, int64_t kv, int shared, int head_dim,
                                         av_dtype_t dtype, av_error_t *err);
/* One launch of `tile` with one item per request (the request's whole path); a persistent
 * tile gets one CTA per item. Finalized and checked. Caller owns. */
av_plan_t *av_profile_cores_plan(const av_workload_t *w, const av_tile_t *tile,
                                 av_error_t *err);
/* The rate slowdown at each k from mean durations: (dur[k] - fixed) / (dur[1] - fixed),
 * fixed clamped to [0, dur[1] / 2] (the lone CTA's fixed cost is not slowed by the engine).
 * AV_ERR_RANGE when a duration is not positive. */
int av_profile_cores_slowdown(const double *dur_us, int n_k, double fixed_us, double *out,
                              av_error_t *err);
/* Mean duration of a trace's attention CTAs (items 0 .. n_items-1, any head) and the span
 * from the first start to the last end. AV_ERR_INTERNAL when none was traced. */
int av__profile_trace_stats(const json_t *trace, int32_t n_items, double *mean_us,
                            double *span_us, av_error_t *err);
/* The "start" key of the profile file (costmodels/profile_start.h reads it). Caller owns. */
json_t *av_profile_start_json(const av_profile_t *p);
/* Least-squares line y = c0 + c1 x (GSL gsl_fit_linear) and its R^2. n >= 2. */
int av_profile_fit_line(const double *x, const double *y, int n, double *c0, double *c1,
                        double *r2, av_error_t *err);

/* Merge batch: one root of slots x AV_PROF_MERGE_SEG tokens, one request, `rows` query heads
 * on one KV head (so the merge runs exactly one CTA of `rows` rows). Caller owns. */
av_workload_t *av_profile_merge_workload(int32_t slots, int rows, int head_dim,
                                         av_dtype_t dtype, av_error_t *err);
/* The same merge subject (node and request 0) plus `streamers` requests 1..streamers, each on
 * its own root of `stream_tokens` tokens: read after request 0's partial states are written,
 * their KV (streamers x stream_tokens tokens, more than L2) evicts those states, so the merge
 * reads them from HBM, as it does after a large attention phase. Caller owns. */
av_workload_t *av_profile_merge_cold_workload(int32_t slots, int rows, int head_dim,
                                              av_dtype_t dtype, int32_t streamers,
                                              int64_t stream_tokens, av_error_t *err);
/* One launch of the partial `tile`: item j reads tokens [j, j+1) x AV_PROF_MERGE_SEG of the
 * root into partial slot j; the merge then combines `slots` states per row. Streamer roots
 * (a cold workload's nodes 1..) follow as one final-output item each, after request 0's
 * items in dispatch order. Caller owns. */
av_plan_t *av_profile_merge_plan(const av_workload_t *w, const av_tile_t *tile,
                                 av_error_t *err);
/* One persistent launch of `ctas` CTAs whose only item (the batch's first root, all of it)
 * is CTA 0's: every other CTA starts, finds an empty queue and exits. Caller owns. */
av_plan_t *av_profile_empty_plan(const av_workload_t *w, const av_tile_t *tile, int32_t ctas,
                                 av_error_t *err);
/* The "merge" key of the profile file (costmodels/profile_merge.h reads it). Caller owns. */
json_t *av_profile_merge_json(const av_profile_t *p);
/* One persistent launch of `ctas` CTAs; item r = every query of root r over the whole root
 * (partial output), at position r mod (roots / ctas) of CTA r / (roots / ctas). The roots
 * must divide evenly. Caller owns. */
av_plan_t *av_profile_queue_plan(const av_workload_t *w, const av_tile_t *tile, int32_t ctas,
                                 av_error_t *err);
/* From one traced run of such a plan (the executor's {"ctas": [...]}, one record per item,
 * head 0): the mean duration of the queues' first items (position 0) and of the others.
 * AV_ERR_RANGE when an item's record is missing or a queue has fewer than 2 items. */
int av_profile_queue_times(const json_t *trace, int32_t n_items, int32_t per_queue,
                           double *first_us, double *next_us, av_error_t *err);


/* --- files --------------------------------------------------------------------------- */
/* The profile document (docs/schedulers.md "The profile file"). Caller owns. */
json_t *av_profile_to_json(const av_profile_t *p);
/* Every measurement, fit and occupancy comparison. Caller owns. */
json_t *av_profile_details_json(const av_profile_t *p);
/* spec (a gpus/<name>.json document) with the measured figures of p and their sources:
 * hbm_bw_measured_GBps, launch_overhead_us, cta_fixed_us, bytes_in_flight_per_sm (lone-CTA
 * rate x the spec's latency: Little's law, as the engine uses it) and fp16_tensor_tflops
 * (the rate the kernels' mma.sync loop reaches, when measured). Caller owns. */
json_t *av_profile_calibrate_spec(const json_t *spec, const av_profile_t *p, const char *date);
/* Writes <base>.json, <base>.spec.json and <base>.details.json (base: out path without
 * ".json"); the spec is calibrated from spec_path. All three or none. */
int av_profile_write(const av_profile_t *p, const char *out_path, const char *spec_path,
                     av_error_t *err);
/* Loads a calibrated spec (<base>.spec.json); its name is the GPU's ("H200-SXM"), not the
 * file stem, so the profile cost model and replays accept it as that GPU. */
int av_profile_load_spec(const char *path, av_gpu_t *out, av_error_t *err);

/* --- measuring (needs a GPU) --------------------------------------------------------- */
typedef struct av_profile_opts {
  int head_dims[2], n_head_dims;         /* default {128, 64} */
  int dtypes[2], n_dtypes;               /* default {fp16, bf16} */
  int runs;                              /* traced runs per plan (mean; default 5) */
  int quick;                             /* fewer grid points (tests, smoke runs) */
  int verbose;                           /* progress lines on stderr */
  int coresidency;                       /* measure the co-residency curves (default 1) */
} av_profile_opts_t;
void av_profile_opts_default(av_profile_opts_t *o);

/* Measures everything on CUDA device 0 for GPU spec `gpu` (already matched to the device)
 * and the compiled variants of its architecture. */
int av_profile_measure(const av_gpu_t *gpu, const av_variants_t *vs,
                       const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);
/* Finalizes and checks a profile plan built with every add succeeding (ok); else, or when
 * the check fails, destroys it and returns NULL with err set. */
av_plan_t *av__profile_finish_plan(av_plan_t *p, int ok, const av_workload_t *w,
                                   av_error_t *err);
/* Copies twice the L2's size so the next run starts with a cold L2 (profile steps). */
int av__profile_flush_l2(const av_gpu_t *g, av_error_t *err);
/* Executor options of one traced, unverified, untimed run (the profiler's measurements). */
void av__profile_traced_opts(av_exec_opts_t *o);
/* Measures the queue curve of every persistent variant at d 128 fp16 on device 0. */
int av_profile_measure_queue(const av_gpu_t *g, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);
/* Measures the start waves of every d 128 fp16 variant on device 0 (after the occupancy). */
int av_profile_measure_start(const av_gpu_t *g, const av_profile_opts_t *o, av_profile_t *out,
                             av_error_t *err);
/* Measures the merge curves (every head dim and dtype of o) and the empty persistent CTA
 * (d 128 fp16) on device 0. */
int av_profile_measure_merge(const av_gpu_t *g, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);

#endif
