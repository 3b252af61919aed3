/* Plan module: hand-built plans on small `levels` forests. Correct plans pass the checker and
 * the fp64 reference; each checker rule has a plan that breaks exactly it; plan files round
 * trip byte for byte and bad ones are rejected with located messages (tests/test_plan_json.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proofs/proofs.h"
#include "core/plan.h"
#include "tests/support.h"

static void expect_broken(const av_plan_t *p, const av_workload_t *w, int code,
                          const char *text) {
  av_error_t err;
  av_error_clear(&err);
  int rc = av_plan_check(p, w, &err);
  char buf[1600];
  av_error_format(&err, buf, sizeof buf);
  ck_assert_msg(rc == code, "expected %s, got %s: %s", av_error_code_name(code),
                av_error_code_name(rc), buf);
  ck_assert_msg(strstr(err.message, text), "message '%s' lacks '%s'", err.message, text);
  /* The reference refuses what the checker refuses. */
  av_reference_result_t res;
  av_error_clear(&err);
  ck_assert_int_eq(av_reference_run(p, w, NULL, &res, &err), code);
}

START_TEST(test_correct_plans) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *plans[] = {av_test_plan_qc(w, 1, 0), av_test_plan_qc(w, 3, 0), av_test_plan_qc(w, 5, 3), av_test_plan_nodes(w, 16)};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
    av_test_expect_exact(plans[i], w);
    av_plan_destroy(plans[i]);
  }
  av_workload_destroy(w);
}
END_TEST

/* A merge order other than slot order is honoured, and changes nothing numerically. */
START_TEST(test_explicit_merge_order) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_nodes(w, 16);
  int32_t nr = w->n_requests, off[16], slots[64];
  for (int32_t r = 0; r <= nr; r++) off[r] = p->merge_offsets[r];
  for (int32_t r = 0; r < nr; r++)  /* each list reversed */
    for (int32_t k = off[r]; k < off[r + 1]; k++)
      slots[k] = p->merge_slots[off[r + 1] - 1 - (k - off[r])];
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_set_merge(p, off, slots, &err), &err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);  /* keeps the explicit order */
  ck_assert_int_eq(p->merge_slots[0], slots[0]);
  ck_assert_int_ne(p->merge_slots[0], 0);
  av_test_expect_exact(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_reference_subset_and_dim) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 3, 0);
  av_error_t err;
  av_error_clear(&err);
  av_reference_opts_t o = {.seed = 3, .dim = 8, .max_requests = 2};
  av_reference_result_t res;
  AV_CK_OK(av_reference_run(p, w, &o, &res, &err), &err);
  ck_assert_int_eq(res.checked, 2 * 4);
  ck_assert(res.max_rel_err < 1e-12);
  ck_assert(res.worst_request == 0 || res.worst_request == 2);
  o.dim = -1;
  ck_assert_int_eq(av_reference_run(p, w, &o, &res, &err), AV_ERR_RANGE);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_stats_and_equal) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *a = av_test_plan_qc(w, 3, 0), *b = av_test_plan_qc(w, 3, 0), *c = av_test_plan_qc(w, 1, 0);
  ck_assert(av_plan_equal(a, b));
  ck_assert(!av_plan_equal(a, c));
  /* another scheduler's name and parameters on the same work: not equal, but the same work
   * (validate then times it once) */
  snprintf(b->scheduler, sizeof b->scheduler, "auto");
  ck_assert(!av_plan_equal(a, b));
  ck_assert(av_plan_same_work(a, b));
  ck_assert(!av_plan_same_work(a, c));
  b->segments[2].end--;
  ck_assert(!av_plan_equal(a, b));
  ck_assert(!av_plan_same_work(a, b));
  av_plan_stats_t s;
  av_plan_stats(a, &s);
  ck_assert_int_eq(s.items, 12);
  ck_assert_int_eq(s.launches, 1);
  ck_assert_int_eq(s.streams, 1);
  ck_assert_int_eq(s.partial_slots, 12);
  ck_assert_int_eq(s.kv_tokens_read, 4 * 112);
  ck_assert(s.kv_bytes == 4.0 * 112 * 8 * 128 * 2 * 2);
  ck_assert(s.partial_bytes == 12.0 * 8 * 4 * (128 * 4 + 4) * 2);
  av_plan_stats(c, &s);
  ck_assert_int_eq(s.partial_slots, 0);
  ck_assert(s.partial_bytes == 0.0);
  /* finalize is idempotent */
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(a, &err), &err);
  AV_CK_OK(av_plan_finalize(a, &err), &err);
  ck_assert_int_eq(a->launches[0].n_items, 12);
  ck_assert_int_eq(a->merge_offsets[4], 12);
  av_plan_destroy(a);
  av_plan_destroy(b);
  av_plan_destroy(c);
  av_plan_destroy(NULL);
  av_workload_destroy(w);
}
END_TEST

/* Many items: arrays grow by doubling and stay consistent. */
START_TEST(test_growth) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_plan_create(w, "grow");
  av_tile_t t = av_test_partial_tile(16);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &t, 0), 0);
  int32_t r = 0;
  for (int64_t i = 0; i < 64; i++) {  /* request 0's root in 64 one-token items */
    av_segment_t s = {0, i, i + 1};
    ck_assert_int_eq(av_plan_add_item(p, 0, (av_item_work_t){&r, 1, &s, 1}, AV_OUT_PARTIAL, -1, -1),
                     i);
  }
  for (int32_t k = 1; k <= 48; k++) {  /* the rest of request 0's path */
    av_segment_t segs[3];
    int32_t ns = av_test_path_segs(w, 0, 64 + k - 1, 64 + k, segs);
    ck_assert_int_ge(
        av_plan_add_item(p, 0, (av_item_work_t){&r, 1, segs, ns}, AV_OUT_PARTIAL, -1, -1), 0);
  }
  for (int32_t q = 1; q < 4; q++) {
    av_segment_t segs[3];
    int32_t ns = av_test_path_segs(w, q, 0, 112, segs);
    ck_assert_int_ge(
        av_plan_add_item(p, 0, (av_item_work_t){&q, 1, segs, ns}, AV_OUT_FINAL, -1, -1), 0);
  }
  ck_assert_int_eq(av_plan_add_item(p, 0, (av_item_work_t){&r, -1, NULL, 0}, AV_OUT_FINAL, -1, -1),
                   -1);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  ck_assert_int_eq(p->n_slots, 64 + 48);
  ck_assert_int_ge(p->cap_items, p->n_items);
  av_test_expect_exact(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* --- one broken plan per checker rule -------------------------------------------- */

START_TEST(test_gap) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_nodes(w, 16);
  int32_t leaf = w->request_node[2];
  p->segments[leaf].end = 8;  /* item u covers node u; leaf holds request 2 only */
  char text[128];
  snprintf(text, sizeof text, "request 2, node %d, tokens [8, 16) are covered by no item", leaf);
  expect_broken(p, w, AV_ERR_PLAN, text);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* A node's last token left out: the end of a node is held to its length, not one short. */
START_TEST(test_gap_last_token) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_nodes(w, 16);
  int32_t leaf = w->request_node[2];
  p->segments[leaf].end = 15;
  char text[128];
  snprintf(text, sizeof text, "request 2, node %d, tokens [15, 16) are covered by no item", leaf);
  expect_broken(p, w, AV_ERR_PLAN, text);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* The query-centric plan of the small forest plus one more item for request 1 over the root's
 * tokens [begin, end), which item 3 already covers: the checker must name the overlap. */
static void expect_overlap(int64_t begin, int64_t end, const char *message) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 3, 0);
  int32_t r = 1;
  av_segment_t s = {0, begin, end};
  ck_assert_int_eq(av_plan_add_item(p, 0, (av_item_work_t){&r, 1, &s, 1}, AV_OUT_PARTIAL, -1, -1),
                   12);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  expect_broken(p, w, AV_ERR_PLAN, message);
  av_plan_destroy(p);
  av_workload_destroy(w);
}

START_TEST(test_overlap) {
  expect_overlap(0, 8, "request 1, node 0, tokens [0, 8) are covered by both item 12 and item 3");
}
END_TEST

/* One token covered twice, everything else once: the checker's overlap rule has no slack
 * (a rule that let one shared token pass would call this plan exact). */
START_TEST(test_overlap_one_token) {
  expect_overlap(63, 64, "tokens [63, 64) are covered by both"); /* the root's last token */
}
END_TEST

START_TEST(test_off_path) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 1, 0);
  int32_t wrong = w->request_node[3];
  p->segments[p->items[0].seg_begin + 2].node = wrong;  /* request 0's leaf -> request 3's */
  char text[160];
  snprintf(text, sizeof text, "item 0, segment 2: node %d is not on the KV path of request 0",
           wrong);
  expect_broken(p, w, AV_ERR_PLAN, text);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Sets request lists from a flat description: lists[r] terminated by -1. */
static void set_merge(av_plan_t *p, const int32_t *const *lists) {
  int32_t off[16] = {0}, slots[64], n = 0;
  for (int32_t r = 0; r < p->n_requests; r++) {
    for (const int32_t *s = lists[r]; *s >= 0; s++) slots[n++] = *s;
    off[r + 1] = n;
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_set_merge(p, off, slots, &err), &err);
}

START_TEST(test_merged_twice) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 2, 0);  /* request r owns slots 2r, 2r+1 */
  const int32_t l0[] = {0, 1, -1}, l1[] = {2, 3, 3, -1}, l2[] = {4, 5, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN, "slot 3 is merged twice (into request 1 and request 1)");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_wrong_request) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 2, 0);
  const int32_t l0[] = {0, 1, -1}, l1[] = {2, 4, -1}, l2[] = {3, 5, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN, "request 1's merge list has slot 4, which belongs to request 2");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_never_merged) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 2, 0);
  const int32_t l0[] = {0, 1, -1}, l1[] = {2, 3, -1}, l2[] = {4, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN, "slot 5 (item 5, request 2) is never merged");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_no_output) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 2, 0);
  const int32_t l0[] = {0, 1, -1}, l1[] = {-1}, l2[] = {4, 5, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN,
                "request 1 gets no output: no FINAL item and an empty merge list");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_final_not_whole_path) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 1, 0);
  p->items[2].n_seg = 2;  /* request 2's FINAL item loses its leaf */
  expect_broken(p, w, AV_ERR_PLAN, "item 2 is FINAL but covers 96 of request 2's 112 KV tokens");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_final_and_other_item) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 1, 0);
  int32_t r = 3;
  av_segment_t s = {0, 0, 1};
  ck_assert_int_ge(av_plan_add_item(p, 0, (av_item_work_t){&r, 1, &s, 1}, AV_OUT_PARTIAL, -1, -1),
                   0);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  expect_broken(p, w, AV_ERR_PLAN,
                "item 3 is FINAL for request 3, but 1 other item(s) also cover request 3");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_rows_exceed_tile) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_nodes(w, 8);
  expect_broken(p, w, AV_ERR_PLAN,
                "item 0 has 4 queries x GQA group 4 = 16 rows, more than its tile's m_rows 8");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_duplicate_query) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_nodes(w, 16);
  int32_t *q = p->item_queries + p->items[0].q_begin;
  q[1] = q[0];
  char text[64];
  snprintf(text, sizeof text, "item 0 lists request %d twice", q[0]);
  expect_broken(p, w, AV_ERR_PLAN, text);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_persistent_queues) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 2, 3);
  av_test_expect_exact(p, w);
  p->items[4].cta = 3;
  expect_broken(p, w, AV_ERR_PLAN, "item 4: cta 3 is outside launch 0's persistent grid [0, 3)");
  p->items[4].cta = 0;  /* item 0 sits at (0, 0) */
  p->items[4].order = 0;
  expect_broken(p, w, AV_ERR_PLAN, "items 0 and 4 both sit at cta 0, order 0 of launch 0");
  p->items[4].order = -2;
  expect_broken(p, w, AV_ERR_PLAN, "item 4: queue position (order) -2 is negative");
  av_plan_destroy(p);
  p = av_test_plan_qc(w, 2, 0);
  p->items[1].cta = 0;
  expect_broken(p, w, AV_ERR_PLAN, "item 1: cta 0 / order -1 given, but launch 0 is not persistent");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_bad_indices) {
  av_workload_t *w = av_test_small_forest();
  av_plan_t *p = av_test_plan_qc(w, 1, 0);
  p->items[1].launch = 5;
  expect_broken(p, w, AV_ERR_PLAN, "item 1: launch 5 is out of range [0, 1)");
  p->items[1].launch = 0;
  p->item_queries[1] = 9;
  expect_broken(p, w, AV_ERR_PLAN, "item 1, query 0: request 9 is out of range [0, 4)");
  p->item_queries[1] = 1;
  p->segments[3].end = 65;
  expect_broken(p, w, AV_ERR_PLAN, "item 1, segment 0: tokens [0, 65) are not a non-empty range");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_wrong_workload) {
  av_workload_t *w = av_test_small_forest();
  int64_t B[] = {1, 2, 4}, L[] = {64, 32, 17};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w2 = av_workload_from_levels(B, L, 3, &h, &err);
  AV_CK_OK(w2 ? AV_OK : err.code, &err);
  av_plan_t *p = av_test_plan_qc(w, 1, 0);
  expect_broken(p, w2, AV_ERR_MISMATCH, "plan was made for workload hash");
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_workload_destroy(w2);
}
END_TEST

/* --- plan files -------------------------------------------------------------------- */

/* The checker's work follows items x segments, not tokens: a million-token prefix costs
 * nothing more than a short one. */
START_TEST(test_long_context_check) {
  int64_t B[] = {1, 64}, L[] = {1 << 20, 1 << 16};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  av_plan_t *p = av_test_plan_qc(w, 16, 0);
  AV_CK_OK(av_plan_check(p, w, &err), &err);
  p->segments[5].begin++;  /* request 0's piece 5 starts one token late */
  ck_assert_int_eq(av_plan_check(p, w, &err), AV_ERR_PLAN);
  ck_assert_msg(strstr(err.message, "request 0, node 0, tokens [348160, 348161) are covered by no item"),
                "%s", err.message);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_kind_names) {
  for (int k = AV_KERNEL_PARTIAL; k <= AV_KERNEL_MERGE; k++) {
    av_kernel_kind_t back;
    ck_assert_int_eq(av_kernel_kind_from_name(av_kernel_kind_name((av_kernel_kind_t)k), &back),
                     AV_OK);
    ck_assert_int_eq(back, k);
  }
  av_kernel_kind_t x;
  ck_assert_int_eq(av_kernel_kind_from_name("fused", &x), AV_ERR_NAME);
  ck_assert_int_eq(av_kernel_kind_from_name(NULL, &x), AV_ERR_NAME);
  ck_assert_str_eq(av_kernel_kind_name((av_kernel_kind_t)9), "unknown");
}
END_TEST

static Suite *plan_suite(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("plan");
  tcase_add_test(tc, test_correct_plans);
  tcase_add_test(tc, test_explicit_merge_order);
  tcase_add_test(tc, test_reference_subset_and_dim);
  tcase_add_test(tc, test_stats_and_equal);
  tcase_add_test(tc, test_growth);
  tcase_add_test(tc, test_gap);
  tcase_add_test(tc, test_overlap);
  tcase_add_test(tc, test_gap_last_token);
  tcase_add_test(tc, test_overlap_one_token);
  tcase_add_test(tc, test_off_path);
  tcase_add_test(tc, test_merged_twice);
  tcase_add_test(tc, test_wrong_request);
  tcase_add_test(tc, test_never_merged);
  tcase_add_test(tc, test_no_output);
  tcase_add_test(tc, test_final_not_whole_path);
  tcase_add_test(tc, test_final_and_other_item);
  tcase_add_test(tc, test_rows_exceed_tile);
  tcase_add_test(tc, test_duplicate_query);
  tcase_add_test(tc, test_persistent_queues);
  tcase_add_test(tc, test_bad_indices);
  tcase_add_test(tc, test_wrong_workload);
  tcase_add_test(tc, test_long_context_check);
  tcase_add_test(tc, test_kind_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(plan_suite(), 0); }
