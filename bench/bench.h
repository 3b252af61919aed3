/* What the `anvil bench` benchmarks share: timing helpers (CPU time of the calling thread,
 * which other processes on a shared machine do not inflate), and the realistic simulator
 * benchmark and fixed workload beside `anvil bench sim`. */
#ifndef AV_CLI_BENCH_H
#define AV_CLI_BENCH_H

#include <time.h>

#include "costmodels/costmodel.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"

/* Seconds on clock `id` (CLOCK_MONOTONIC for wall, CLOCK_THREAD_CPUTIME_ID for CPU). */
double av_bench_clock_s(clockid_t id);
/* The median of v[0..n) (n >= 1); sorts v. */
double av_bench_median(double *v, int n);
/* The process's peak resident set so far, in KiB. */
long av_bench_maxrss_kib(void);

struct av_bench_batch;
/* Builds batch b (cli/bench_batches.h) and the roofline cost model the benchmarks plan it
 * with. Caller owns *w (av_workload_destroy) and *cost (av_costmodel_destroy), also on error. */
int av_bench_batch_with_cost(const struct av_bench_batch *b, const av_gpu_t *gpu,
                             const av_variants_t *vs, av_workload_t **w, av_costmodel_t **cost,
                             av_error_t *err);
/* Plans w with the scheduler named `sched` (default parameters) and proves the plan exact.
 * Caller owns *out (av_plan_destroy). */
int av_bench_plan_checked(const char *sched, const av_workload_t *w, const av_gpu_t *gpu,
                          const av_variants_t *vs, const av_costmodel_t *cost, av_plan_t **out,
                          av_error_t *err);

/* `anvil bench sim`'s realistic set (cli/bench_sim_realistic.c): every batch of
 * av_bench_realistic planned by each scheduler of the set, each plan simulated `runs` times
 * by the engine; prints a table per batch. *rate gets all plans' CTAs over the sum of their
 * median times, *worst the slowest plan's CTAs/s. */
int av_bench_sim_realistic(const av_gpu_t *gpu, const av_variants_t *vs, int runs,
                           double *rate, double *worst, av_error_t *err);

/* The fixed plan + simulate workload whose instruction count the CTest
 * valgrind_instruction_count guards (cli/bench_workload.c): AV_BENCH_WORKLOAD_PLANS plans of
 * realistic batches, one of them under a 32k-token document, each planned, proved exact and
 * simulated once by the engine. Deterministic: no clocks, no threads. */
enum { AV_BENCH_WORKLOAD_PLANS = 9 };
typedef struct av_bench_workload_plan {
  const char *batch, *scheduler;
  int32_t items;
  int64_t ctas;
  double makespan_us, hbm_bytes;
} av_bench_workload_plan_t;
/* Fills out[0..AV_BENCH_WORKLOAD_PLANS). Callgrind counts from this function's entry
 * (--toggle-collect=av_bench_workload_run), so it stays out of line in its own file. */
int av_bench_workload_run(const av_gpu_t *gpu, const av_variants_t *vs,
                          av_bench_workload_plan_t *out, av_error_t *err);

#endif
