/* The fixed plan + simulate workload of the instruction-count guard (cli/bench.h): three
 * realistic batches (a 32k-token shared document, a conversation, a tree of thoughts) each
 * planned by three schedulers, proved exact and simulated once by the engine. Its own file,
 * so that callgrind's --toggle-collect on av_bench_workload_run counts exactly this work:
 * never inlined into its caller, and nothing path- or clock-dependent inside. */
#include <string.h>

#include "cli/bench.h"
#include "cli/bench_batches.h"
#include "cli/cli_util.h"
#include "sim/sim.h"

static const char *const k_batches[] = {"doc-32k", "conversation", "thoughts"};
static const char *const k_schedulers[] = {"query_centric", "greedy_division", "profit_pack"};
enum { N_BATCHES = 3, N_SCHED = 3 };

static const av_bench_batch_t *find_batch(const char *name) {
  for (int i = 0; i < av_bench_n_realistic; i++)
    if (strcmp(av_bench_realistic[i].name, name) == 0) return &av_bench_realistic[i];
  return NULL;
}

/* One batch: every scheduler, out[0..N_SCHED). */
static int run_batch(const av_bench_batch_t *b, const av_gpu_t *gpu, const av_variants_t *vs,
                     av_bench_workload_plan_t *out, av_error_t *err) {
  av_workload_t *w = NULL;
  av_costmodel_t *cost = NULL;
  int rc = av_bench_batch_with_cost(b, gpu, vs, &w, &cost, err);
  if (!w) return rc;
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE};
  for (int s = 0; s < N_SCHED && !rc; s++) {
    av_plan_t *p = NULL;
    av_sim_result_t r = {0};
    rc = av_bench_plan_checked(k_schedulers[s], w, gpu, vs, cost, &p, err);
    if (!rc) rc = av_sim_run(&cfg, &(av_sim_input_t){p, w, gpu, vs, cost}, &r, NULL, err);
    if (!rc) {
      out[s] = (av_bench_workload_plan_t){.batch = b->name, .scheduler = k_schedulers[s],
                                          .items = p->n_items, .makespan_us = r.makespan_us,
                                          .hbm_bytes = r.hbm_bytes};
      for (int32_t l = 0; l < r.n_launches; l++) out[s].ctas += r.launches[l].ctas;
    }
    av_sim_result_free(&r);
    av_plan_destroy(p);
  }
  av_costmodel_destroy(cost);
  av_workload_destroy(w);
  return rc;
}

int av_bench_workload_run(const av_gpu_t *gpu, const av_variants_t *vs,
                          av_bench_workload_plan_t *out, av_error_t *err) {
  _Static_assert(N_BATCHES * N_SCHED == AV_BENCH_WORKLOAD_PLANS, "plans of the workload");
  int rc = AV_OK;
  for (int i = 0; i < N_BATCHES && !rc; i++) {
    const av_bench_batch_t *b = find_batch(k_batches[i]);
    rc = b ? run_batch(b, gpu, vs, out + i * N_SCHED, err)
           : av_error_set(err, AV_ERR_INTERNAL, "bench workload", k_batches[i], "no such batch");
  }
  return rc;
}
