/* What the `anvil bench` benchmarks share: timing helpers (CPU time of the calling thread,
 * which other processes on a shared machine do not inflate), and the realistic simulator
 * benchmark and fixed workload beside `anvil bench sim`. */
#ifndef AV_CLI_BENCH_H
#define AV_CLI_BENCH_H

#include <time.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/variants.h"

/* Seconds on clock `id` (CLOCK_MONOTONIC for wall, CLOCK_THREAD_CPUTIME_ID for CPU). */
double av_bench_clock_s(clockid_t id);
/* The median of v[0..n) (n >= 1); sorts v. */
double av_bench_median(double *v, int n);
/* The process's peak resident set so far, in KiB. */
long av_bench_maxrss_kib(void);

/* `anvil bench sim`'s realistic set (cli/bench_sim_realistic.c): every batch of
 * av_bench_realistic planned by each scheduler of the set, each plan simulated `runs` times
 * by the engine; prints a table per batch. *rate gets all plans' CTAs over the sum of their
 * median times, *worst the slowest plan's CTAs/s. */
int av_bench_sim_realistic(const av_gpu_t *gpu, const av_variants_t *vs, int runs,
                           double *rate, double *worst, av_error_t *err);

#endif
