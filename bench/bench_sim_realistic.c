/* `anvil bench sim`'s realistic set: the batches of cli/bench_batches.c (long shared
 * documents of 32k-128k tokens, a conversation, a tree of thoughts, speculative token trees)
 * planned by real schedulers with the roofline cost model, each plan proved exact and then
 * simulated by the event-driven engine through the public av_sim_run. Unlike the hand-built
 * short-node plans beside it, these CTAs read long KV ranges, so a simulator whose cost
 * grows with KV length shows it here (the doc-32k/64k/128k rows). */
#include <stdio.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/bench_batches.h"
#include "cli/cli_util.h"
#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "sim/sim.h"

enum { MAX_RUNS = 101 };

static const char *const k_schedulers[] = {"query_centric", "greedy_division",
                                           "streamk_balance", "profit_pack"};
enum { N_SCHED = (int)(sizeof k_schedulers / sizeof k_schedulers[0]) };

/* Figures of one simulated plan. */
typedef struct timed {
  int32_t items;
  int64_t ctas;
  double cpu_s, wall_s, makespan_us;
} timed_t;

int av_bench_batch_with_cost(const av_bench_batch_t *b, const av_gpu_t *gpu,
                             const av_variants_t *vs, av_workload_t **w, av_costmodel_t **cost,
                             av_error_t *err) {
  *cost = NULL;
  if (!(*w = av_bench_batch_build(b, err))) return err->code ? err->code : AV_ERR_INTERNAL;
  const av_costmodel_ops_t *roofline = av_costmodel_find("roofline");
  return roofline ? av_cli_cost_create(roofline, NULL, gpu, &(*w)->heads, vs, cost, err)
                  : av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "no roofline cost model");
}

int av_bench_plan_checked(const char *sched, const av_workload_t *w, const av_gpu_t *gpu,
                          const av_variants_t *vs, const av_costmodel_t *cost, av_plan_t **out,
                          av_error_t *err) {
  const av_scheduler_ops_t *ops = av_scheduler_find(sched);
  if (!ops)
    return av_error_set(err, AV_ERR_INTERNAL, "bench", sched, "no such scheduler");
  av_sched_ctx_t ctx = {.workload = w, .gpu = gpu, .variants = vs, .cost = cost};
  int rc = av_scheduler_plan(ops, NULL, &ctx, out, err);
  if (!rc && (rc = av_plan_check(*out, w, err))) {
    av_plan_destroy(*out);
    *out = NULL;
  }
  return rc;
}

/* Simulates p `runs` times; medians of thread CPU and wall time. */
static int time_sim(const av_plan_t *p, const av_workload_t *w, const av_gpu_t *gpu,
                    const av_variants_t *vs, const av_costmodel_t *cost, int runs, timed_t *out,
                    av_error_t *err) {
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE};
  double cpu[MAX_RUNS], wall[MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    av_sim_result_t r;
    memset(&r, 0, sizeof r);
    double w0 = av_bench_clock_s(CLOCK_MONOTONIC);
    double t0 = av_bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
    int rc = av_sim_run(&cfg, &(av_sim_input_t){p, w, gpu, vs, cost}, &r, NULL, err);
    cpu[i] = av_bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    wall[i] = av_bench_clock_s(CLOCK_MONOTONIC) - w0;
    if (rc) return rc;
    out->makespan_us = r.makespan_us;
    out->ctas = 0;
    for (int32_t l = 0; l < r.n_launches; l++) out->ctas += r.launches[l].ctas;
    av_sim_result_free(&r);
  }
  out->items = p->n_items;
  out->cpu_s = av_bench_median(cpu, runs);
  out->wall_s = av_bench_median(wall, runs);
  return AV_OK;
}

static void print_batch(const av_workload_t *w) {
  av_workload_stats_t st;
  av_workload_stats(w, &st);
  int64_t longest = 0;
  for (int32_t r = 0; r < w->n_requests; r++)
    if (w->request_kv_tokens[r] > longest) longest = w->request_kv_tokens[r];
  printf("\n## %s: %d requests, %d nodes, depth %d, unique KV %lld tokens, longest path %lld "
         "tokens, %d/%d heads\n",
         w->name, st.requests, st.nodes, st.depth, (long long)st.unique_kv_tokens,
         (long long)longest, w->heads.hq, w->heads.hkv);
  printf("%-16s %8s %9s %5s %10s %10s %13s %12s\n", "scheduler", "items", "ctas", "runs",
         "cpu_ms", "wall_ms", "ctas_per_s", "makespan_us");
}

/* One batch: every scheduler of the set; adds its CTAs and median seconds to the totals. */
static int bench_batch(const av_bench_batch_t *b, const av_gpu_t *gpu, const av_variants_t *vs,
                       int runs, double *ctas, double *secs, double *worst, av_error_t *err) {
  av_workload_t *w = NULL;
  av_costmodel_t *cost = NULL;
  int rc = av_bench_batch_with_cost(b, gpu, vs, &w, &cost, err);
  if (!w) return rc;
  if (!rc) print_batch(w);
  for (int s = 0; s < N_SCHED && !rc; s++) {
    av_plan_t *p = NULL;
    timed_t t = {0};
    rc = av_bench_plan_checked(k_schedulers[s], w, gpu, vs, cost, &p, err);
    if (!rc) rc = time_sim(p, w, gpu, vs, cost, runs, &t, err);
    av_plan_destroy(p);
    if (rc) break;
    double rate = t.cpu_s > 0 ? (double)t.ctas / t.cpu_s : 0;
    printf("%-16s %8d %9lld %5d %10.3f %10.3f %13.0f %12.1f\n", k_schedulers[s], t.items,
           (long long)t.ctas, runs, t.cpu_s * 1e3, t.wall_s * 1e3, rate, t.makespan_us);
    *ctas += (double)t.ctas;
    *secs += t.cpu_s;
    if (*worst < 0 || rate < *worst) *worst = rate;
  }
  av_costmodel_destroy(cost);
  av_workload_destroy(w);
  return rc;
}

int av_bench_sim_realistic(const av_gpu_t *gpu, const av_variants_t *vs, int runs,
                           double *rate, double *worst, av_error_t *err) {
  printf("\n# realistic batches (cli/bench_batches.c, fixed seeds): planned by");
  for (int s = 0; s < N_SCHED; s++) printf(" %s", k_schedulers[s]);
  printf(" with the roofline cost model, proved exact, then av_sim_run (engine model) %d "
         "times; speed = the plan's CTAs / median thread CPU time\n", runs);
  double ctas = 0, secs = 0;
  *worst = -1;
  int rc = AV_OK;
  for (int i = 0; i < av_bench_n_realistic && !rc; i++)
    rc = bench_batch(&av_bench_realistic[i], gpu, vs, runs, &ctas, &secs, worst, err);
  *rate = secs > 0 ? ctas / secs : 0;
  if (*worst < 0) *worst = 0;
  return rc;
}
