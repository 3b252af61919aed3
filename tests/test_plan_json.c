/* Plan files: hand-built plans on a small `levels` forest round trip through their JSON
 * byte for byte, and bad plan files are rejected with located messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/plan.h"
#include "tests/support.h"

static char *dump(const json_t *j) {
  return json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
}

static void tmp_path(char *out, size_t n, const char *tag) {
  snprintf(out, n, "/tmp/anvil_test_plan_%ld_%s.json", (long)getpid(), tag);
}

START_TEST(test_json_round_trip) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *plans[] = {av_test_plan_qc(w, 3, 0), av_test_plan_qc(w, 2, 3), av_test_plan_nodes(w, 16)};
  plans[1]->launch_model = AV_LAUNCH_GRAPH; /* written as "launch_model" only when not streams */
  plans[2]->launch_model = AV_LAUNCH_PDL;
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
    av_plan_t *p = plans[i];
    snprintf(p->params, sizeof p->params, "split=%zu", i);
    json_t *j = av_plan_to_json(p, w);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_object_get(j, "launch_model") != NULL, i >= 1);
    char path[256];
    tmp_path(path, sizeof path, "rt");
    av_error_t err;
    av_error_clear(&err);
    AV_CK_OK(av_json_dump_file(j, path, &err), &err);
    av_plan_t *q;
    av_workload_t *wq;
    AV_CK_OK(av_plan_load(path, &q, &wq, &err), &err);
    ck_assert(av_workload_equal(w, wq));
    ck_assert(av_plan_equal(p, q));
    ck_assert_int_eq(q->launch_model, p->launch_model);
    json_t *j2 = av_plan_to_json(q, wq);
    char *a = dump(j), *b = dump(j2);
    ck_assert_str_eq(a, b);
    char *file = av_test_read_file(path);
    ck_assert_str_eq(file, a);
    av_test_expect_exact(q, wq);
    free(a);
    free(b);
    free(file);
    json_decref(j);
    json_decref(j2);
    remove(path);
    av_plan_destroy(q);
    av_workload_destroy(wq);
    av_plan_destroy(p);
  }
  av_workload_destroy(w);
}
END_TEST

/* A good plan file edited by `edit`, loaded: the error must carry code, key path, text. */
typedef void (*edit_fn)(json_t *root);

static void edit_unknown_key(json_t *root) {
  json_object_set_new(json_array_get(json_object_get(root, "items"), 2), "ctaa",
                      json_integer(1));
}
static void edit_node_range(json_t *root) {
  json_t *seg = json_array_get(json_object_get(json_array_get(json_object_get(root, "items"), 4),
                                               "segments"),
                               1);
  json_array_set_new(seg, 0, json_integer(99));
}
static void edit_end_range(json_t *root) {
  json_t *seg = json_array_get(json_object_get(json_array_get(json_object_get(root, "items"), 0),
                                               "segments"),
                               0);
  json_array_set_new(seg, 2, json_integer(1000));
}
static void edit_query_range(json_t *root) {
  json_array_set_new(json_object_get(json_array_get(json_object_get(root, "items"), 1), "queries"),
                     0, json_integer(4));
}
static void edit_launch_range(json_t *root) {
  json_object_set_new(json_array_get(json_object_get(root, "items"), 3), "launch",
                      json_integer(1));
}
static void edit_hash(json_t *root) {
  json_object_set_new(root, "workload_hash", json_string("0123456789abcdef"));
}
static void edit_merge_count(json_t *root) {
  json_array_remove(json_object_get(root, "merge"), 3);
}
static void edit_merge_slot(json_t *root) {
  json_array_set_new(json_array_get(json_object_get(root, "merge"), 0), 1, json_integer(12));
}
static void edit_kind(json_t *root) {
  json_object_set_new(json_array_get(json_object_get(root, "launches"), 0), "kind",
                      json_string("fused"));
}
static void edit_format(json_t *root) {
  json_object_set_new(root, "format", json_string("anvil-plan/9"));
}
static void edit_output(json_t *root) {
  json_object_set_new(json_array_get(json_object_get(root, "items"), 0), "output",
                      json_string("half"));
}

START_TEST(test_bad_plan_files) {
  static const struct {
    edit_fn edit;
    int code;
    const char *path, *text;
  } cases[] = {
      {edit_unknown_key, AV_ERR_SCHEMA, "items[2].ctaa", "unknown key 'ctaa'; expected one of: launch"},
      {edit_node_range, AV_ERR_RANGE, "items[4].segments[1][0]", "99 is out of range"},
      {edit_end_range, AV_ERR_RANGE, "items[0].segments[0][2]", "1000 is out of range"},
      {edit_query_range, AV_ERR_RANGE, "items[1].queries[0]", "4 is out of range"},
      {edit_launch_range, AV_ERR_RANGE, "items[3].launch", "1 is out of range"},
      {edit_hash, AV_ERR_MISMATCH, "workload_hash", "plan file does not match its workload"},
      {edit_merge_count, AV_ERR_MISMATCH, "merge", "has 3 lists; the workload has 4 requests"},
      {edit_merge_slot, AV_ERR_RANGE, "merge[0][1]", "12 is out of range"},
      {edit_kind, AV_ERR_NAME, "launches[0].kind", "unknown kernel kind 'fused'; expected one of: partial, persistent, decode, merge"},
      {edit_format, AV_ERR_SCHEMA, "format", "unsupported plan format 'anvil-plan/9'"},
      {edit_output, AV_ERR_NAME, "items[0].output", "unknown output 'half'"},
  };
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 3, 0);
  char path[256];
  tmp_path(path, sizeof path, "bad");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *j = av_plan_to_json(p, w);
    cases[i].edit(j);
    av_error_t err;
    av_error_clear(&err);
    AV_CK_OK(av_json_dump_file(j, path, &err), &err);
    json_decref(j);
    av_plan_t *q = (av_plan_t *)1;
    av_workload_t *wq = (av_workload_t *)1;
    int rc = av_plan_load(path, &q, &wq, &err);
    char buf[1600];
    av_error_format(&err, buf, sizeof buf);
    ck_assert_msg(rc == cases[i].code, "case %zu: expected %s, got %s: %s", i,
                  av_error_code_name(cases[i].code), av_error_code_name(rc), buf);
    ck_assert_msg(strcmp(err.path, cases[i].path) == 0, "case %zu: path '%s', expected '%s'", i,
                  err.path, cases[i].path);
    ck_assert_msg(strstr(err.message, cases[i].text), "case %zu: '%s' lacks '%s'", i,
                  err.message, cases[i].text);
    ck_assert_str_eq(err.source, path);
    ck_assert_ptr_null(q);
    ck_assert_ptr_null(wq);
  }
  remove(path);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_malformed_plan_file) {
  const char *path = "tests/data/plans/malformed.json";
  av_plan_t *q;
  av_workload_t *wq;
  av_error_t err;
  av_error_clear(&err);
  ck_assert_int_eq(av_plan_load(path, &q, &wq, &err), AV_ERR_PARSE);
  ck_assert_msg(strstr(err.source, "malformed.json:5:"), "source '%s'", err.source);
  av_error_clear(&err);
  ck_assert_int_eq(av_plan_load("tests/data/plans/duplicate_key.json", &q, &wq, &err),
                   AV_ERR_PARSE);
  ck_assert_msg(strstr(err.message, "duplicate"), "message '%s'", err.message);
  av_error_clear(&err);
  ck_assert_int_eq(av_plan_load("tests/data/plans/no_such_file.json", &q, &wq, &err), AV_ERR_IO);
}
END_TEST

static Suite *plan_json_suite(void) {
  Suite *s = suite_create("plan_json");
  TCase *tc = tcase_create("plan_json");
  tcase_add_test(tc, test_json_round_trip);
  tcase_add_test(tc, test_bad_plan_files);
  tcase_add_test(tc, test_malformed_plan_file);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(plan_json_suite(), 0); }
