/* GPU executor: runs a plan on the real kernels. A batch (av_exec_batch_t) is one workload's
 * paged KV cache of random data on the device (pages shuffled, so no plan benefits from
 * contiguous blocks) with host copies kept for the fp64 reference; any number of plans run on
 * it: checked first, verified (outputs poisoned with NaN beforehand and fully written, error
 * against fp64 attention on sampled requests and heads, merge bitwise deterministic over two
 * runs), optionally traced per CTA, and timed with CUDA events (warm-up, median of repeats,
 * L2 flushed between repeats; a batch's plans with their repeats interleaved). Builds
 * without CUDA too: every entry point then returns AV_ERR_NODEVICE. */
#ifndef AV_EXECUTOR_H
#define AV_EXECUTOR_H

#include <jansson.h>
#include <stdint.h>

#include "proofs/proofs.h"
#include "core/error.h"
#include "core/plan.h"
#include "core/workload.h"

enum { AV_FLUSH_NONE = 0, AV_FLUSH_WRITE = 1, AV_FLUSH_READ = 2 };

typedef struct av_exec_opts {
  int warmup;               /* untimed runs before timing (default 3) */
  int repeats;              /* timed runs; the median is reported (>= 1; default 20) */
  int verify;               /* compare with the fp64 reference, check outputs written and
                               merge determinism (default 1) */
  int trace;                /* record per-CTA start/end and SM (default 0) */
  int flush_l2;             /* before each timed or traced run, evict L2 with a buffer twice its
                               size: AV_FLUSH_NONE, AV_FLUSH_WRITE (memset: L2 is left full of
                               dirty lines the plan's first reads must write back) or
                               AV_FLUSH_READ (read: L2 left clean; default) */
} av_exec_opts_t;

/* The defaults above. */
void av_exec_opts_default(av_exec_opts_t *o);

/* "none", "write" or "read" -> AV_FLUSH_*; -1 (mode untouched) for anything else. */
int av_exec_flush_parse(const char *s, int *mode);

typedef struct av_exec_result {
  char gpu[128];
  double median_us, min_us, max_us; /* timed runs: plan launches + merge */
  int repeats;
  /* Verification (when opts.verify). */
  int verified;
  double max_rel_err;       /* max over checked (request, q head) of |o - ref|_2 / |ref|_2 */
  int32_t worst_request, worst_head;
  int32_t checked;          /* (request, q head) pairs compared */
  int64_t unwritten;        /* output elements still NaN after the run (0 = fully written) */
  int deterministic;        /* two runs gave bitwise the same output */
  /* Figures. */
  double unique_kv_bytes;   /* the batch's floor numerator (all hkv heads, K and V) */
  int32_t ctas;             /* CTAs launched per KV head (items, or persistent grid) */
  json_t *trace;            /* opts.trace: {"gpu", "ctas": [...], "makespan_us"}; owned */
} av_exec_result_t;

/* Frees what a result owns (the trace). */
void av_exec_result_free(av_exec_result_t *r);

/* AV_OK when a CUDA device is usable; else AV_ERR_NODEVICE ("built without CUDA" or
 * "no CUDA device"). */
int av_exec_available(av_error_t *err);

typedef struct av_exec_batch av_exec_batch_t;

/* Builds w's paged KV cache and queries with random data (seeded) on the device and computes
 * the fp64 reference outputs of the sampled requests (up to max_check_requests, spread
 * evenly; 0 = 8) for three KV heads' whole GQA groups. A batch that does not fit in device
 * memory, or an unsupported head dim, is an error before any allocation. Caller owns. */
av_exec_batch_t *av_exec_batch_create(const av_workload_t *w, uint64_t seed,
                                      int max_check_requests, av_error_t *err);
void av_exec_batch_destroy(av_exec_batch_t *b);
/* The device's name ("NVIDIA H200"). */
const char *av_exec_batch_gpu(const av_exec_batch_t *b);
/* 1 when the batch's KV tiles are copied by TMA (sm_90, a KV block size that is a power of
 * two >= 8 and the KV copy "tma"), which the warp-specialised m128 tile needs; else 0. */
int av_exec_batch_tma(const av_exec_batch_t *b);
/* How the batch's kernels copy KV from here on: AV_KV_COPY_TMA (the default a batch is
 * created with) maps the cache for TMA where the hardware allows it, AV_KV_COPY_CP_ASYNC
 * drops the maps so every tile copies token-exact by cp.async (A/B runs, and the kernels the
 * simulator's "kv_copy": "cp_async" predicts). */
int av_exec_batch_set_kv_copy(av_exec_batch_t *b, av_kv_copy_t c, av_error_t *err);

/* Runs plan p (made for the batch's workload) as opts say. The plan is checked
 * (av_plan_check) and every launch's variant looked up before anything is launched. */
int av_exec_batch_run(av_exec_batch_t *b, const av_plan_t *p, const av_exec_opts_t *opts,
                      av_exec_result_t *out, av_error_t *err);

/* Times n plans of the batch (each checked and uploaded first; not verified or traced) with
 * their runs interleaved: every round runs each plan once, each run after the L2 flush, and
 * opts.warmup rounds go untimed. A disturbance of the GPU lasting a few runs so lands on a
 * few repeats of many plans, which their medians pass over, not on every repeat of one plan.
 * Plans whose partial states do not fit in device memory beside the earlier ones are timed
 * in a next group, the same way. outs[k] gets plan k's median, least and most time, CTAs and
 * the batch's figures. */
int av_exec_batch_time(av_exec_batch_t *b, const av_plan_t *const *plans, int n,
                       const av_exec_opts_t *opts, av_exec_result_t *outs, av_error_t *err);

/* One-shot: create, run, destroy. */
int av_exec_run(const av_plan_t *p, const av_workload_t *w, const av_exec_opts_t *opts,
                av_exec_result_t *out, av_error_t *err);

/* Measured device-to-device copy bandwidth (bytes read + written per second, median of
 * `reps` copies of `bytes`), the simulator's HBM bandwidth. */
int av_exec_copy_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err);
/* Measured read-only stream bandwidth (bytes read per second, median of `reps` reads of
 * `bytes`), the roofline floor's bandwidth (hbm_bw_read_GBps). */
int av_exec_read_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err);

#endif
