/* `anvil bench plan`: planning speed. Plans a 3-level batch of 256 requests and one of 4096
 * with every registered scheduler (default parameters), prints the median wall time of each
 * and the growth from 256 to 4096 requests against the n·log n bound (16 × 12/8 = 24).
 * Target: <= 100 µs at 256 requests for every scheduler but `auto` (which plans and
 * simulates all the others); the last line is `plan_us_256_max=<worst median>`. */
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/variants.h"

enum { OPT_RUNS = 256, OPT_FRESH_PAGES, MAX_RUNS = 1001 };

static const av_cli_opt_t k_opts[] = {
    {"gpu", 'g', "NAME", "GPU spec to plan for (default H200-SXM)"},
    {"runs", OPT_RUNS, "N", "timed runs per scheduler and batch (default 21; median)"},
    {"fresh-pages", OPT_FRESH_PAGES, NULL,
     "let malloc hand freed memory back to the kernel between runs (its default), so runs "
     "whose plans outgrow its thresholds also time page faults on fresh pages"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct bench_batch {
  const char *label;
  int64_t B[3], L[3];
} bench_batch_t;

/* PAT/FastTree notation: one root, a middle level, the requests as leaves. */
static const bench_batch_t k_batches[2] = {
    {"B=[1,16,256] L=[2048,512,128]", {1, 16, 256}, {2048, 512, 128}},
    {"B=[1,64,4096] L=[2048,512,128]", {1, 64, 4096}, {2048, 512, 128}},
};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median wall time of `runs` plannings (after one untimed warm-up); *items gets the plan's
 * item count. Only planning is timed, not destroying the plan. */
static int time_plan(const av_scheduler_ops_t *ops, const av_sched_ctx_t *ctx, int runs,
                     double *median_us, int32_t *items, av_error_t *err) {
  double t[MAX_RUNS];
  for (int i = -1; i < runs; i++) {
    av_plan_t *p = NULL;
    double t0 = now_us();
    int rc = av_scheduler_plan(ops, NULL, ctx, &p, err);
    double t1 = now_us();
    if (rc) return rc;
    if (i >= 0) t[i] = t1 - t0;
    *items = p->n_items;
    av_plan_destroy(p);
  }
  qsort(t, (size_t)runs, sizeof *t, dbl_cmp);
  *median_us = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
  return AV_OK;
}

static int parse(int argc, char **argv, const char **gpu, int64_t *runs, int *fresh_pages,
                 av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 'g': *gpu = v; break;
      case OPT_FRESH_PAGES: *fresh_pages = 1; break;
      case OPT_RUNS: {
        int rc = av_cli_parse_int("bench plan", "--runs", v, 1, MAX_RUNS - 1, runs, err);
        if (rc) return rc;
        break;
      }
      default:
        return av_error_set(err, AV_ERR_USAGE, "bench plan", v ? v : "",
                            "unexpected argument; see anvil bench plan --help");
    }
  }
  return AV_OK;
}

/* Plans both batches with every scheduler and prints the table; *max256 receives the worst
 * median at 256 requests over the schedulers other than auto. */
static int run_all(const av_gpu_t *gpu, const av_variants_t *vs, int runs, double *max256,
                   av_error_t *err) {
  av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  av_workload_t *w[2] = {NULL, NULL};
  av_costmodel_t *cost[2] = {NULL, NULL};
  const av_costmodel_ops_t *roofline = av_costmodel_find("roofline");
  int rc = roofline ? AV_OK
                    : av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "no roofline cost model");
  for (int b = 0; b < 2 && rc == AV_OK; b++) {
    w[b] = av_workload_from_levels(k_batches[b].B, k_batches[b].L, 3, &h, err);
    rc = w[b] ? av_cli_cost_create(roofline, NULL, gpu, &h, vs, &cost[b], err)
              : (err->code ? err->code : AV_ERR_INTERNAL);
  }
  int n_ops = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  printf("%-18s %14s %8s %15s %8s %10s\n", "scheduler", "256: median_us", "items",
         "4096: median_us", "items", "growth");
  *max256 = 0.0;
  for (int i = 0; i < n_ops && rc == AV_OK; i++) {
    double us[2] = {0, 0};
    int32_t items[2] = {0, 0};
    for (int b = 0; b < 2 && rc == AV_OK; b++) {
      av_sched_ctx_t ctx = {.workload = w[b], .gpu = gpu, .variants = vs, .cost = cost[b]};
      /* the big batch gets fewer runs: it is there for the growth figure */
      int r = b == 0 ? runs : (runs + 3) / 4;
      rc = time_plan(all[i], &ctx, r, &us[b], &items[b], err);
    }
    if (rc) break;
    printf("%-18s %14.1f %8d %15.1f %8d %9.1fx\n", all[i]->name, us[0], items[0], us[1],
           items[1], us[0] > 0 ? us[1] / us[0] : 0.0);
    if (!(all[i]->flags & AV_SCHED_SIMULATES_OTHERS) && us[0] > *max256) *max256 = us[0];
  }
  for (int b = 0; b < 2; b++) {
    av_costmodel_destroy(cost[b]);
    av_workload_destroy(w[b]);
  }
  return rc;
}

int av_bench_plan(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  const char *gpu_name = "H200-SXM";
  int64_t runs = 21;
  int fresh_pages = 0;
  int rc = parse(argc, argv, &gpu_name, &runs, &fresh_pages, &err);
  if (rc == -1) {
    av_cli_print_help("bench plan [--gpu NAME] [--runs N] [--fresh-pages]",
                      "Planning speed of every scheduler on 3-level batches of 256 and 4096 "
                      "requests (32/8 heads, d 128).", k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  /* Steady state, as in a long-running planner: glibc returns freed memory to the kernel
   * once the top of the heap or a chunk passes its (adaptive) thresholds, so each timed run
   * whose plan is that large refaults fresh zeroed pages that the untimed destroy of the
   * previous plan gave back. Whether it does depends on the sizes of the arrays in flight,
   * not on the planner's work (it made 4096-request medians swing 2-5x between runs); holding
   * the memory measures the planning. --fresh-pages keeps the default. */
  int held = 0;
#ifdef __GLIBC__
  if (!fresh_pages)
    held = mallopt(M_TRIM_THRESHOLD, 1 << 30) && mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
  av_gpu_t gpu;
  if ((rc = av_cli_load_gpu("bench plan", gpu_name, &gpu, &err))) return av_cli_fail(&err);
  av_error_t verr;
  av_error_clear(&verr);
  av_variants_t *vs = av_variants_load(NULL, &verr); /* absent without a CUDA build */
  printf("# anvil bench plan: gpu %s, kernel variants %s, cost model roofline, median of %d "
         "runs at 256 requests and %d at 4096 (growth bound n log n: 24x), freed memory %s\n",
         gpu.name, vs ? "from kernels/variants.json" : "default menu", (int)runs,
         (int)(runs + 3) / 4, held ? "held by malloc" : "returned to the kernel (fresh pages)");
  for (int b = 0; b < 2; b++) printf("# batch %d: %s\n", b, k_batches[b].label);
  double max256 = 0.0;
  rc = run_all(&gpu, vs, (int)runs, &max256, &err);
  av_variants_destroy(vs);
  if (rc) return av_cli_fail(&err);
  printf("plan_us_256_max=%.1f\n", max256);
  return 0;
}
