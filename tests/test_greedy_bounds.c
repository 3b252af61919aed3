/* greedy_division's search bounds (FlashForge §5.1) worked by hand: the Eq. 4 lower bound
 * cost_l of the makespan, with the overhead that division adds, and the Eq. 5 bound
 * b_k[i] <= ceil(C_est(n_q[i], n[i]) / cost_l) on each task's KV division.
 *
 * Costs come from the linear model with a fixed per-CTA term F = 100 us, alpha = 0 and
 * beta = 1 us per KV token, so a task of n tokens cut in b pieces costs
 * C(b) = 100 + ceil(n / b) per piece (Eq. 7) and b·C(b) in all: the 100 us every extra piece
 * pays is the "scheduling overhead" §5.1 says finer division adds ("the workload is not
 * reduced, but the scheduling overhead is increased"). */
#include <math.h>
#include <string.h>

#include "costmodels/costmodel.h"
#include "core/gpu.h"
#include "schedulers/greedy_division.h"
#include "tests/support.h"

static av_gpu_t gpu;
static av_workload_t batch;   /* only its heads are read: rows = n_q x GQA group */
static av_costmodel_t *linear;
static av_sched_ctx_t ctx;

static void setup(void) {
  av_error_t err;
  av_error_clear(&err);
  gpu = av_test_small_gpu();
  memset(&batch, 0, sizeof batch);
  batch.heads = av_test_heads();
  const av_costmodel_ops_t *ops = av_costmodel_find("linear");
  ck_assert_ptr_nonnull(ops);
  av_params_t p;
  AV_CK_OK(av_params_init(&p, ops->params, &err), &err);
  const char *const set[] = {"alpha=0", "beta=1", "fixed_us=100"};
  for (int i = 0; i < 3; i++) AV_CK_OK(av_params_set_text(&p, set[i], "test", &err), &err);
  av_cost_env_t env = {.gpu = &gpu, .heads = &batch.heads};
  linear = av_costmodel_create(ops, &p, &env, &err);
  ck_assert_ptr_nonnull(linear);
  ctx = (av_sched_ctx_t){.workload = &batch, .gpu = &gpu, .cost = linear};
}

static void teardown(void) { av_costmodel_destroy(linear); }

/* A search state over p CTAs with the given classes (count tasks of one query over len
 * tokens each, whole paths, at most 256 pieces). */
static void init(gd_t *g, gd_class_t *c, int nc, int32_t p) {
  memset(g, 0, sizeof *g);
  g->ctx = &ctx;
  g->tile = av_test_partial_tile(16);
  g->p = p;
  g->c = c;
  g->nc = nc;
  for (int k = 0; k < nc; k++) {
    c[k].n_q = 1;
    c[k].whole = 1;
    c[k].bmax = 256;
    c[k].c1 = av__gd_class_cost(g, &c[k], 1);
  }
}

/* Two tasks of 1000 tokens on p = 8 CTAs: C(1) = 1100. Cutting both so that pieces cost at
 * most c gives an average load avg(c) = 2·b·C(b) / 8 for the smallest b with C(b) <= c:
 * b = 4 pieces of 250 cost 350 each and avg(350) = 2·4·350 / 8 = 350, while any c < 350
 * needs b >= 5 and avg >= 2·5·300 / 8 = 375. So cost_l = min_c max(c, avg(c)) = 350, and
 * Eq. 5 bounds each task at ceil(1100 / 350) = 4 pieces (a floor would give 3). Without the
 * overhead, avg would be the undivided 2·1100 / 8 = 275 for every c and cost_l 275; without
 * the count of tasks, avg(c) = b·C(b) / 8 crosses c at b = 8 and cost_l would be 225. */
START_TEST(eq4_counts_division_overhead) {
  gd_class_t c[1] = {{.len = 1000, .count = 2}};
  gd_t g;
  init(&g, c, 1, 8);
  ck_assert_double_eq_tol(c[0].c1, 1100, 1e-9);
  double cost_l = av__gd_bound_divisions(&g, 1);
  ck_assert_msg(fabs(cost_l - 350) <= 0.5, "cost_l %.3f, expected 350", cost_l);
  ck_assert_int_eq(c[0].bound, 4);
  /* eq5 off (the ablation): only max_pieces bounds the division */
  av__gd_bound_divisions(&g, 0);
  ck_assert_int_eq(c[0].bound, 256);
}
END_TEST

/* Add four 50-token tasks (C(1) = 150, never divided: pieces of at most c >= 150 need none).
 * They add 4·150 / 8 = 75 to every average load, so with the two long tasks in b = 4 pieces
 * avg = 350 + 75 = 425 for every c in [350, 434), and b = 3 (C(3) = 100 + 334 = 434) gives
 * avg(434) = 2·3·434 / 8 + 75 = 400.5 < 434: the crossing is at c = 425 = cost_l. Eq. 5 then
 * bounds the long tasks at ceil(1100 / 425) = 3 pieces (a floor would give 2) and the short
 * ones at ceil(150 / 425) = 1. Without the division overhead, avg(c) = (2·1100 + 4·150) / 8
 * = 350 for every c, cost_l = 350 and the long tasks' bound 4: a search over divisions the
 * paper's bound excludes. */
START_TEST(eq5_bounds_from_eq4) {
  gd_class_t c[2] = {{.len = 1000, .count = 2}, {.len = 50, .count = 4}};
  gd_t g;
  init(&g, c, 2, 8);
  double cost_l = av__gd_bound_divisions(&g, 1);
  ck_assert_msg(fabs(cost_l - 425) <= 0.5, "cost_l %.3f, expected 425", cost_l);
  ck_assert_int_eq(c[0].bound, 3);
  ck_assert_int_eq(c[1].bound, 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("greedy_bounds");
  TCase *tc = tcase_create("flashforge_eq4_eq5");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, eq4_counts_division_overhead);
  tcase_add_test(tc, eq5_bounds_from_eq4);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
