/* Workload specs in experiment files: every kind read from JSON, their errors with key paths
 * (data: tests/data/workloads/bad_specs.json), and explicit forests round-tripping. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"
#include "tests/support.h"

#define DATA AV_TEST_DIR "/data/workloads/"

static av_workload_t *from_json_text(const char *text, av_error_t *err) {
  json_t *spec;
  av_error_clear(err);
  if (av_json_load_string(text, "inline", &spec, err)) return NULL;
  av_jctx_t c = {.source = "inline", .err = err};
  av_workload_t *w = av_workload_from_json(spec, NULL, &c, "workloads[0]");
  json_decref(spec);
  return w;
}

START_TEST(test_json_errors) {
  av_error_t err;
  av_error_clear(&err);
  json_t *root;
  AV_CK_OK(av_json_load_file(DATA "bad_specs.json", &root, &err), &err);
  json_t *cases = json_object_get(root, "cases");
  ck_assert_uint_gt(json_array_size(cases), 30);
  for (size_t i = 0; i < json_array_size(cases); i++) {
    json_t *k = json_array_get(cases, i);
    const char *name = json_string_value(json_object_get(k, "name"));
    av_error_clear(&err);
    av_jctx_t c = {.source = "exp.json", .err = &err};
    av_workload_t *w = av_workload_from_json(json_object_get(k, "spec"), NULL, &c, "workloads[1]");
    char buf[1600];
    ck_assert_msg(w == NULL, "%s: accepted", name);
    ck_assert_msg(strcmp(av_error_code_name(err.code),
                         json_string_value(json_object_get(k, "code"))) == 0,
                  "%s: code %s (%s)", name, av_error_code_name(err.code),
                  av_error_format(&err, buf, sizeof buf));
    ck_assert_msg(strcmp(err.path, json_string_value(json_object_get(k, "path"))) == 0,
                  "%s: path '%s' (%s)", name, err.path, av_error_format(&err, buf, sizeof buf));
    ck_assert_msg(strstr(err.message, json_string_value(json_object_get(k, "message"))) != NULL,
                  "%s: message '%s'", name, err.message);
    ck_assert_str_eq(err.source, "exp.json");
  }
  json_decref(root);
  /* An integer beyond int64 is a syntax error with line and column. */
  av_workload_t *w = from_json_text("{\"kind\": \"levels\",\n \"B\": [1, 99999999999999999999]}", &err);
  ck_assert_ptr_null(w);
  ck_assert_int_eq(err.code, AV_ERR_PARSE);
  ck_assert_ptr_nonnull(strstr(err.source, "inline:2:"));
}
END_TEST

START_TEST(test_json_kinds) {
  av_error_t err;
  av_workload_t *w = from_json_text(
      "{\"kind\": \"levels\", \"B\": [1, 4], \"L\": [64, 32], \"heads\": [16, 8], \"head_dim\": 64,"
      " \"dtype\": \"bf16\", \"block_size\": 32, \"name\": \"mine\"}", &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->heads.hq, 16);
  ck_assert_int_eq(w->heads.hkv, 8);
  ck_assert_int_eq(w->heads.head_dim, 64);
  ck_assert_int_eq(w->heads.dtype, AV_DTYPE_BF16);
  ck_assert_int_eq(w->block_size_tokens, 32);
  ck_assert_str_eq(w->name, "mine");
  av_workload_destroy(w);
  const char *specs[] = {
      "{\"kind\": \"kary\", \"arity\": 4, \"depth\": 3, \"L\": [512, 64, 16]}",
      "{\"kind\": \"degenerate\", \"arity\": 2, \"depth\": 5, \"L\": [128]}",
      "{\"kind\": \"ratio\", \"batch\": 16, \"context\": 4096, \"shared_ratio\": 0.75}",
      "{\"kind\": \"random\", \"seed\": 9, \"max_depth\": 5, \"max_requests\": 100}",
      "{\"kind\": \"block_table\", \"block_size\": 16, \"requests\": [[0, 1, 2], "
      "{\"blocks\": [0, 1, 3], \"last_block_tokens\": 5, \"block_size\": 16}, [0, 4]]}",
  };
  const int32_t nodes[] = {21, 9, 17, -1, 5}, reqs[] = {16, 5, 16, -1, 3};
  for (int i = 0; i < 5; i++) {
    w = from_json_text(specs[i], &err);
    AV_CK_OK(err.code, &err);
    if (nodes[i] >= 0) ck_assert_int_eq(w->n_nodes, nodes[i]);
    if (reqs[i] >= 0) ck_assert_int_eq(w->n_requests, reqs[i]);
    av_workload_destroy(w);
  }
  /* The block table's block size becomes the workload's. */
  w = from_json_text("{\"kind\": \"block_table\", \"requests\": [{\"blocks\": [4], "
                     "\"block_size\": 64}, [4, 5]]}", &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->block_size_tokens, 64);
  ck_assert_int_eq(w->nodes[1].kv_len_tokens, 64);
  av_workload_destroy(w);
  /* Caller defaults fill what the spec leaves out. */
  av_heads_t d = {.hq = 64, .hkv = 8, .head_dim = 256, .dtype = AV_DTYPE_BF16};
  json_t *spec = json_pack("{s:s,s:[i],s:[i]}", "kind", "levels", "B", 3, "L", 7);
  w = av_workload_from_json(spec, &d, NULL, NULL);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_eq(w->heads.hq, 64);
  ck_assert_int_eq(w->heads.head_dim, 256);
  av_workload_destroy(w);
  json_decref(spec);
}
END_TEST

START_TEST(test_explicit_round_trip) {
  av_error_t err;
  av_error_clear(&err);
  av_random_spec_t spec = av_test_random_spec(7);
  av_workload_t *src[3];
  src[0] = av_workload_random(&spec, NULL, &err);
  const int64_t B[] = {1, 3, 9}, L[] = {100, 10, 1};
  src[1] = av_test_levels(B, L, 3);
  src[2] = from_json_text("{\"kind\": \"explicit\", \"heads\": [8, 8], \"nodes\": ["
                          "{\"parent\": -1, \"kv_len\": 512}, {\"parent\": 0, \"kv_len\": 64},"
                          "{\"parent\": -1, \"kv_len\": 3}], \"requests\": [1, 1, 0, 2]}",
                          &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(src[2]->nodes[0].share, 3);
  ck_assert_int_eq(src[2]->request_kv_tokens[2], 512);
  for (int i = 0; i < 3; i++) {
    json_t *j = av_workload_to_json(src[i]);
    char *text = json_dumps(j, 0);
    av_workload_t *back = from_json_text(text, &err);
    AV_CK_OK(err.code, &err);
    ck_assert(av_workload_equal(src[i], back));
    ck_assert_uint_eq(av_workload_hash(src[i]), av_workload_hash(back));
    ck_assert_str_eq(src[i]->name, back->name);
    ck_assert_int_eq(src[i]->block_size_tokens, back->block_size_tokens);
    free(text);
    json_decref(j);
    av_workload_destroy(back);
  }
  for (int i = 0; i < 3; i++) av_workload_destroy(src[i]);
}
END_TEST

static Suite *workload_json_suite(void) {
  Suite *s = suite_create("workload_json");
  TCase *tc = tcase_create("workload_json");
  tcase_add_test(tc, test_json_errors);
  tcase_add_test(tc, test_json_kinds);
  tcase_add_test(tc, test_explicit_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(workload_json_suite(), 0); }
