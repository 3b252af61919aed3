/* Limits on the work an experiment may ask for (core/limits.h): a batch over a default limit
 * fails at load with the key path and the limit, the file's "limits" object raises it, and a
 * scheduler held to a plan size fails before it allocates the plan. The adversarial files
 * themselves are data under tests/bad_input/limit_*. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/limits.h"
#include "pipeline/experiment.h"
#include "schedulers/scheduler.h"
#include "selectors/selectors.h"
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

/* The work estimate: pieces are at least the (request, node) pairs, a divided scheduler's
 * are its pieces, auto's the sum of its candidates', and KV heads multiply them all. */
START_TEST(work_counts_heads_and_candidates) {
  av_heads_t h = av_test_heads();
  const int64_t B[2] = {1, 64}, L[2] = {4096, 100};
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  ck_assert_int_eq(av_limits_path_pairs(w), 128);
  AV_CK_OK(av_selectors_register(&err), &err);
  const av_scheduler_ops_t *qc = av_scheduler_find("query_centric"),
                           *fd = av_scheduler_find("fixed_division"),
                           *au = av_scheduler_find("auto");
  ck_assert_int_eq(av_scheduler_pieces(qc, NULL, w), 128);
  ck_assert_int_eq(av_scheduler_pieces(fd, NULL, w), 64 * 4 + 64 * 4);
  av_params_t p;
  AV_CK_OK(av_params_init(&p, qc->params, &err), &err);
  AV_CK_OK(av_params_set_text(&p, "split=fixed", "test", &err), &err);
  AV_CK_OK(av_params_set_text(&p, "splits=8", "test", &err), &err);
  ck_assert_int_eq(av_scheduler_pieces(qc, &p, w), 64 * (8 + 1));
  const int64_t all = av_scheduler_pieces(au, NULL, w);
  ck_assert_int_gt(all, 5 * 128 + 512);  /* five schedulers at the pairs, fixed_division */
  ck_assert_int_eq(av_limits_work_units(w, all), all * h.hkv);
  av_workload_destroy(w);
}
END_TEST

/* Runs anvil in dir with the given arguments (NULL-terminated) under an address-space limit of
 * 2 GB (not in sanitizer builds, whose shadow memory needs more), its stdout and stderr in
 * dir; returns the exit status and sets *seconds to the CPU time it took (not the wall
 * clock, so that a busy machine does not fail the test). */
static int anvil_bounded(const char *dir, double *seconds, ...) {
  const int sanitized = getenv("CK_TIMEOUT_MULTIPLIER") != NULL;
  struct rlimit old, cap = {.rlim_cur = (rlim_t)2 << 30, .rlim_max = RLIM_INFINITY};
  getrlimit(RLIMIT_AS, &old);
  cap.rlim_max = old.rlim_max;
  if (!sanitized && cap.rlim_cur < old.rlim_max) setrlimit(RLIMIT_AS, &cap);
  const double cpu0 = av_test_children_cpu_s();
  va_list ap;
  va_start(ap, seconds);
  const int rc = av_test_anvil_va(dir, dir, ap);
  va_end(ap);
  if (!sanitized) setrlimit(RLIMIT_AS, &old);
  *seconds = av_test_children_cpu_s() - cpu0;
  return rc;
}

static double seconds_allowed(double s) {
  const char *slower = getenv("CK_TIMEOUT_MULTIPLIER");
  return s * (slower ? atof(slower) : 1.0);
}

/* Writes text to dir/name. */
static void write_text(const char *dir, const char *name, const char *text) {
  char path[400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

static char *stderr_of(const char *dir) {
  char path[400];
  snprintf(path, sizeof path, "%s/stderr", dir);
  return av_test_read_file(path);
}

/* A chain of 10^6 one-token nodes with 64 leaves: every exact plan has 64 x 10^6 pieces,
 * which once took minutes and 5 GB to plan and check. It is refused at load, fast and
 * within 2 GB, by limits.work_units (the file is 29 MB, so it is written here, not kept). */
START_TEST(deep_chain_refused_fast) {
  char dir[] = "/tmp/anvil_chain_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[400];
  snprintf(path, sizeof path, "%s/chain.json", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  enum { CHAIN = 1000000, LEAVES = 64 };
  fputs("{\"name\": \"chain\", \"gpu\": \"H200-SXM\", \"schedulers\": [\"query_centric\"], "
        "\"workloads\": [{\"kind\": \"explicit\", \"nodes\": [{\"parent\": -1, \"kv_len\": 1}",
        f);
  for (int u = 1; u < CHAIN; u++) fprintf(f, ",{\"parent\":%d,\"kv_len\":1}", u - 1);
  for (int k = 0; k < LEAVES; k++) fprintf(f, ",{\"parent\":%d,\"kv_len\":1}", CHAIN - 1);
  fputs("], \"requests\": [", f);
  for (int k = 0; k < LEAVES; k++) fprintf(f, "%s%d", k ? "," : "", CHAIN + k);
  fputs("]}]}\n", f);
  ck_assert_int_eq(fclose(f), 0);
  double took = 0;
  const int rc = anvil_bounded(dir, &took, "run", "chain.json", "--out", "out", NULL);
  char *msg = stderr_of(dir);
  ck_assert_msg(rc == 1, "exit %d: %s", rc, msg ? msg : "");
  ck_assert_ptr_nonnull(strstr(msg, "query_centric on batch 'explicit-0' needs about "
                                    "512000512 work units"));
  ck_assert_ptr_nonnull(strstr(msg, "limits.work_units"));
  ck_assert_msg(took <= seconds_allowed(10), "took %.1f s", took);
  free(msg);
  char cmd[500];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Valid files that once ran for a minute and now complete within the default limits, in
 * seconds and under 2 GB: heads multiply the simulator's CTAs, and a 4 M-token node under
 * 255 one-token leaves was slow for auto's candidates. */
static void completes_fast(const char *experiment) {
  char dir[] = "/tmp/anvil_fast_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  write_text(dir, "exp.json", experiment);
  double took = 0;
  const int rc = anvil_bounded(dir, &took, "run", "exp.json", "--out", "out", "-q", NULL);
  char *msg = stderr_of(dir);
  ck_assert_msg(rc == 0, "exit %d: %s", rc, msg ? msg : "");
  ck_assert_msg(took <= seconds_allowed(10), "took %.1f s", took);
  free(msg);
  char cmd[500];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

#define ALL_SCHEDULERS                                                                      \
  "[\"query_centric\", \"node_naive\", \"fixed_division\", \"greedy_division\", "           \
  "\"profit_pack\", \"streamk_balance\", \"auto\"]"

START_TEST(many_heads_complete_fast) {
  completes_fast("{\"name\": \"heads\", \"gpu\": \"H200-SXM\", \"heads\": [[1024, 1024]], "
                 "\"workloads\": [{\"kind\": \"levels\", \"B\": [1, 64], "
                 "\"L\": [1048576, 4096]}], \"schedulers\": " ALL_SCHEDULERS "}");
}
END_TEST

START_TEST(long_root_short_leaves_complete_fast) {
  completes_fast("{\"name\": \"root\", \"gpu\": \"H200-SXM\", \"workloads\": [{\"kind\": "
                 "\"levels\", \"B\": [1, 255], \"L\": [4194303, 1]}], \"schedulers\": "
                 ALL_SCHEDULERS "}");
}
END_TEST

int main(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("limits");
  tcase_add_test(tc, default_limit_names_key_and_limit);
  tcase_add_test(tc, limits_object_raises);
  tcase_add_test(tc, limits_can_be_lowered);
  tcase_add_test(tc, scheduler_held_to_max_items);
  tcase_add_test(tc, work_counts_heads_and_candidates);
  suite_add_tcase(s, tc);
  TCase *slow = tcase_create("bounded");
  tcase_set_timeout(slow, 120);
  tcase_add_test(slow, deep_chain_refused_fast);
  tcase_add_test(slow, many_heads_complete_fast);
  tcase_add_test(slow, long_root_short_leaves_complete_fast);
  suite_add_tcase(s, slow);
  return av_test_run(s, 0);
}
