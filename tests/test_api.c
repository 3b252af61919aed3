/* The public C API (include/anvil/) and the lazy-update rule it shares with `anvil trace`:
 * errors carry the CLI's one line, a block-table plan round-trips through its JSON, the rule
 * accepts exactly the steps whose leaves grow within their last block, a grown plan stays
 * exact, and a planner reuses and re-plans where the rule says. */
#include <stdlib.h>
#include <string.h>

#include "anvil/anvil.h"
#include "pipeline/plan_reuse.h"
#include "proofs/proofs.h"
#include "tests/support.h"

#define API_OK(call, e) ck_assert_msg((call) == ANVIL_OK, "%s", (e)->message)

/* Four requests under one 32-token prompt (2 blocks of 16), each with 20 tokens of its own
 * (blocks 2+2r, 3+2r); kv[r] tokens used. */
static int32_t table[4][5];
static void fill_table(int32_t *kv, int32_t own) {
  for (int r = 0; r < 4; r++) {
    table[r][0] = 0;
    table[r][1] = 1;
    table[r][2] = 2 + 2 * r;
    table[r][3] = 3 + 2 * r;
    table[r][4] = 100 + r;
    kv[r] = 32 + own;
  }
}

START_TEST(test_errors_carry_the_cli_line) {
  anvil_error_t err;
  anvil_target_t *t = NULL;
  ck_assert_int_eq(anvil_target_create("B300", NULL, NULL, 0, &t, &err), ANVIL_ERR_NAME);
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(err.message, "unknown GPU 'B300'"), "%s", err.message);
  API_OK(anvil_target_create(NULL, NULL, NULL, 0, &t, &err), &err);
  anvil_workload_t *w = NULL;
  int64_t B[] = {1, 2}, L[] = {64, 16};
  API_OK(anvil_workload_from_levels(B, L, 2, NULL, &w, &err), &err);
  anvil_plan_t *p = NULL;
  ck_assert_int_eq(anvil_plan(t, w, "nope", NULL, 0, &p, &err), ANVIL_ERR_NAME);
  ck_assert_str_eq(anvil_status_name(err.code), "ANVIL_ERR_NAME");
  ck_assert_int_eq(anvil_status_class(err.code), 1);
  ck_assert_msg(strncmp(err.message, "plan: scheduler: unknown scheduler 'nope'", 41) == 0,
                "%s", err.message);
  const char *bad[] = {"k=0"};
  ck_assert_int_eq(anvil_plan(t, w, "fixed_division", bad, 1, &p, &err), ANVIL_ERR_RANGE);
  int32_t kv[4];
  fill_table(kv, 20);
  kv[2] = 32 + 5 * 16 + 1;  /* more tokens than the row has blocks */
  anvil_workload_t *none = NULL;
  ck_assert_int_eq(anvil_workload_from_block_table(&table[0][0], 5, kv, 4, 16, NULL, &none, &err),
                   ANVIL_ERR_RANGE);
  ck_assert_ptr_null(none);
  ck_assert_msg(strstr(err.message, "kv_tokens[2]"), "%s", err.message);
  ck_assert_int_eq(anvil_target_set_launch(t, "graphs", &err), ANVIL_ERR_NAME);
  ck_assert_msg(strstr(err.message, "unknown launch model 'graphs'"), "%s", err.message);
  /* a target's launch model goes into the plans made against it */
  API_OK(anvil_target_set_launch(t, "graph", &err), &err);
  API_OK(anvil_plan(t, w, "profit_pack", NULL, 0, &p, &err), &err);
  ck_assert_str_eq(anvil_plan_launch(p), "graph");
  char *json = anvil_plan_to_json(p);
  ck_assert_ptr_nonnull(strstr(json, "\"launch_model\": \"graph\""));
  anvil_free(json);
  anvil_plan_destroy(p);
  anvil_target_destroy(t);
  anvil_workload_destroy(w);
}
END_TEST

START_TEST(test_block_table_plan_round_trip) {
  anvil_error_t err;
  anvil_target_t *t;
  anvil_workload_t *w;
  anvil_plan_t *p, *q;
  int32_t kv[4];
  fill_table(kv, 20);
  API_OK(anvil_target_create("H100-SXM", "roofline", NULL, 0, &t, &err), &err);
  API_OK(anvil_workload_from_block_table(&table[0][0], 5, kv, 4, 16, NULL, &w, &err), &err);
  anvil_workload_info_t info;
  anvil_workload_info(w, &info);
  ck_assert_int_eq(info.requests, 4);
  ck_assert_int_eq(info.nodes, 5);          /* the prompt and four own suffixes */
  /* the list holds auto, which the selectors' layer registers, after the six others */
  ck_assert_str_eq(anvil_scheduler_name(6), "auto");
  ck_assert_ptr_null(anvil_scheduler_name(7));
  for (int i = 0; anvil_scheduler_name(i); i++) {
    API_OK(anvil_plan(t, w, anvil_scheduler_name(i), NULL, 0, &p, &err), &err);
    API_OK(anvil_plan_check(p, &err), &err);
    double rel;
    API_OK(anvil_plan_reference(p, 3, 16, 0, &rel, &err), &err);
    ck_assert(rel < 1e-9);
    char *text = anvil_plan_to_json(p);
    API_OK(anvil_plan_from_json(text, "mem.json", &q, &err), &err);
    char *again = anvil_plan_to_json(q);
    ck_assert_str_eq(text, again);
    anvil_plan_counts_t n;
    anvil_plan_counts(q, &n);
    anvil_item_t *items = malloc((size_t)n.items * sizeof *items);
    anvil_plan_items(q, items);
    for (int32_t k = 0; k < n.items; k++) ck_assert(items[k].n_q >= 1 && items[k].n_seg >= 1);
    anvil_sim_result_t r;
    anvil_timeline_t *tl;
    API_OK(anvil_simulate(t, q, NULL, &r, &tl, &err), &err);
    ck_assert(r.predicted_us > r.floor_us && anvil_timeline_size(tl) >= n.items);
    free(items);
    anvil_timeline_destroy(tl);
    anvil_free(text);
    anvil_free(again);
    anvil_plan_destroy(q);
    anvil_plan_destroy(p);
  }
  anvil_workload_destroy(w);   /* plans keep their batch alive; none is left */
  anvil_target_destroy(t);
}
END_TEST

/* The block-table batch with each request's own tokens as given. */
static av_workload_t *own_tokens(const int32_t own[4]) {
  int64_t ids[4][5];
  const int64_t *rows[4];
  int32_t nb[4], last[4];
  for (int r = 0; r < 4; r++) {
    int32_t kv = 32 + own[r];
    nb[r] = (kv + 15) / 16;
    last[r] = kv - (nb[r] - 1) * 16;
    for (int j = 0; j < 5; j++) ids[r][j] = j < 2 ? j : 2 + 3 * r + (j - 2);
    rows[r] = ids[r];
  }
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_block_table(rows, nb, 4, 16, last, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  return w;
}

/* One item over the root for all requests, one per request over its own node. */
static av_plan_t *by_hand(const av_workload_t *a) {
  av_plan_t *p = av_plan_create(a, "by hand");
  av_tile_t tile = {.kind = AV_KERNEL_PARTIAL, .m_rows = 64, .n_tokens = 64, .warps = 4};
  int32_t l = av_plan_add_launch(p, 0, &tile, 0), all[4] = {0, 1, 2, 3};
  av_segment_t root = {0, 0, a->nodes[0].kv_len_tokens};
  av_plan_add_item(p, l, (av_item_work_t){all, 4, &root, 1}, AV_OUT_PARTIAL, -1, -1);
  for (int32_t r = 0; r < 4; r++) {
    int32_t u = a->request_node[r];
    av_segment_t own = {u, 0, a->nodes[u].kv_len_tokens};
    av_plan_add_item(p, l, (av_item_work_t){&r, 1, &own, 1}, AV_OUT_PARTIAL, -1, -1);
  }
  return p;
}

START_TEST(test_reuse_rule) {
  const int32_t base[4] = {20, 20, 25, 17};
  av_workload_t *a = own_tokens(base);
  const int32_t grow[4] = {21, 32, 25, 18};      /* within the last block (own 17..32) */
  const int32_t cross[4] = {21, 20, 33, 17};     /* request 2 takes a new block */
  const int32_t shrink[4] = {19, 20, 25, 17};
  av_workload_t *b = own_tokens(grow), *c = own_tokens(cross), *d = own_tokens(shrink);
  ck_assert(av_plan_reusable(a, a));
  ck_assert(av_plan_reusable(a, b));
  ck_assert(!av_plan_reusable(a, c));
  ck_assert(!av_plan_reusable(a, d));
  /* An inner node growing changes its children's offsets: never reused. */
  av_workload_t *e = av_workload_clone(a);
  e->nodes[0].kv_len_tokens += 1;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(e, &err), &err);
  ck_assert(!av_plan_reusable(a, e));
  av_workload_destroy(e);
  av_workload_destroy(c);
  av_workload_destroy(d);
  /* A plan grown to b is exact for b. */
  av_plan_t *p = by_hand(a);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  AV_CK_OK(av_plan_check(p, a, &err), &err);
  ck_assert_int_ne(av_plan_check(p, b, &err), AV_OK);
  av_error_clear(&err);
  av_plan_regrow(p, a, b);
  p->workload_hash = av_workload_hash(b);
  AV_CK_OK(av_plan_check(p, b, &err), &err);
  av_plan_destroy(p);
  av_workload_destroy(a);
  av_workload_destroy(b);
}
END_TEST


/* The planner's in-place form of the rule agrees with av_plan_reusable and av_plan_regrow. */
START_TEST(test_reuse_in_place) {
  const int32_t base[4] = {20, 20, 25, 17}, grow[4] = {21, 32, 25, 18};
  const int32_t refused[2][4] = {{21, 20, 33, 17}, {19, 20, 25, 17}}; /* new block, shrink */
  av_workload_t *a = own_tokens(base), *b = own_tokens(grow), *w = av_workload_clone(a);
  av_plan_t *p = by_hand(a), *q = by_hand(a);
  int64_t scratch[16];
  int32_t tokens[4];
  ck_assert_int_le(a->n_nodes, 16);
  for (int k = 0; k < 2; k++) {
    for (int r = 0; r < 4; r++) tokens[r] = 32 + refused[k][r];
    ck_assert(!av_plan_grow_to(q, w, tokens, scratch));
    ck_assert(av_workload_equal(w, a)); /* refused: nothing changed */
  }
  for (int r = 0; r < 4; r++) tokens[r] = 32 + grow[r];
  ck_assert(av_plan_grow_to(q, w, tokens, scratch));
  ck_assert(av_workload_equal(w, b));
  for (int r = 0; r < 4; r++) ck_assert_int_eq(w->request_kv_tokens[r], b->request_kv_tokens[r]);
  av_plan_regrow(p, a, b);
  ck_assert(av_plan_same_work(p, q));
  av_plan_destroy(p);
  av_plan_destroy(q);
  av_workload_destroy(w);
  av_workload_destroy(a);
  av_workload_destroy(b);
}
END_TEST

START_TEST(test_planner_steps) {
  anvil_error_t err;
  anvil_target_t *t;
  anvil_planner_t *pl;
  int32_t kv[4];
  fill_table(kv, 17);
  API_OK(anvil_target_create("H200-SXM", NULL, NULL, 0, &t, &err), &err);
  API_OK(anvil_planner_create(t, "profit_pack", NULL, 0, 16, NULL, &pl, &err), &err);
  ck_assert_ptr_null(anvil_planner_plan(pl));
  int reused, pattern = 0;
  for (int step = 0; step < 20; step++) {  /* own tokens 17..36: blocks fill at 32 */
    API_OK(anvil_planner_step(pl, &table[0][0], 5, kv, 4, &reused, &err), &err);
    pattern |= reused << step;
    API_OK(anvil_plan_check(anvil_planner_plan(pl), &err), &err);
    anvil_workload_info_t info;
    anvil_workload_info(anvil_plan_workload(anvil_planner_plan(pl)), &info);
    ck_assert_int_eq(info.query_centric_kv_tokens, 4 * (int64_t)kv[0]);
    for (int r = 0; r < 4; r++) kv[r]++;
  }
  /* Planned at own = 17 (step 0); patched at 33 (step 16, new blocks), reused otherwise. */
  ck_assert_int_eq(pattern, 0xfffff & ~1);
  int64_t planned, n_reused;
  anvil_planner_counts(pl, &planned, &n_reused);
  ck_assert(planned == 1 && n_reused == 19);
  anvil_planner_stats_t st;
  anvil_planner_stats(pl, &st);
  ck_assert(st.planned == 1 && st.patched == 1 && st.reused == 18);
  table[1][2] = 77;   /* another block under request 1: a finish and an arrival, patched */
  API_OK(anvil_planner_step(pl, &table[0][0], 5, kv, 4, &reused, &err), &err);
  ck_assert_int_eq(reused, 1);
  API_OK(anvil_plan_check(anvil_planner_plan(pl), &err), &err);
  /* Blocks request 3 shared with request 2 become its own: changed, then kept. */
  table[3][0] = 50;
  table[3][1] = 51;
  for (int again = 0; again < 2; again++) {
    API_OK(anvil_planner_step(pl, &table[0][0], 5, kv, 4, &reused, &err), &err);
    ck_assert_int_eq(reused, again);
  }
  ck_assert_int_eq(anvil_planner_step(pl, &table[0][0], 5, kv, 0, &reused, &err),
                   ANVIL_ERR_SCHEMA);
  anvil_planner_destroy(pl);
  anvil_target_destroy(t);
}
END_TEST

/* Block ids index a serving engine's KV cache: a negative one among the blocks a request uses
 * is refused, naming it, whether the batch is built from the table or a planner meets it as
 * a request's new block; padding after the used blocks is never read. */
START_TEST(test_negative_block_ids) {
  int32_t tab[2][4] = {{0, 1, -1, -1}, {0, 2, -1, -1}}, kv[2] = {20, 20};
  anvil_error_t err;
  anvil_workload_t *w = NULL;
  API_OK(anvil_workload_from_block_table(&tab[0][0], 4, kv, 2, 16, NULL, &w, &err), &err);
  anvil_workload_destroy(w);
  tab[1][1] = -5;
  ck_assert_int_eq(anvil_workload_from_block_table(&tab[0][0], 4, kv, 2, 16, NULL, &w, &err),
                   ANVIL_ERR_RANGE);
  ck_assert_msg(strstr(err.message, "block_table[1][1]: block id -5 is negative"), "%s",
                err.message);
  tab[1][1] = 2;
  anvil_target_t *t;
  anvil_planner_t *pl;
  API_OK(anvil_target_create("H200-SXM", NULL, NULL, 0, &t, &err), &err);
  API_OK(anvil_planner_create(t, "profit_pack", NULL, 0, 16, NULL, &pl, &err), &err);
  int reused;
  API_OK(anvil_planner_step(pl, &tab[0][0], 4, kv, 2, &reused, &err), &err);
  kv[0] = kv[1] = 33;   /* each request takes a third block: request 1's is a hole */
  tab[0][2] = 3;
  tab[1][2] = -1;
  ck_assert_int_eq(anvil_planner_step(pl, &tab[0][0], 4, kv, 2, &reused, &err),
                   ANVIL_ERR_RANGE);
  ck_assert_msg(strstr(err.message, "block_table[1][2]: block id -1 is negative"), "%s",
                err.message);
  tab[1][2] = 4;
  API_OK(anvil_planner_step(pl, &tab[0][0], 4, kv, 2, &reused, &err), &err);
  API_OK(anvil_plan_check(anvil_planner_plan(pl), &err), &err);
  anvil_planner_destroy(pl);
  anvil_target_destroy(t);
}
END_TEST

static Suite *api_suite(void) {
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("api");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_errors_carry_the_cli_line);
  tcase_add_test(tc, test_block_table_plan_round_trip);
  tcase_add_test(tc, test_reuse_rule);
  tcase_add_test(tc, test_reuse_in_place);
  tcase_add_test(tc, test_planner_steps);
  tcase_add_test(tc, test_negative_block_ids);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(api_suite(), 0); }
