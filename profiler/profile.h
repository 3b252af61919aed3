/* The profiler (`anvil profile`, docs/validation.md): measures on the GPU what the simulator and
 * the `profile` cost model take as given — device copy bandwidth, kernel launch overhead,
 * each kernel variant's resident CTAs per SM, the rate and fixed cost of a lone CTA, and per
 * variant FlashForge §5.2's table C(n_q, n) of single-CTA times — and writes
 *   <out>.json         the profile, in the format profile_format/ reads and writes,
 *   <out>.spec.json    the GPU spec with the measured figures (gpus/ format),
 *   <out>.details.json every raw measurement and fit, for the record.
 * Host parts (workloads, plans, fits, files) work without a GPU and are unit-tested;
 * av_profile_measure needs one (profiler/measure_run.c). */
#ifndef AV_PROFILE_H
#define AV_PROFILE_H

#include <jansson.h>
#include <stdint.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"
#include "profile_format/profile_format.h"
#include "executor/executor.h"

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
/* Dispatch gaps from a trace (profiler/measure_dispatch.c): the mean refill gap of a grid's
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
 * from the first start to the last end (profiler/measure_trace.c). AV_ERR_INTERNAL when
 * none was traced. */
int av__profile_trace_stats(const json_t *trace, int32_t n_items, double *mean_us,
                            double *span_us, av_error_t *err);
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


/* --- measuring (needs a GPU) --------------------------------------------------------- */
typedef struct av_profile_opts {
  int head_dims[2], n_head_dims;         /* default {128, 64} */
  int dtypes[2], n_dtypes;               /* default {fp16, bf16} */
  int runs;                              /* traced runs per plan (mean; default 5) */
  int quick;                             /* fewer grid points (tests, smoke runs) */
  int verbose;                           /* progress lines on stderr */
  int coresidency;                       /* measure the co-residency curves (default 1) */
  const json_t *have;                    /* a profile document: tiles it has are skipped
                                            (av_profile_measure_tiles); NULL: none */
} av_profile_opts_t;
void av_profile_opts_default(av_profile_opts_t *o);

/* Measures everything on CUDA device 0 for GPU spec `gpu` (already matched to the device)
 * and the compiled variants of its architecture. */
int av_profile_measure(const av_gpu_t *gpu, const av_variants_t *vs,
                       const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);
/* Only the compiled tiles o->have lacks (a variant added to the kernels after the profile was
 * made): their C(n_q, n) tables, occupancy, co-residency curves and start waves, nothing of
 * the GPU-wide figures. out->cta_fixed_us must hold the profile's lone-CTA fixed cost (the
 * co-residency slowdown is taken against it). AV_ERR_RANGE when no tile is missing. */
int av_profile_measure_tiles(const av_gpu_t *gpu, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);
/* Finalizes and checks a profile plan built with every add succeeding (ok); else, or when
 * the check fails, destroys it and returns NULL with err set. */
av_plan_t *av__profile_finish_plan(av_plan_t *p, int ok, const av_workload_t *w,
                                   av_error_t *err);
/* The profile steps' traced runs (profiler/measure_trace.c): copies twice the L2's size so
 * the next run starts with a cold L2; the executor options of one traced, unverified,
 * untimed run. */
int av__profile_flush_l2(const av_gpu_t *g, av_error_t *err);
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
/* One merge plan's join (first merge CTA's start minus the last attention CTA's end, mean of
 * `runs` traced runs) and tail (timed median minus the mean traced span minus launch_us), as
 * p->launch_model issues it. */
int av__profile_join_tail(av_exec_batch_t *b, const av_gpu_t *g, const av_plan_t *p, int runs,
                          double launch_us, double *join_us, double *tail_us, av_error_t *err);
/* The graph launch model's figures (profiler/measure_graph.c): the same-stream gap, the
 * join and the tail with plans captured as CUDA graphs, into out->graph_*. */
int av_profile_measure_graph(const av_gpu_t *g, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);
/* The pdl launch model's join (profiler/measure_graph.c): the merge plans' join with the
 * merge a programmatic dependent launch, into out->pdl_join_us (0 before sm_90: not
 * measured). */
int av_profile_measure_pdl(const av_gpu_t *g, const av_variants_t *vs,
                           const av_profile_opts_t *o, av_profile_t *out, av_error_t *err);

#endif
