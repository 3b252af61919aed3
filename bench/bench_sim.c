/* `anvil bench sim`: simulator speed, on two sets of plans.
 *
 * Short nodes: synthetic plans of about 1k, 10k, 100k and 1M CTAs on a GPU spec (default
 * H200-SXM) — a two-level batch B=[R/16, R] L=[1024, 256] with 32/8 heads, planned by hand
 * PAT-style (one CTA per shared node over its 16 queries on one stream, one CTA per request's
 * own node on another, then the merge) so the figure does not depend on any scheduler — and
 * the event-driven engine timed on each (median of several runs). CTAs counted are the plan's
 * (items x heads); the merge CTAs the engine also runs (one per request and head) are extra
 * work in the timing, not in the count. Summary `sim_ctas_per_s=<median over sizes >= 10k>`.
 *
 * Realistic batches (cli/bench_sim_realistic.c): long shared documents, a conversation and
 * trees planned by real schedulers, whose CTAs read long KV ranges. Summary
 * `sim_realistic_ctas_per_s=` (all plans' CTAs over their summed median times) and the
 * slowest plan's figure. Target for both: >= 5,000,000 CTAs/s on one core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "sim/engine_internal.h"
#include "core/plan.h"
#include "core/variants.h"

enum { OPT_RUNS = 256, OPT_MAX = 257, OPT_SET = 258, MAX_RUNS = 101 };

static const av_cli_opt_t k_opts[] = {
    {"gpu", 'g', "NAME", "GPU spec to simulate (default H200-SXM)"},
    {"runs", OPT_RUNS, "N", "timed runs per size (default 5; median; 1M CTAs gets (N+1)/2)"},
    {"max-ctas", OPT_MAX, "N", "largest short-node size to run (default 1000000)"},
    {"set", OPT_SET, "SET", "short (hand-built short-node plans), realistic (scheduled plans of "
                            "realistic batches) or all (default)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

static const av_tile_t k_shared_tile = {AV_KERNEL_PARTIAL, 64, 64, 4};
static const av_tile_t k_leaf_tile = {AV_KERNEL_PARTIAL, 16, 64, 4};

/* Resources of the two tiles when kernels/variants.json is absent (no CUDA build): 4 warps,
 * 128 registers, shared memory = Q tile + double-buffered K and V tiles in fp16. */
static av_variant_t k_fallback[2];
static av_variants_t k_fallback_vs = {2, k_fallback};
static void fill_fallback(int sm_arch) {
  const av_tile_t *t[2] = {&k_shared_tile, &k_leaf_tile};
  for (int i = 0; i < 2; i++)
    k_fallback[i] = (av_variant_t){.tile = *t[i], .head_dim = 128, .dtype = AV_DTYPE_FP16,
                                   .sm_arch = sm_arch, .threads = 128, .regs_per_thread = 128,
                                   .smem_bytes = (t[i]->m_rows + 4 * t[i]->n_tokens) * 128 * 2};
}

/* The synthetic batch and its hand-built plan for about `ctas` CTAs (x 8 KV heads). */
static int build(int64_t ctas, av_workload_t **w_out, av_plan_t **p_out, av_error_t *err) {
  av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  int64_t items = ctas / h.hkv;
  int64_t R = items * 16 / 17 / 16 * 16;
  if (R < 16) R = 16;
  int64_t B[2] = {R / 16, R}, L[2] = {1024, 256};
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, err);
  if (!w) return err->code;
  av_plan_t *p = av_plan_create(w, "bench");
  int32_t a = p ? av_plan_add_launch(p, 0, &k_shared_tile, 0) : -1;
  int32_t b = p ? av_plan_add_launch(p, 1, &k_leaf_tile, 0) : -1;
  int ok = a >= 0 && b >= 0;
  for (int32_t u = 0; ok && u < w->n_nodes; u++) {
    const av_node_t *n = &w->nodes[u];
    av_segment_t sg = {u, 0, n->kv_len_tokens};
    const int32_t *q = w->node_reqs + w->node_req_offsets[u];
    int32_t nq = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
    ok = av_plan_add_item(p, n->parent < 0 ? a : b, (av_item_work_t){q, nq, &sg, 1}, AV_OUT_PARTIAL,
                          -1, -1) >= 0;
  }
  if (!ok || av_plan_finalize(p, err)) {
    if (!ok) av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory building the plan");
    av_plan_destroy(p);
    av_workload_destroy(w);
    return err->code;
  }
  *w_out = w;
  *p_out = p;
  return AV_OK;
}

/* Times the engine on one size and prints its line; *rate receives CTAs per second. */
static int bench_size(int64_t target, const av_gpu_t *gpu, const av_variants_t *vs, int runs,
                      double *rate, av_error_t *err) {
  av_workload_t *w = NULL;
  av_plan_t *p = NULL;
  long rss0 = av_bench_maxrss_kib();
  int rc = build(target, &w, &p, err);
  if (rc) return rc;
  av__engine_in_t in = {.plan = p, .workload = w, .gpu = gpu, .variants = vs};
  double t[MAX_RUNS], wall[MAX_RUNS], makespan = 0;
  int64_t ctas = 0;
  size_t bytes = 0;
  for (int i = 0; i < runs && !rc; i++) {
    av_sim_result_t r;
    double w0 = av_bench_clock_s(CLOCK_MONOTONIC), t0 = av_bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
    rc = av__engine_run(&in, &r, NULL, &bytes, err);
    t[i] = av_bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    wall[i] = av_bench_clock_s(CLOCK_MONOTONIC) - w0;
    if (rc) break;
    makespan = r.makespan_us;
    ctas = 0;
    for (int32_t l = 0; l < r.n_launches; l++) ctas += r.launches[l].ctas;
    av_sim_result_free(&r);
  }
  if (!rc) {
    double med = av_bench_median(t, runs), wmed = av_bench_median(wall, runs);
    *rate = (double)ctas / med;
    printf("%10lld %9d %5d %11.3f %11.3f %13.0f %12.1f %11.2f %12.1f\n", (long long)ctas,
           p->n_items, runs, med * 1e3, wmed * 1e3, *rate, makespan, (double)bytes / (1 << 20),
           (double)(av_bench_maxrss_kib() - rss0) / 1024);
  }
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

enum { SET_SHORT = 1, SET_REALISTIC = 2 };

typedef struct opts {
  const char *gpu;
  int64_t runs, max_ctas;
  int sets; /* SET_* bits */
} opts_t;

static int parse_set(const char *v, int *sets, av_error_t *err) {
  if (strcmp(v, "short") == 0)
    *sets = SET_SHORT;
  else if (strcmp(v, "realistic") == 0)
    *sets = SET_REALISTIC;
  else if (strcmp(v, "all") == 0)
    *sets = SET_SHORT | SET_REALISTIC;
  else
    return av_error_set(err, AV_ERR_USAGE, "bench sim", "--set",
                        "unknown set '%s'; expected short, realistic or all", v);
  return AV_OK;
}

static int parse(int argc, char **argv, opts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k, rc;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 'g': o->gpu = v; break;
      case OPT_RUNS:
        if ((rc = av_cli_parse_int("bench sim", "--runs", v, 1, MAX_RUNS, &o->runs, err)))
          return rc;
        break;
      case OPT_MAX:
        if ((rc = av_cli_parse_int("bench sim", "--max-ctas", v, 1000, 100000000, &o->max_ctas,
                                   err)))
          return rc;
        break;
      case OPT_SET:
        if ((rc = parse_set(v, &o->sets, err))) return rc;
        break;
      default:
        return av_error_set(err, AV_ERR_USAGE, "bench sim", v ? v : "",
                            "unexpected argument; see anvil bench sim --help");
    }
  }
  return AV_OK;
}

/* The short-node set: the hand-built plans of every size up to --max-ctas; *med gets the
 * median CTAs/s over the sizes >= 10k. */
static int run_short(const av_gpu_t *gpu, const av_variants_t *loaded, const opts_t *o,
                     double *med, av_error_t *err) {
  const av_variants_t *vs = loaded;
  if (!vs || !av_variants_find(vs, &k_shared_tile, 128, AV_DTYPE_FP16, gpu->sm_arch) ||
      !av_variants_find(vs, &k_leaf_tile, 128, AV_DTYPE_FP16, gpu->sm_arch)) {
    fill_fallback(gpu->sm_arch);
    vs = &k_fallback_vs;
  }
  int runs = (int)o->runs;
  printf("# short nodes: batch B=[R/16,R] L=[1024,256] 32/8 heads d128, hand-built plan "
         "(2 streams + merge), variants %s, median of %d runs (1M: %d); speed = CTAs / median "
         "thread CPU time\n",
         vs == loaded ? "from kernels/variants.json" : "built-in estimate", runs,
         (runs + 1) / 2);
  printf("%10s %9s %5s %11s %11s %13s %12s %11s %12s\n", "ctas", "items", "runs", "cpu_ms",
         "wall_ms", "ctas_per_s", "makespan_us", "engine_MiB", "rss_grow_MiB");
  const int64_t sizes[4] = {1000, 10000, 100000, 1000000};
  double rates[4];
  int n_big = 0, rc = AV_OK;
  for (int i = 0; i < 4 && !rc && sizes[i] <= o->max_ctas; i++) {
    int r = sizes[i] >= 1000000 ? (runs + 1) / 2 : runs;
    double rate = 0;
    rc = bench_size(sizes[i], gpu, vs, r, &rate, err);
    if (!rc && sizes[i] >= 10000) rates[n_big++] = rate;
  }
  *med = n_big > 0 ? av_bench_median(rates, n_big) : 0;
  return rc;
}

int av_bench_sim(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  opts_t o = {.gpu = "H200-SXM", .runs = 5, .max_ctas = 1000000,
              .sets = SET_SHORT | SET_REALISTIC};
  int rc = parse(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("bench sim [--gpu NAME] [--runs N] [--max-ctas N] [--set SET]",
                      "Simulator speed: the event-driven engine on hand-built short-node plans "
                      "of 1k, 10k, 100k and 1M CTAs, and on plans of realistic batches "
                      "(shared documents of 32k-128k tokens, a conversation, trees) made by "
                      "four schedulers; prints CTAs/s per plan.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  av_gpu_t gpu;
  if ((rc = av_cli_load_gpu("bench sim", o.gpu, &gpu, &err))) return av_cli_fail(&err);
  av_error_t verr;
  av_error_clear(&verr);
  av_variants_t *loaded = av_variants_load(NULL, &verr); /* NULL: schedulers' default menu */
  printf("# anvil bench sim: gpu %s, engine model, one thread\n", gpu.name);
  double short_rate = 0, real_rate = 0, worst = 0;
  if (o.sets & SET_SHORT) rc = run_short(&gpu, loaded, &o, &short_rate, &err);
  if (!rc && (o.sets & SET_REALISTIC))
    rc = av_bench_sim_realistic(&gpu, loaded, (int)o.runs, &real_rate, &worst, &err);
  av_variants_destroy(loaded);
  if (rc) return av_cli_fail(&err);
  printf("\n");
  if (o.sets & SET_SHORT) printf("sim_ctas_per_s=%.0f\n", short_rate);
  if (o.sets & SET_REALISTIC)
    printf("sim_realistic_ctas_per_s=%.0f\nsim_realistic_worst_ctas_per_s=%.0f\n", real_rate,
           worst);
  return 0;
}
