/* The range L2 (docs/simulator.md#l2-over-ranges): its run store (sim/l2_runs.c) and LRU
 * depth (sim/l2_depth.c), and a property test against the per-line reference model
 * (`engine_lines`) on seeded forests whose nodes are whole lines:
 *  - plans that read each node whole (node_naive, profit_pack) agree within 0.5 % per plan;
 *  - query-centric plans, whose requests stream one prefix side by side, within 5 %: a
 *    platoon shares its misses where the line model lets the first reader of each line take
 *    them, which only differs where HBM is contended;
 *  - every plan of every scheduler fetches at least its unique KV from HBM in the range
 *    model (the line model can fetch less when neighbouring pieces of a node share a line);
 *  - the median over all plans of all schedulers is within 0.5 %. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/costmodel.h"
#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "sim/engine_internal.h"
#include "sim/sim.h"
#include "tests/support.h"

/* --- the run store ---------------------------------------------------------------------- */
START_TEST(runs_find_next_clear) {
  enum { CAP = 64 };
  static av__run_t pool[CAP];
  av__runs_t t;
  av__runs_init(&t, CAP, 1e9, 64 * 256.0, 64, pool);
  const int64_t lo[] = {0, 100, 300}, hi[] = {100, 200, 400};
  for (int i = 0; i < 3; i++) {
    int32_t r = av__runs_insert(&t, 7, lo[i], hi[i], 0);
    ck_assert_int_ge(r, 0);
    t.r[r].m_lo = 10.0 * i;
    t.r[r].m_hi = 10.0 * i + 5;
  }
  ck_assert_int_ge(av__runs_insert(&t, 8, 0, 50, 0), 0);  /* another key */
  ck_assert_int_eq(t.r[av__runs_find(&t, 7, 150)].lo, 100);
  ck_assert_int_eq(av__runs_find(&t, 7, 250), -1);        /* a gap */
  ck_assert_int_eq(t.r[av__runs_next(&t, 7, 150)].lo, 300);
  ck_assert_int_eq(av__runs_next(&t, 7, 350), -1);        /* key 8 is not key 7's */
  /* clearing [150, 320) keeps [100, 150) and [320, 400) with their own stamps */
  av__runs_clear(&t, 7, 150, 320, 0);
  int32_t a = av__runs_find(&t, 7, 120), b = av__runs_find(&t, 7, 330);
  ck_assert_int_eq(t.r[a].hi, 150);
  ck_assert_int_eq(t.r[b].lo, 320);
  ck_assert_int_eq(av__runs_find(&t, 7, 200), -1);
  ck_assert(fabs(t.r[b].m_lo - (20 + 5.0 * 20 / 99)) < 1e-9);
  ck_assert(fabs(t.r[b].m_hi - 25) < 1e-9);
}
END_TEST

START_TEST(runs_pool_reclaims_oldest) {
  enum { CAP = 8 };
  static av__run_t pool[CAP];
  av__runs_t t;
  av__runs_init(&t, CAP, 1e12, 64 * 256.0, 64, pool);
  for (int i = 0; i < 40; i++) {  /* five times the pool: the oldest done runs make room */
    int32_t r = av__runs_insert(&t, 1, 100 * i, 100 * i + 50, i);
    ck_assert_int_ge(r, 0);
    t.r[r].m_lo = t.r[r].m_hi = i;
  }
  ck_assert_int_ge(av__runs_find(&t, 1, 3900), 0);  /* the newest is kept */
  ck_assert_int_eq(av__runs_find(&t, 1, 0), -1);    /* the oldest went */
}
END_TEST

/* A line stamped s is held while the misses since it, plus the lines re-read since that were
 * older than it, stay below the capacity. */
START_TEST(depth_counts_rereads_of_older_lines) {
  const double line = 1000, cap = 100 * line;
  av__l2_depth_t d;
  av__depth_init(&d, cap);
  av__depth_sync(&d, 60 * line);
  ck_assert(av__depth_held(&d, 0, 60 * line, cap, line));         /* 60 misses since */
  ck_assert(!av__depth_held(&d, 0, 101 * line, cap, line));        /* 101: evicted */
  /* 50 lines stamped near 0 re-read at clock 60: they push line 30 down, not line 0... */
  av__depth_reread(&d, 0, 1 * line, 50, 60 * line);
  av__depth_sync(&d, 70 * line);
  ck_assert(!av__depth_held(&d, 30 * line, 70 * line, cap, line) ==
            !(40 + 50 < 100));                                        /* 40 + 50 < 100: held */
  av__depth_reread(&d, 0, 1 * line, 20, 70 * line);                /* 20 more: 110 */
  ck_assert(!av__depth_held(&d, 30 * line, 70 * line, cap, line));
  /* ...and re-reads of lines newer than s do not push s down */
  av__l2_depth_t n;
  av__depth_init(&n, cap);
  av__depth_sync(&n, 50 * line);
  av__depth_reread(&n, 40 * line, 49 * line, 90, 50 * line);
  ck_assert(av__depth_held(&n, 10 * line, 50 * line, cap, line));
}
END_TEST

/* --- the property test against the line model ------------------------------------------ */
typedef struct {
  double us[2], hbm[2];
} pair_t;

static void simulate(const av_sched_ctx_t *ctx, const av_plan_t *p, pair_t *out) {
  const av_sim_model_t models[2] = {AV_SIM_ENGINE, AV_SIM_ENGINE_LINES};
  for (int m = 0; m < 2; m++) {
    av_error_t err;
    av_error_clear(&err);
    av_sim_config_t cfg = {.model = models[m]};
    av_sim_result_t res;
    memset(&res, 0, sizeof res);
    AV_CK_OK(
        av_sim_run(&cfg, &(av_sim_input_t){p, ctx->workload, ctx->gpu, ctx->variants, ctx->cost},
                   &res, NULL, &err),
        &err);
    out->us[m] = res.makespan_us;
    out->hbm[m] = res.hbm_bytes;
    av_sim_result_free(&res);
  }
}

/* A seeded forest of 1-3 levels, 1-6 children per node, whole 64-token lines per node. */
static av_workload_t *line_forest(unsigned seed, const av_heads_t *h) {
  srand(seed);
  const int depth = 1 + rand() % 3;
  int64_t B[3], L[3];
  for (int k = 0; k < depth; k++) {
    B[k] = k == 0 ? 1 : B[k - 1] * (1 + rand() % 6);
    L[k] = 64 * (1 + rand() % 64);
  }
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, depth, h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  return w;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

START_TEST(ranges_agree_with_lines) {
  enum { N_FORESTS = 24 };
  const char *const names[] = {"query_centric", "node_naive", "fixed_division",
                               "greedy_division", "profit_pack", "streamk_balance"};
  const double tol[] = {0.05, 0.005, -1, -1, 0.005, -1};  /* -1: bytes only */
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t g;
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &g, &err), &err);
  av_variants_t *vs = av_variants_load(NULL, &err);
  AV_CK_OK(vs ? AV_OK : err.code, &err);
  const av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  double diffs[N_FORESTS * 6];
  int n = 0;
  for (unsigned f = 0; f < N_FORESTS; f++) {
    av_workload_t *w = line_forest(1000 + f, &h);
    av_cost_env_t env = {.gpu = &g, .heads = &w->heads, .variants = vs};
    av_costmodel_t *cost = av_costmodel_create(av_costmodel_find("roofline"), NULL, &env, &err);
    AV_CK_OK(cost ? AV_OK : err.code, &err);
    const av_sched_ctx_t ctx = {.workload = w, .gpu = &g, .variants = vs, .cost = cost};
    av_workload_stats_t st;
    av_workload_stats(w, &st);
    const double unique = st.unique_kv_bytes;
    for (int s = 0; s < 6; s++) {
      const av_scheduler_ops_t *ops = av_scheduler_find(names[s]);
      av_params_t params;
      AV_CK_OK(av_params_init(&params, ops->params, &err), &err);
      av_plan_t *p = NULL;
      AV_CK_OK(av_scheduler_plan(ops, &params, &ctx, &p, &err), &err);
      AV_CK_OK(av_plan_check(p, w, &err), &err);
      pair_t r;
      simulate(&ctx, p, &r);
      const double d = (r.us[0] - r.us[1]) / r.us[1];
      diffs[n++] = fabs(d);
      ck_assert_msg(tol[s] < 0 || fabs(d) <= tol[s], "forest %u %s: ranges %.3f us, lines "
                    "%.3f us (%+.2f %%)", f, names[s], r.us[0], r.us[1], 100 * d);
      ck_assert_msg(r.hbm[0] >= unique * (1 - 1e-9), "forest %u %s: %.0f HBM bytes < unique "
                    "KV %.0f", f, names[s], r.hbm[0], unique);
      av_plan_destroy(p);
    }
    av_costmodel_destroy(cost);
    av_workload_destroy(w);
  }
  qsort(diffs, (size_t)n, sizeof *diffs, cmp_double);
  ck_assert_msg(diffs[n / 2] <= 0.005, "median |ranges - lines| %.2f %%", 100 * diffs[n / 2]);
  av_variants_destroy(vs);
}
END_TEST

int main(void) {
  Suite *s = suite_create("l2_ranges");
  TCase *tc = tcase_create("runs");
  tcase_add_test(tc, runs_find_next_clear);
  tcase_add_test(tc, runs_pool_reclaims_oldest);
  tcase_add_test(tc, depth_counts_rereads_of_older_lines);
  suite_add_tcase(s, tc);
  TCase *prop = tcase_create("property");
  tcase_set_timeout(prop, 120);
  tcase_add_test(prop, ranges_agree_with_lines);
  suite_add_tcase(s, prop);
  return av_test_run(s, 0);
}
