/* The profiler's queue step (docs/validation.md#profiling): the one-CTA and full-wave queue
 * plans, the reduction of a traced run to first- and next-item times, and the curves in the
 * .details.json file. The measurement itself needs a GPU (anvil profile). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"
#include "support.h"
#include "profiler/profile.h"

static const av_tile_t PERS = {AV_KERNEL_PERSISTENT, 16, 64, 4};
static const av_tile_t PART = {AV_KERNEL_PARTIAL, 16, 64, 4};

START_TEST(test_details) {
  av_profile_t p;
  memset(&p, 0, sizeof p);
  snprintf(p.gpu, sizeof p.gpu, "test-gpu");
  p.n_queue = 1;
  av_profile_queue_t *c = &p.queue[0];
  c->tile = PERS;
  c->head_dim = 128;
  c->dtype = AV_DTYPE_FP16;
  c->n = 2;
  c->kv[0] = 32, c->kv[1] = 128;
  c->first_us[0] = 4.88, c->next_us[0] = 2.53;
  c->first_us[1] = 7.49, c->next_us[1] = 5.52;
  c->loaded_ctas = 396;
  c->loaded_first_us[0] = 9.84, c->loaded_next_us[0] = 3.56;
  c->loaded_first_us[1] = 17.78, c->loaded_next_us[1] = 11.39;
  json_t *d = av_profile_details_json(&p);
  const json_t *q = json_object_get(d, "queue");
  ck_assert_int_eq(json_integer_value(json_object_get(q, "items")), AV_PROF_QUEUE_ITEMS);
  const json_t *v = json_array_get(json_object_get(q, "variants"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(v, "kind")), "persistent");
  ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(v, "n_kv"), 1)), 128);
  ck_assert_double_eq_tol(json_number_value(json_array_get(json_object_get(v, "next_us"), 1)),
                          5.52, 1e-9);
  ck_assert_int_eq(json_integer_value(json_object_get(v, "loaded_ctas")), 396);
  ck_assert_double_eq_tol(
      json_number_value(json_array_get(json_object_get(v, "loaded_first_us"), 0)), 9.84, 1e-9);
  json_decref(d);
  /* not measured: no key, and the profile file itself never carries it */
  p.n_queue = 0;
  d = av_profile_details_json(&p);
  ck_assert_ptr_null(json_object_get(d, "queue"));
  json_decref(d);
  p.n_queue = 1;
  d = av_profile_to_json(&p);
  ck_assert_ptr_null(json_object_get(d, "queue"));
  json_decref(d);
  av_profile_free(&p);
}
END_TEST

START_TEST(test_profiler_queue) {
  av_error_t err;
  av_error_clear(&err);
  int64_t kv[AV_PROF_QUEUE_ITEMS];
  for (int i = 0; i < AV_PROF_QUEUE_ITEMS; i++) kv[i] = 256;
  av_workload_t *w = av_profile_workload(1, kv, AV_PROF_QUEUE_ITEMS, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  av_plan_t *p = av_profile_queue_plan(w, &PERS, 1, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 1);
  ck_assert_int_eq(p->n_items, AV_PROF_QUEUE_ITEMS);
  for (int i = 0; i < p->n_items; i++) {
    ck_assert_int_eq(p->items[i].cta, 0);
    ck_assert_int_eq(p->items[i].order, i);
  }
  av_plan_destroy(p);
  /* a wave: the roots split evenly, CTA c runs roots [c x per, (c + 1) x per) in order */
  p = av_profile_queue_plan(w, &PERS, 4, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 4);
  for (int i = 0; i < p->n_items; i++) {
    ck_assert_int_eq(p->items[i].cta, i / (AV_PROF_QUEUE_ITEMS / 4));
    ck_assert_int_eq(p->items[i].order, i % (AV_PROF_QUEUE_ITEMS / 4));
  }
  av_plan_destroy(p);
  ck_assert_ptr_null(av_profile_queue_plan(w, &PART, 1, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);
  ck_assert_ptr_null(av_profile_queue_plan(w, &PERS, 3, &err));
  ck_assert_ptr_nonnull(strstr(err.message, "divide evenly"));
  av_workload_destroy(w);

  /* two queues of 2: items 0 and 2 first (from their CTA's start), 1 and 3 next; the merge
   * record (item -1) is not an item */
  json_t *tr = json_pack("{s:[{s:i,s:i,s:f,s:f},{s:i,s:i,s:f,s:f},{s:i,s:i,s:f,s:f},"
                         "{s:i,s:i,s:f,s:f},{s:i,s:i,s:f,s:f}]}", "ctas",
                         "item", 0, "head", 0, "start_us", 0.0, "end_us", 5.0,
                         "item", 1, "head", 0, "start_us", 5.0, "end_us", 8.0,
                         "item", 2, "head", 0, "start_us", 0.0, "end_us", 7.0,
                         "item", 3, "head", 0, "start_us", 7.0, "end_us", 12.0,
                         "item", -1, "head", 0, "start_us", 12.0, "end_us", 20.0);
  double first, next;
  av_error_clear(&err);
  AV_CK_OK(av_profile_queue_times(tr, 4, 2, &first, &next, &err), &err);
  ck_assert_double_eq_tol(first, 6.0, 1e-12);
  ck_assert_double_eq_tol(next, 4.0, 1e-12);
  ck_assert_int_eq(av_profile_queue_times(tr, 6, 2, &first, &next, &err), AV_ERR_RANGE);
  ck_assert_ptr_nonnull(strstr(err.message, "item 4"));
  ck_assert_int_eq(av_profile_queue_times(tr, 4, 1, &first, &next, &err), AV_ERR_RANGE);
  json_decref(tr);
}
END_TEST

/* The dispatch gaps (profiler/measure_dispatch.c) on a hand-made trace: SM 0 runs items
 * 0, 1 from 0 us (ends 4, 6); item 2 refills at 4.5 (gap 0.5), item 3 at 7 (gap 1); SM 1's one
 * CTA has no refill. As a plan of launches 0 (items 0, 1) and 1 (items 2, 3) on one stream,
 * as the profiler's serial plan of four launches (one item each), the stream gaps are the
 * next item's start minus the previous one's end. */
START_TEST(test_dispatch_gaps) {
  json_t *tr = json_pack("{s:[{s:i,s:i,s:f,s:f},{s:i,s:i,s:f,s:f},{s:i,s:i,s:f,s:f},"
                         "{s:i,s:i,s:f,s:f},{s:i,s:i,s:f,s:f}]}", "ctas",
                         "item", 0, "sm", 0, "start_us", 0.0, "end_us", 4.0,
                         "item", 1, "sm", 0, "start_us", 0.0, "end_us", 6.0,
                         "item", 2, "sm", 0, "start_us", 4.5, "end_us", 8.0,
                         "item", 3, "sm", 0, "start_us", 7.0, "end_us", 9.0,
                         "item", -1, "sm", 1, "start_us", 0.0, "end_us", 1.0);
  av_error_t err;
  av_error_clear(&err);
  double gap;
  int32_t n;
  AV_CK_OK(av_profile_refill_gap(tr, &gap, &n, &err), &err);
  ck_assert_int_eq(n, 2);
  ck_assert_double_eq_tol(gap, 0.75, 1e-12);
  int64_t kv[4] = {16, 16, 16, 16};
  av_workload_t *w = av_profile_workload(1, kv, 4, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  av_plan_t *p = av_profile_plan(w, &PART, 1, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_launches, 4); /* serial: one launch per root, one stream */
  AV_CK_OK(av_profile_stream_gap(tr, p, &gap, &err), &err);
  /* launches 0..3 hold items 0..3: gaps 0 - 4, 4.5 - 6, 7 - 8 */
  ck_assert_double_eq_tol(gap, (-4.0 - 1.5 - 1.0) / 3, 1e-12);
  av_plan_destroy(p);
  av_workload_destroy(w);
  json_decref(tr);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("queue");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_details);
  tcase_add_test(tc, test_profiler_queue);
  tcase_add_test(tc, test_dispatch_gaps);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
