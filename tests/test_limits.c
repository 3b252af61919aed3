/* Limits on the work an experiment may ask for (core/limits.h): a batch over a default limit
 * fails at load with the key path and the limit, the file's "limits" object raises it, and a
 * scheduler held to a plan size fails before it allocates the plan. The adversarial files
 * themselves are data under tests/bad_input/limit_*. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/experiment.h"
#include "schedulers/scheduler.h"
#include "tests/support.h"

static av_error_t err;

static int load(const char *text, av_experiment_t **e) {
  json_error_t je;
  json_t *root = json_loads(text, 0, &je);
  ck_assert_ptr_nonnull(root);
  av_error_clear(&err);
  int rc = av_experiment_from_json(root, "limits.json", e, &err);
  json_decref(root);
  return rc;
}

#define LONG_NODE                                                                          \
  "\"name\": \"long\", \"gpu\": \"H200-SXM\", \"workloads\": [{\"kind\": \"levels\", "      \
  "\"B\": [1, 2], \"L\": [8388608, 64]}], \"schedulers\": [\"query_centric\"]"

START_TEST(default_limit_names_key_and_limit) {
  av_experiment_t *e = NULL;
  ck_assert_int_eq(load("{" LONG_NODE "}", &e), AV_ERR_RANGE);
  ck_assert_ptr_null(e);
  ck_assert_str_eq(err.path, "workloads[0]");
  ck_assert_ptr_nonnull(strstr(err.message, "8388608"));
  ck_assert_ptr_nonnull(strstr(err.message, "limits.node_tokens"));
  ck_assert_ptr_nonnull(strstr(err.message, "4194304"));
}
END_TEST

START_TEST(limits_object_raises) {
  av_experiment_t *e = NULL;
  AV_CK_OK(load("{" LONG_NODE ", \"limits\": {\"node_tokens\": 8388608, "
                "\"request_tokens\": 16777216}}",
                &e),
           &err);
  ck_assert_int_eq(e->limits.node_tokens, 8388608);
  ck_assert_int_eq(e->limits.plan_items, (int64_t)1 << 22);  /* the others keep defaults */
  av_experiment_destroy(e);
}
END_TEST

START_TEST(limits_can_be_lowered) {
  av_experiment_t *e = NULL;
  ck_assert_int_eq(load("{" LONG_NODE ", \"limits\": {\"node_tokens\": 8388608, "
                        "\"request_tokens\": 16777216, \"requests\": 2}}",
                        &e),
                   AV_OK);
  av_experiment_destroy(e);
  ck_assert_int_eq(load("{" LONG_NODE ", \"limits\": {\"node_tokens\": 8388608, "
                        "\"request_tokens\": 16777216, \"requests\": 1}}",
                        &e),
                   AV_ERR_RANGE);
  ck_assert_ptr_nonnull(strstr(err.message, "limits.requests"));
}
END_TEST

/* The plan-size bound holds inside the scheduler too (launch=beside passes the load check
 * with one long node cut k times, and the pieces of the others are counted at plan time). */
START_TEST(scheduler_held_to_max_items) {
  av_gpu_t gpu;
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
  av_heads_t h = av_test_heads();
  const int64_t B[2] = {1, 64}, L[2] = {4096, 4096};
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  const av_scheduler_ops_t *ops = av_scheduler_find("fixed_division");
  av_params_t p;
  AV_CK_OK(av_params_init(&p, ops->params, &err), &err);
  AV_CK_OK(av_params_set_text(&p, "k=1024", "test", &err), &err);
  av_cost_env_t env = {.gpu = &gpu, .heads = &w->heads};
  av_costmodel_t *cost = av_costmodel_create(av_costmodel_find("roofline"), NULL, &env, &err);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .cost = cost, .max_items = 1000};
  av_plan_t *plan = NULL;
  ck_assert_int_eq(av_scheduler_plan(ops, &p, &ctx, &plan, &err), AV_ERR_RANGE);
  ck_assert_ptr_null(plan);
  ck_assert_ptr_nonnull(strstr(err.message, "limits.plan_items"));
  ck_assert_int_ge(ops->min_items(w, &p), 1024 + 64 * 1024);
  ctx.max_items = 0;  /* no bound: the same plan is made */
  AV_CK_OK(av_scheduler_plan(ops, &p, &ctx, &plan, &err), &err);
  av_plan_destroy(plan);
  av_costmodel_destroy(cost);
  av_workload_destroy(w);
}
END_TEST

int main(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("limits");
  tcase_add_test(tc, default_limit_names_key_and_limit);
  tcase_add_test(tc, limits_object_raises);
  tcase_add_test(tc, limits_can_be_lowered);
  tcase_add_test(tc, scheduler_held_to_max_items);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
