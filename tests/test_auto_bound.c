/* auto's pruning (docs/schedulers.md#pruning-by-a-bound) on seeded random forests, under
 * the cost models and GPUs below:
 * - the bound of every candidate plan (each scheduler's defaults, its alternatives and its
 *   wide alternatives) is positive and at most the engine's prediction;
 * - auto with pruning returns the plan and the verdict (choice, margin, runner-up) of the
 *   full race (av_auto_rank races every candidate), and the engine was skipped somewhere;
 * - with a memo holding some candidates' predictions (as rows of a study, in any order) the
 *   verdict is the same, auto adds the predictions it made, and the entry it names as chosen
 *   holds the chosen plan's own prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"
#include "selectors/auto.h"
#include "selectors/auto_internal.h"
#include "sim/sim.h"
#include "tests/support.h"

extern const av_scheduler_ops_t av_sched_auto;

/* GPU, cost model (profile: the GPU's measured profile, under which CTAs carry their own
 * measured rates), forests per setup. */
static const struct {
  const char *gpu, *cost;
  int forests;
} setups[] = {
    {"H200-SXM", "profile", 40},   {"H200-SXM", "roofline", 40}, {"H100-SXM", "profile", 20},
    {"A100-80GB-SXM", "roofline", 20}, {"RTX-4090", "memory", 15}, {"H200-SXM", "linear", 15},
    {"A100-80GB-SXM", "compute", 15},
};
#define N_SETUPS ((int)(sizeof setups / sizeof setups[0]))

typedef struct fixture {
  av_gpu_t gpu;
  av_variants_t *vs;
  av_workload_t *w;
  av_costmodel_t *cost;
  av_sched_ctx_t ctx;
} fixture_t;

/* Forest f of setup s: mostly small, every 5th up to 256 requests of up to 4k-token nodes;
 * GQA groups 4, 1 and 8 in turn. */
static void fixture_init(fixture_t *x, int s, int f) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load(setups[s].gpu, NULL, &x->gpu, &err), &err);
  const int groups[][2] = {{32, 8}, {32, 32}, {64, 8}};
  av_heads_t h = {.hq = groups[f % 3][0], .hkv = groups[f % 3][1], .head_dim = 128,
                  .dtype = AV_DTYPE_FP16};
  const int big = f % 5 == 4;
  av_random_spec_t spec = {.seed = 7000 + 100 * (uint64_t)s + (uint64_t)f, .min_depth = 1,
                           .max_depth = 4, .max_requests = big ? 256 : 48, .max_children = 4,
                           .min_len = 1, .max_len = big ? 4096 : 600};
  x->w = av_workload_random(&spec, &h, &err);
  AV_CK_OK(x->w ? AV_OK : err.code, &err);
  x->vs = av_test_variants(&x->gpu, &h);
  if (strcmp(setups[s].cost, "profile") == 0) {
    char path[256];
    snprintf(path, sizeof path, "profiles/%s.json", setups[s].gpu);
    x->cost = av_test_profile_model(path, &x->gpu, &x->w->heads, x->vs, &err);
  } else {
    av_cost_env_t env = {.gpu = &x->gpu, .heads = &x->w->heads, .variants = x->vs};
    x->cost = av_costmodel_create(av_costmodel_find(setups[s].cost), NULL, &env, &err);
  }
  AV_CK_OK(x->cost ? AV_OK : err.code, &err);
  x->ctx = (av_sched_ctx_t){.workload = x->w, .gpu = &x->gpu, .variants = x->vs,
                            .cost = x->cost};
}

static void fixture_free(fixture_t *x) {
  av_costmodel_destroy(x->cost);
  av_variants_destroy(x->vs);
  av_workload_destroy(x->w);
}

/* Plans one candidate of auto's race; AV_ERR_UNSUPPORTED when it cannot plan this batch. */
static int plan_candidate(const fixture_t *x, const av_scheduler_ops_t *ops, const char *alt,
                          av_plan_t **p, av_error_t *err) {
  av_params_t params;
  int rc = av_params_init(&params, ops->params, err);
  char buf[128];
  snprintf(buf, sizeof buf, "%s", alt ? alt : "");
  for (char *save = NULL, *a = strtok_r(buf, ";", &save); a && !rc; a = strtok_r(NULL, ";", &save))
    rc = av_params_set_text(&params, a, "test", err);
  if (!rc) rc = av_scheduler_plan(ops, &params, &x->ctx, p, err);
  if (!rc) rc = av_plan_check(*p, x->w, err);
  return rc;
}

/* Bound and engine on one candidate plan; returns 1 when the engine predicted it. */
static int check_bound(const fixture_t *x, const av_plan_t *p, const char *where,
                       double *worst) {
  av_error_t err;
  av_error_clear(&err);
  double bound = 0;
  AV_CK_OK(av__auto_bound(&x->ctx, x->cost, p, &bound, &err), &err);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE};
  av_sim_result_t res;
  int rc = av_sim_run(&cfg, &(av_sim_input_t){p, x->w, &x->gpu, x->vs, x->cost}, &res, NULL, &err);
  if (rc == AV_ERR_UNSUPPORTED) return 0;
  AV_CK_OK(rc, &err);
  ck_assert_msg(bound > 0, "%s: no bound", where);
  ck_assert_msg(bound <= res.makespan_us, "%s: bound %.6f us > engine %.6f us", where, bound,
                res.makespan_us);
  if (bound / res.makespan_us > *worst) *worst = bound / res.makespan_us;
  av_sim_result_free(&res);
  return 1;
}

START_TEST(bound_below_engine) {
  int n_ops = 0, checked = 0;
  double tightest = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  for (int f = 0; f < setups[_i].forests; f++) {
    fixture_t x;
    fixture_init(&x, _i, f);
    for (int i = 0; i < n_ops; i++) {
      if (all[i]->flags & AV_SCHED_SIMULATES_OTHERS) continue;
      const char *alts[16] = {NULL};
      int n = 1;
      for (const char *const *a = all[i]->alternatives; a && *a && n < 15; a++) alts[n++] = *a;
      for (const char *const *a = all[i]->wide_alternatives; a && *a && n < 15; a++)
        alts[n++] = *a;
      for (int k = 0; k < n; k++) {
        av_error_t err;
        av_error_clear(&err);
        av_plan_t *p = NULL;
        int rc = plan_candidate(&x, all[i], alts[k], &p, &err);
        char where[200];
        snprintf(where, sizeof where, "%s/%s forest %d: %s[%s]", setups[_i].gpu,
                 setups[_i].cost, f, all[i]->name, alts[k] ? alts[k] : "");
        if (rc != AV_ERR_UNSUPPORTED) AV_CK_OK(rc, &err);
        if (!rc) checked += check_bound(&x, p, where, &tightest);
        av_plan_destroy(p);
      }
    }
    fixture_free(&x);
  }
  ck_assert_int_gt(checked, 5 * setups[_i].forests);
  /* a bound that is never close to the engine would prune nothing */
  ck_assert_msg(tightest > 0.8, "%s/%s: the tightest bound is %.3f of the engine's time",
                setups[_i].gpu, setups[_i].cost, tightest);
}
END_TEST

/* The verdict the full race gives: "chose=A,margin=M,runner_up=B", and A's plan. */
static void full_race(const fixture_t *x, char *verdict, size_t n, av_plan_t **plan) {
  av_error_t err;
  av_error_clear(&err);
  av_auto_candidate_t c[AV_AUTO_MAX_CANDIDATES];
  int m = 0;
  AV_CK_OK(av_auto_rank(&x->ctx, NULL, c, AV_AUTO_MAX_CANDIDATES, &m, &err), &err);
  ck_assert_int_gt(m, 0);
  double margin = m > 1 && c[0].predicted_us > 0
                      ? (c[1].predicted_us - c[0].predicted_us) / c[0].predicted_us : 0;
  snprintf(verdict, n, "chose=%s,margin=%.4f,runner_up=%s", c[0].name, margin,
           m > 1 ? c[1].name : "none");
  AV_CK_OK(av_auto_plan_candidate(&x->ctx, &c[0], verdict, plan, &err), &err);
}

/* auto on x (with memo, may be NULL): its plan has the full race's verdict and plan. */
static void expect_full(fixture_t *x, av_sched_memo_t *memo, const char *verdict,
                        const av_plan_t *want, const char *where) {
  av_error_t err;
  av_error_clear(&err);
  x->ctx.memo = memo;
  av_plan_t *p = NULL;
  AV_CK_OK(av_scheduler_plan(&av_sched_auto, NULL, &x->ctx, &p, &err), &err);
  x->ctx.memo = NULL;
  ck_assert_msg(strstr(p->params, verdict), "%s: auto says '%s', the full race '%s'", where,
                p->params, verdict);
  ck_assert_msg(av_plan_same_work(p, want), "%s: auto's plan is not its choice's", where);
  av_plan_destroy(p);
}

START_TEST(pruned_race_equals_full) {
  int pruned = 0;
  for (int f = 0; f < setups[_i].forests; f += 2) {
    fixture_t x;
    fixture_init(&x, _i, f);
    char verdict[300], where[120];
    snprintf(where, sizeof where, "%s/%s forest %d", setups[_i].gpu, setups[_i].cost, f);
    av_plan_t *want = NULL;
    full_race(&x, verdict, sizeof verdict, &want);
    /* an empty memo receives what auto predicted: every candidate it did not prune */
    av_sched_memo_entry_t e[AV_AUTO_MAX_CANDIDATES];
    av_sched_memo_t memo = {.cap = AV_AUTO_MAX_CANDIDATES, .entries = e, .chosen = -1};
    expect_full(&x, &memo, verdict, want, where);
    av_auto_candidate_t c[AV_AUTO_MAX_CANDIDATES];
    int m = 0;
    av_error_t err;
    av_error_clear(&err);
    AV_CK_OK(av_auto_rank(&x.ctx, NULL, c, AV_AUTO_MAX_CANDIDATES, &m, &err), &err);
    ck_assert_int_le(memo.n, m);
    pruned += m - memo.n;
    ck_assert_int_ge(memo.chosen, 0);
    ck_assert_msg(e[memo.chosen].pred.makespan_us == c[0].predicted_us,
                  "%s: the chosen entry holds %.6f us, the choice %.6f us", where,
                  e[memo.chosen].pred.makespan_us, c[0].predicted_us);
    /* a memo of the other rows of a study, in any order: every third prediction, from the
     * last made; then one with no room, which auto only reads */
    av_sched_memo_entry_t rows[AV_AUTO_MAX_CANDIDATES];
    av_sched_memo_t part = {.cap = AV_AUTO_MAX_CANDIDATES, .entries = rows, .chosen = -1};
    for (int j = memo.n - 1; j >= 0; j -= 3) rows[part.n++] = e[j];
    expect_full(&x, &part, verdict, want, where);
    part.cap = part.n;
    expect_full(&x, &part, verdict, want, where);
    av_plan_destroy(want);
    fixture_free(&x);
  }
  /* the point of the bound: some engine runs were skipped (on the studies' H200) */
  if (strcmp(setups[_i].gpu, "H200-SXM") == 0 && strcmp(setups[_i].cost, "roofline") == 0)
    ck_assert_int_gt(pruned, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("auto_bound");
  TCase *tc = tcase_create("auto_bound");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, bound_below_engine, 0, N_SETUPS);
  tcase_add_loop_test(tc, pruned_race_equals_full, 0, N_SETUPS);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
