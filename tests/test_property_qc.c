/* Property test of query_centric: 300 seeded random forests (depth 1-6, up to 512 requests, mixed
 * lengths), query_centric without and with split-K: every plan passes the checker and the
 * fp64 reference agrees with direct attention to 1e-9 relative. The reference computes with
 * head dim 8: the composition being tested does not depend on d. */
#include <stdio.h>
#include <string.h>

#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "tests/support.h"

#define N_FORESTS 300

/* Varied GQA groups (1, 4, 8) so query rows differ; head dims the kernels compile. */
static av_heads_t heads_for(int i) {
  static const av_heads_t h[] = {
      {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16},
      {.hq = 32, .hkv = 32, .head_dim = 64, .dtype = AV_DTYPE_FP16},
      {.hq = 64, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_BF16},
  };
  return h[i % 3];
}

/* Lengths: every third forest short-node (1..16), others 1..256, log-uniform either way. */
static av_random_spec_t spec_for(int i) {
  av_random_spec_t s = {.seed = 1000 + (uint64_t)i,
                        .min_depth = 1,
                        .max_depth = 1 + i % 6,
                        .max_requests = 512,
                        .max_children = 2 + i % 7,
                        .min_len = 1,
                        .max_len = i % 3 == 0 ? 16 : 256};
  return s;
}

static const char *const configs[][2] = {
    {"split=none", NULL},           /* one FINAL item per request */
    {"split=fixed", "splits=4"},    /* split-K: partial states merged per request */
    {"split=heuristic", NULL},      /* FlashAttention's split count for the batch */
};

START_TEST(test_query_centric_exact) {
  const av_scheduler_ops_t *qc = av_scheduler_find("query_centric");
  ck_assert_msg(qc != NULL, "scheduler query_centric is not registered");
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t gpu;
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
  int64_t plans = 0, partial_plans = 0, depth_seen[8] = {0};
  double worst = 0.0;
  for (int i = 0; i < N_FORESTS; i++) {
    av_random_spec_t spec = spec_for(i);
    av_heads_t heads = heads_for(i);
    av_workload_t *w = av_workload_random(&spec, &heads, &err);
    AV_CK_OK(w ? AV_OK : err.code, &err);
    ck_assert_int_le(w->n_requests, 512);
    ck_assert_int_le(w->max_depth, 6);
    depth_seen[w->max_depth]++;
    av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = NULL, .cost = NULL};
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
      av_params_t params;
      AV_CK_OK(av_params_init(&params, qc->params, &err), &err);
      for (int a = 0; a < 2; a++)
        if (configs[k][a]) AV_CK_OK(av_params_set_text(&params, configs[k][a], "test", &err), &err);
      av_plan_t *p = NULL;
      AV_CK_OK(av_scheduler_plan(qc, &params, &ctx, &p, &err), &err);
      int rc = av_plan_check(p, w, &err);
      char buf[1600];
      ck_assert_msg(rc == AV_OK, "forest %d (%s): %s", i, configs[k][0],
                    av_error_format(&err, buf, sizeof buf));
      av_reference_opts_t o = {.seed = (uint64_t)i, .dim = 8, .max_requests = 0};
      av_reference_result_t res;
      AV_CK_OK(av_reference_run(p, w, &o, &res, &err), &err);
      ck_assert_int_eq(res.checked, w->n_requests * av_heads_group(&heads));
      ck_assert_msg(res.max_rel_err < 1e-9, "forest %d (%s): rel err %g at request %d", i,
                    configs[k][0], res.max_rel_err, res.worst_request);
      if (res.max_rel_err > worst) worst = res.max_rel_err;
      if (p->n_slots > 0) partial_plans++;
      plans++;
      av_plan_destroy(p);
    }
    av_workload_destroy(w);
  }
  /* The sample must exercise what it claims: split plans with merges, and every depth. */
  ck_assert_int_eq(plans, N_FORESTS * 3);
  ck_assert_int_ge(partial_plans, N_FORESTS);
  for (int d = 1; d <= 6; d++) ck_assert_msg(depth_seen[d] > 0, "no forest of depth %d", d);
  fprintf(stderr, "property_qc: %lld plans exact, worst relative error %.3g\n",
          (long long)plans, worst);
}
END_TEST

static Suite *property_suite(void) {
  Suite *s = suite_create("property_qc");
  TCase *tc = tcase_create("query_centric");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_query_centric_exact);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(property_suite(), 0); }
