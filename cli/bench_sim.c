/* `anvil bench sim`: simulator speed. Builds synthetic plans of about 1k, 10k, 100k and 1M
 * CTAs on a GPU spec (default H200-SXM) — a two-level batch B=[R/16, R] L=[1024, 256] with
 * 32/8 heads, planned by hand PAT-style (one CTA per shared node over its 16 queries on one
 * stream, one CTA per request's own node on another, then the merge) so the figure does not
 * depend on any scheduler — and times the event-driven engine on each (median of several
 * runs). CTAs counted are the plan's (items x heads); the merge CTAs the engine also runs
 * (one per request and head) are extra work in the timing, not in the count. Prints CTAs
 * simulated per second and memory per size; the last line is
 * `sim_ctas_per_s=<median over sizes >= 10k>`. Target: >= 2,000,000 CTAs/s on one core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "sim/engine_internal.h"
#include "core/plan.h"
#include "core/variants.h"

enum { OPT_RUNS = 256, OPT_MAX = 257, MAX_RUNS = 101 };

static const av_cli_opt_t k_opts[] = {
    {"gpu", 'g', "NAME", "GPU spec to simulate (default H200-SXM)"},
    {"runs", OPT_RUNS, "N", "timed runs per size (default 5; median; 1M CTAs gets (N+1)/2)"},
    {"max-ctas", OPT_MAX, "N", "largest size to run (default 1000000)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

static const av_tile_t k_shared_tile = {AV_KERNEL_PARTIAL, 64, 64, 4};
static const av_tile_t k_leaf_tile = {AV_KERNEL_PARTIAL, 16, 64, 4};

/* The simulator is single-threaded; its speed is the CPU time of this thread, which other
 * processes on a shared machine do not inflate. Wall time is printed alongside. */
static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, dbl_cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static long maxrss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

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
    ok = av_plan_add_item(p, n->parent < 0 ? a : b, q, nq, &sg, 1, AV_OUT_PARTIAL, -1, -1) >= 0;
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
  long rss0 = maxrss_kib();
  int rc = build(target, &w, &p, err);
  if (rc) return rc;
  av__engine_in_t in = {.plan = p, .workload = w, .gpu = gpu, .variants = vs};
  double t[MAX_RUNS], wall[MAX_RUNS], makespan = 0;
  int64_t ctas = 0;
  size_t bytes = 0;
  for (int i = 0; i < runs && !rc; i++) {
    av_sim_result_t r;
    double w0 = clock_s(CLOCK_MONOTONIC), t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    rc = av__engine_run(&in, &r, NULL, &bytes, err);
    t[i] = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    wall[i] = clock_s(CLOCK_MONOTONIC) - w0;
    if (rc) break;
    makespan = r.makespan_us;
    ctas = 0;
    for (int32_t l = 0; l < r.n_launches; l++) ctas += r.launches[l].ctas;
    av_sim_result_free(&r);
  }
  if (!rc) {
    double med = median(t, runs), wmed = median(wall, runs);
    *rate = (double)ctas / med;
    printf("%10lld %9d %5d %11.3f %11.3f %13.0f %12.1f %11.2f %12.1f\n", (long long)ctas,
           p->n_items, runs, med * 1e3, wmed * 1e3, *rate, makespan, (double)bytes / (1 << 20),
           (double)(maxrss_kib() - rss0) / 1024);
  }
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

static int parse(int argc, char **argv, const char **gpu, int64_t *runs, int64_t *max_ctas,
                 av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k, rc;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 'g': *gpu = v; break;
      case OPT_RUNS:
        if ((rc = av_cli_parse_int("bench sim", "--runs", v, 1, MAX_RUNS, runs, err))) return rc;
        break;
      case OPT_MAX:
        if ((rc = av_cli_parse_int("bench sim", "--max-ctas", v, 1000, 100000000, max_ctas,
                                   err)))
          return rc;
        break;
      default:
        return av_error_set(err, AV_ERR_USAGE, "bench sim", v ? v : "",
                            "unexpected argument; see anvil bench sim --help");
    }
  }
  return AV_OK;
}

int av_bench_sim(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  const char *gpu_name = "H200-SXM";
  int64_t runs = 5, max_ctas = 1000000;
  int rc = parse(argc, argv, &gpu_name, &runs, &max_ctas, &err);
  if (rc == -1) {
    av_cli_print_help("bench sim [--gpu NAME] [--runs N] [--max-ctas N]",
                      "Simulator speed: the event-driven engine on synthetic plans of 1k, "
                      "10k, 100k and 1M CTAs; prints CTAs/s and memory per size.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  av_gpu_t gpu;
  if ((rc = av_cli_load_gpu("bench sim", gpu_name, &gpu, &err))) return av_cli_fail(&err);
  av_error_t verr;
  av_error_clear(&verr);
  av_variants_t *loaded = av_variants_load(NULL, &verr); /* absent without a CUDA build */
  const av_variants_t *vs = loaded;
  if (!vs || !av_variants_find(vs, &k_shared_tile, 128, AV_DTYPE_FP16, gpu.sm_arch) ||
      !av_variants_find(vs, &k_leaf_tile, 128, AV_DTYPE_FP16, gpu.sm_arch)) {
    fill_fallback(gpu.sm_arch);
    vs = &k_fallback_vs;
  }
  printf("# anvil bench sim: gpu %s, engine model, batch B=[R/16,R] L=[1024,256] 32/8 heads "
         "d128, hand-built plan (2 streams + merge), variants %s, median of %d runs "
         "(1M: %d); speed = CTAs / median thread CPU time\n",
         gpu.name, vs == loaded ? "from kernels/variants.json" : "built-in estimate",
         (int)runs, (int)(runs + 1) / 2);
  printf("%10s %9s %5s %11s %11s %13s %12s %11s %12s\n", "ctas", "items", "runs", "cpu_ms",
         "wall_ms", "ctas_per_s", "makespan_us", "engine_MiB", "rss_grow_MiB");
  const int64_t sizes[4] = {1000, 10000, 100000, 1000000};
  double rates[4];
  int n_big = 0;
  for (int i = 0; i < 4 && !rc && sizes[i] <= max_ctas; i++) {
    int r = sizes[i] >= 1000000 ? (int)(runs + 1) / 2 : (int)runs;
    double rate = 0;
    rc = bench_size(sizes[i], &gpu, vs, r, &rate, &err);
    if (!rc && sizes[i] >= 10000) rates[n_big++] = rate;
  }
  av_variants_destroy(loaded);
  if (rc) return av_cli_fail(&err);
  double med = n_big > 0 ? median(rates, n_big) : 0;
  printf("sim_ctas_per_s=%.0f\n", med);
  return 0;
}
