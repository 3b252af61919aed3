/* Plan module: hand-built plans on small `levels` forests. Correct plans pass the checker and
 * the fp64 reference; each checker rule has a plan that breaks exactly it; plan files round
 * trip byte for byte and bad ones are rejected with located messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proofs/proofs.h"
#include "core/plan.h"
#include "tests/support.h"

/* B=[1,2,4], L=[64,32,16]: 7 nodes, 4 requests of 112 tokens each; 32/8 heads (group 4). */
static av_workload_t *small_forest(void) {
  int64_t B[] = {1, 2, 4}, L[] = {64, 32, 16};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 3, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  return w;
}

static av_tile_t tile_of(int m) {
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = m, .n_tokens = 64, .warps = 4};
  return t;
}

/* Request r's path nodes root first; returns the depth. */
static int32_t path_of(const av_workload_t *w, int32_t r, int32_t *nodes) {
  int32_t n = 0, tmp[64];
  for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) tmp[n++] = u;
  for (int32_t i = 0; i < n; i++) nodes[i] = tmp[n - 1 - i];
  return n;
}

/* Segments covering path tokens [b, e) of request r. */
static int32_t path_segs(const av_workload_t *w, int32_t r, int64_t b, int64_t e,
                         av_segment_t *segs) {
  int32_t nodes[64], n = path_of(w, r, nodes), ns = 0;
  int64_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t len = w->nodes[nodes[i]].kv_len_tokens;
    int64_t lo = b > off ? b : off, hi = e < off + len ? e : off + len;
    if (lo < hi) segs[ns++] = (av_segment_t){nodes[i], lo - off, hi - off};
    off += len;
  }
  return ns;
}

/* Query-centric: request r in `pieces` even cuts of its path (1 = one FINAL item). With
 * `ctas` > 0 the launch is persistent and items go round-robin over the CTAs. */
static av_plan_t *plan_qc(const av_workload_t *w, int pieces, int ctas) {
  av_plan_t *p = av_plan_create(w, "test_qc");
  ck_assert_ptr_nonnull(p);
  av_tile_t t = tile_of(16);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &t, ctas), 0);
  int32_t k = 0;
  for (int32_t r = 0; r < w->n_requests; r++) {
    int64_t len = w->request_kv_tokens[r];
    for (int i = 0; i < pieces; i++) {
      av_segment_t segs[64];
      int32_t ns = path_segs(w, r, i * len / pieces, (i + 1) * len / pieces, segs);
      int32_t cta = ctas ? k % ctas : -1, order = ctas ? k / ctas : -1;
      ck_assert_int_ge(av_plan_add_item(p, 0, &r, 1, segs, ns,
                                        pieces > 1 ? AV_OUT_PARTIAL : AV_OUT_FINAL, cta, order),
                       0);
      k++;
    }
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  return p;
}

/* KV-centric: one PARTIAL item per node over every request below it. */
static av_plan_t *plan_nodes(const av_workload_t *w, int m_rows) {
  av_plan_t *p = av_plan_create(w, "test_nodes");
  av_tile_t t = tile_of(m_rows);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &t, 0), 0);
  for (int32_t u = 0; u < w->n_nodes; u++) {
    av_segment_t s = {u, 0, w->nodes[u].kv_len_tokens};
    int32_t b = w->node_req_offsets[u], n = w->node_req_offsets[u + 1] - b;
    ck_assert_int_ge(av_plan_add_item(p, 0, w->node_reqs + b, n, &s, 1, AV_OUT_PARTIAL, -1, -1),
                     0);
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  return p;
}

static void expect_exact(const av_plan_t *p, const av_workload_t *w) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_check(p, w, &err), &err);
  av_reference_opts_t o = {.seed = 7};
  av_reference_result_t res;
  AV_CK_OK(av_reference_run(p, w, &o, &res, &err), &err);
  ck_assert_int_eq(res.checked, w->n_requests * av_heads_group(&w->heads));
  ck_assert_msg(res.max_rel_err < 1e-12, "rel err %g (request %d)", res.max_rel_err,
                res.worst_request);
}

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
  av_workload_t *w = small_forest();
  av_plan_t *plans[] = {plan_qc(w, 1, 0), plan_qc(w, 3, 0), plan_qc(w, 5, 3), plan_nodes(w, 16)};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
    expect_exact(plans[i], w);
    av_plan_destroy(plans[i]);
  }
  av_workload_destroy(w);
}
END_TEST

/* A merge order other than slot order is honoured, and changes nothing numerically. */
START_TEST(test_explicit_merge_order) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_nodes(w, 16);
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
  expect_exact(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_reference_subset_and_dim) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 3, 0);
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
  av_workload_t *w = small_forest();
  av_plan_t *a = plan_qc(w, 3, 0), *b = plan_qc(w, 3, 0), *c = plan_qc(w, 1, 0);
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
  av_workload_t *w = small_forest();
  av_plan_t *p = av_plan_create(w, "grow");
  av_tile_t t = tile_of(16);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &t, 0), 0);
  int32_t r = 0;
  for (int64_t i = 0; i < 64; i++) {  /* request 0's root in 64 one-token items */
    av_segment_t s = {0, i, i + 1};
    ck_assert_int_eq(av_plan_add_item(p, 0, &r, 1, &s, 1, AV_OUT_PARTIAL, -1, -1), i);
  }
  for (int32_t k = 1; k <= 48; k++) {  /* the rest of request 0's path */
    av_segment_t segs[3];
    int32_t ns = path_segs(w, 0, 64 + k - 1, 64 + k, segs);
    ck_assert_int_ge(av_plan_add_item(p, 0, &r, 1, segs, ns, AV_OUT_PARTIAL, -1, -1), 0);
  }
  for (int32_t q = 1; q < 4; q++) {
    av_segment_t segs[3];
    int32_t ns = path_segs(w, q, 0, 112, segs);
    ck_assert_int_ge(av_plan_add_item(p, 0, &q, 1, segs, ns, AV_OUT_FINAL, -1, -1), 0);
  }
  ck_assert_int_eq(av_plan_add_item(p, 0, &r, -1, NULL, 0, AV_OUT_FINAL, -1, -1), -1);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  ck_assert_int_eq(p->n_slots, 64 + 48);
  ck_assert_int_ge(p->cap_items, p->n_items);
  expect_exact(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* --- one broken plan per checker rule -------------------------------------------- */

START_TEST(test_gap) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_nodes(w, 16);
  int32_t leaf = w->request_node[2];
  p->segments[leaf].end = 8;  /* item u covers node u; leaf holds request 2 only */
  char text[128];
  snprintf(text, sizeof text, "request 2, node %d, tokens [8, 16) are covered by no item", leaf);
  expect_broken(p, w, AV_ERR_PLAN, text);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_overlap) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 3, 0);
  int32_t r = 1;
  av_segment_t s = {0, 0, 8};
  ck_assert_int_eq(av_plan_add_item(p, 0, &r, 1, &s, 1, AV_OUT_PARTIAL, -1, -1), 12);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  expect_broken(p, w, AV_ERR_PLAN, "request 1, node 0, tokens [0, 8) are covered by both item 12 and item 3");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_off_path) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 1, 0);
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
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 2, 0);  /* request r owns slots 2r, 2r+1 */
  const int32_t l0[] = {0, 1, -1}, l1[] = {2, 3, 3, -1}, l2[] = {4, 5, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN, "slot 3 is merged twice (into request 1 and request 1)");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_wrong_request) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 2, 0);
  const int32_t l0[] = {0, 1, -1}, l1[] = {2, 4, -1}, l2[] = {3, 5, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN, "request 1's merge list has slot 4, which belongs to request 2");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_never_merged) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 2, 0);
  const int32_t l0[] = {0, 1, -1}, l1[] = {2, 3, -1}, l2[] = {4, -1}, l3[] = {6, 7, -1};
  const int32_t *lists[] = {l0, l1, l2, l3};
  set_merge(p, lists);
  expect_broken(p, w, AV_ERR_PLAN, "slot 5 (item 5, request 2) is never merged");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_no_output) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 2, 0);
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
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 1, 0);
  p->items[2].n_seg = 2;  /* request 2's FINAL item loses its leaf */
  expect_broken(p, w, AV_ERR_PLAN, "item 2 is FINAL but covers 96 of request 2's 112 KV tokens");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_final_and_other_item) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 1, 0);
  int32_t r = 3;
  av_segment_t s = {0, 0, 1};
  ck_assert_int_ge(av_plan_add_item(p, 0, &r, 1, &s, 1, AV_OUT_PARTIAL, -1, -1), 0);
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
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_nodes(w, 8);
  expect_broken(p, w, AV_ERR_PLAN,
                "item 0 has 4 queries x GQA group 4 = 16 rows, more than its tile's m_rows 8");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_duplicate_query) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_nodes(w, 16);
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
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 2, 3);
  expect_exact(p, w);
  p->items[4].cta = 3;
  expect_broken(p, w, AV_ERR_PLAN, "item 4: cta 3 is outside launch 0's persistent grid [0, 3)");
  p->items[4].cta = 0;  /* item 0 sits at (0, 0) */
  p->items[4].order = 0;
  expect_broken(p, w, AV_ERR_PLAN, "items 0 and 4 both sit at cta 0, order 0 of launch 0");
  p->items[4].order = -2;
  expect_broken(p, w, AV_ERR_PLAN, "item 4: queue position (order) -2 is negative");
  av_plan_destroy(p);
  p = plan_qc(w, 2, 0);
  p->items[1].cta = 0;
  expect_broken(p, w, AV_ERR_PLAN, "item 1: cta 0 / order -1 given, but launch 0 is not persistent");
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_bad_indices) {
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 1, 0);
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
  av_workload_t *w = small_forest();
  int64_t B[] = {1, 2, 4}, L[] = {64, 32, 17};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w2 = av_workload_from_levels(B, L, 3, &h, &err);
  AV_CK_OK(w2 ? AV_OK : err.code, &err);
  av_plan_t *p = plan_qc(w, 1, 0);
  expect_broken(p, w2, AV_ERR_MISMATCH, "plan was made for workload hash");
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_workload_destroy(w2);
}
END_TEST

/* --- plan files -------------------------------------------------------------------- */

static char *dump(const json_t *j) {
  return json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
}

static void tmp_path(char *out, size_t n, const char *tag) {
  snprintf(out, n, "/tmp/anvil_test_plan_%ld_%s.json", (long)getpid(), tag);
}

START_TEST(test_json_round_trip) {
  av_workload_t *w = small_forest();
  av_plan_t *plans[] = {plan_qc(w, 3, 0), plan_qc(w, 2, 3), plan_nodes(w, 16)};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
    av_plan_t *p = plans[i];
    snprintf(p->params, sizeof p->params, "split=%zu", i);
    json_t *j = av_plan_to_json(p, w);
    ck_assert_ptr_nonnull(j);
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
    json_t *j2 = av_plan_to_json(q, wq);
    char *a = dump(j), *b = dump(j2);
    ck_assert_str_eq(a, b);
    char *file = av_test_read_file(path);
    ck_assert_str_eq(file, a);
    expect_exact(q, wq);
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
  av_workload_t *w = small_forest();
  av_plan_t *p = plan_qc(w, 3, 0);
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

/* The checker's work follows items x segments, not tokens: a million-token prefix costs
 * nothing more than a short one. */
START_TEST(test_long_context_check) {
  int64_t B[] = {1, 64}, L[] = {1 << 20, 1 << 16};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  av_plan_t *p = plan_qc(w, 16, 0);
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
  tcase_add_test(tc, test_json_round_trip);
  tcase_add_test(tc, test_bad_plan_files);
  tcase_add_test(tc, test_malformed_plan_file);
  tcase_add_test(tc, test_long_context_check);
  tcase_add_test(tc, test_kind_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(plan_suite(), 0); }
