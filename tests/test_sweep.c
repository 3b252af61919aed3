/* Sweeps in experiment files (pipeline/sweep.h): seed ranges, arithmetic and geometric
 * generators and lists expand to the cross product of their values, in order, each point
 * named by its values and built exactly as the spec written out by hand; scheduler grids
 * expand to labelled variants with those parameter values. Bad sweeps are data
 * (tests/bad_input/sweep_*). */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "pipeline/experiment.h"
#include "pipeline/sweep.h"
#include "tests/support.h"

static av_experiment_t *load(const char *text) {
  av_error_t err;
  av_error_clear(&err);
  json_t *root = NULL;
  AV_CK_OK(av_json_load_string(text, "exp", &root, &err), &err);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_from_json(root, "experiments/sweep.json", &e, &err), &err);
  json_decref(root);
  return e;
}

START_TEST(seeds_times_grid) {
  av_experiment_t *e = load(
      "{\"name\": \"s\", \"heads\": [[32, 8], [16, 2]], \"workloads\": ["
      " {\"kind\": \"random\", \"name\": \"r\", \"seeds\": {\"from\": 5, \"to\": 9, \"step\": 2},"
      "  \"grid\": {\"max_requests\": {\"from\": 8, \"to\": 40, \"times\": 2}}}],"
      " \"schedulers\": [\"query_centric\"]}");
  /* seeds 5, 7, 9 x max_requests 8, 16, 32 x two head configurations */
  ck_assert_int_eq(e->n_batches, 18);
  ck_assert_str_eq(e->batches[0].name, "r[seed=5,max_requests=8]");
  ck_assert_str_eq(e->batches[2].name, "r[seed=5,max_requests=16]");
  ck_assert_str_eq(e->batches[17].name, "r[seed=9,max_requests=32]");
  ck_assert_int_eq(e->batches[1].w->heads.hq, 16);
  /* A point is the spec with its values written in. */
  av_error_t err;
  av_error_clear(&err);
  json_t *spec = json_pack("{s:s, s:i, s:i}", "kind", "random", "seed", 7, "max_requests", 16);
  av_jctx_t c = {.source = "test", .err = &err};
  av_workload_t *w = av_workload_from_json(spec, &e->heads[0], &c, "");
  AV_CK_OK(w ? AV_OK : err.code, &err);
  ck_assert_str_eq(e->batches[8].name, "r[seed=7,max_requests=16]");
  ck_assert(av_workload_equal(w, e->batches[8].w));
  ck_assert(!av_workload_equal(w, e->batches[2].w));
  av_workload_destroy(w);
  json_decref(spec);
  av_experiment_destroy(e);
}
END_TEST

START_TEST(lists_and_unnamed_specs) {
  av_experiment_t *e = load(
      "{\"name\": \"s\", \"workloads\": ["
      " {\"kind\": \"levels\", \"B\": [1, 4], \"grid\": {\"L\": [[128, 32], [64, 8]]}},"
      " {\"kind\": \"ratio\", \"batch\": 8, \"context\": 1000,"
      "  \"grid\": {\"shared_ratio\": {\"from\": 0.25, \"to\": 0.75, \"step\": 0.25}}}],"
      " \"schedulers\": [\"query_centric\"]}");
  ck_assert_int_eq(e->n_batches, 5);
  ck_assert_str_eq(e->batches[0].name, "levels-0[L=[128,32]]");
  ck_assert_int_eq(e->batches[1].w->nodes[0].kv_len_tokens, 64);
  ck_assert_str_eq(e->batches[2].name, "ratio-1[shared_ratio=0.25]");
  ck_assert_str_eq(e->batches[4].name, "ratio-1[shared_ratio=0.75]");
  ck_assert_int_eq(e->batches[4].spec_index, 1);
  av_experiment_destroy(e);
}
END_TEST

START_TEST(scheduler_grid_variants) {
  av_experiment_t *e = load(
      "{\"name\": \"s\", \"workloads\": [{\"kind\": \"levels\", \"B\": [1, 4], \"L\": [64, 8]}],"
      " \"schedulers\": [\"query_centric\", {\"name\": \"query_centric\", \"label\": \"qc\","
      "  \"params\": {\"split\": \"fixed\"}, \"grid\": {\"splits\": [2, 8], "
      "  \"tile_n\": {\"from\": 32, \"to\": 64, \"times\": 2}}}]}");
  ck_assert_int_eq(e->n_scheds, 5);
  ck_assert_str_eq(e->scheds[1].label, "qc[splits=2,tile_n=32]");
  ck_assert_str_eq(e->scheds[4].label, "qc[splits=8,tile_n=64]");
  ck_assert_int_eq(av_params_int(&e->scheds[4].params, "splits"), 8);
  ck_assert_int_eq(av_params_int(&e->scheds[4].params, "tile_n"), 64);
  ck_assert_str_eq(av_params_enum(&e->scheds[4].params, "split"), "fixed");
  ck_assert_int_eq(e->scheds[0].entry, 0);
  ck_assert_int_eq(e->scheds[4].entry, 1);
  av_experiment_destroy(e);
}
END_TEST

START_TEST(points_are_computed_not_stored) {
  av_error_t err;
  av_error_clear(&err);
  json_t *grid = json_pack("{s:{s:i, s:i}, s:[s, s]}", "n", "from", 1, "to", 100000, "m",
                           "a", "b");
  av_jctx_t c = {.source = "test", .err = &err};
  av_sweep_t s;
  AV_CK_OK(av_sweep_parse(&c, grid, "grid", NULL, NULL, &s), &err);
  ck_assert_int_eq(s.n_points, 200000);
  json_t *point = json_object();
  AV_CK_OK(av_sweep_apply(&s, 199999, point), &err);
  ck_assert_int_eq(json_integer_value(json_object_get(point, "n")), 100000);
  ck_assert_str_eq(json_string_value(json_object_get(point, "m")), "b");
  char label[64];
  av_sweep_label(&s, 2, label, sizeof label);
  ck_assert_str_eq(label, "n=2,m=a");
  json_decref(point);
  json_decref(grid);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sweep");
  TCase *tc = tcase_create("sweep");
  tcase_add_test(tc, seeds_times_grid);
  tcase_add_test(tc, lists_and_unnamed_specs);
  tcase_add_test(tc, scheduler_grid_variants);
  tcase_add_test(tc, points_are_computed_not_stored);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
