/* Worked examples for profit_pack (PAT §5.1 Figure 6, the ablation switches), streamk_balance
 * (FlashInfer Algorithm 1 by hand, composable formats) and auto, plus rejected parameters.
 * Plans are compared item by item as text: "q=<queries> <node>[b,e) ... F|P". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "selectors/selectors.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "core/variants.h"
#include "tests/support.h"

extern const av_scheduler_ops_t av_sched_profit_pack, av_sched_streamk_balance, av_sched_auto;

static av_gpu_t gpu;

static void setup(void) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
}

/* A forest from parents/lengths and request nodes; heads (32, 8): GQA group 4. */
static av_workload_t *forest(int n_nodes, const int32_t *parent, const int64_t *len,
                             int n_req, const int32_t *req_node) {
  av_workload_t *w = av_workload_create(n_nodes, n_req);
  ck_assert_ptr_nonnull(w);
  snprintf(w->name, sizeof w->name, "example");
  for (int i = 0; i < n_nodes; i++) {
    w->nodes[i].parent = parent[i];
    w->nodes[i].kv_len_tokens = len[i];
  }
  for (int r = 0; r < n_req; r++) w->request_node[r] = req_node[r];
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  return w;
}

/* Plans w with ops and "k=v" assignments (NULL-terminated), checks it and runs the CPU
 * reference; returns the plan. */
static av_plan_t *plan_with(const av_scheduler_ops_t *ops, const av_workload_t *w,
                            const char *const *assign) {
  av_error_t err;
  av_error_clear(&err);
  av_params_t params;
  AV_CK_OK(av_params_init(&params, ops->params, &err), &err);
  for (int i = 0; assign && assign[i]; i++)
    AV_CK_OK(av_params_set_text(&params, assign[i], "test", &err), &err);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = NULL, .cost = NULL};
  av_plan_t *p = NULL;
  AV_CK_OK(av_scheduler_plan(ops, &params, &ctx, &p, &err), &err);
  AV_CK_OK(av_plan_check(p, w, &err), &err);
  av_reference_opts_t opts = {.seed = 7, .dim = 8, .max_requests = 0};
  av_reference_result_t res;
  AV_CK_OK(av_reference_run(p, w, &opts, &res, &err), &err);
  ck_assert_msg(res.max_rel_err <= 1e-9, "reference error %g", res.max_rel_err);
  return p;
}

static int plan_rc(const av_scheduler_ops_t *ops, const av_workload_t *w,
                   const char *assignment, av_error_t *err) {
  av_params_t params;
  av_error_clear(err);
  int rc = av_params_init(&params, ops->params, err);
  if (!rc && assignment) rc = av_params_set_text(&params, assignment, "test", err);
  if (rc) return rc;
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = NULL, .cost = NULL};
  av_plan_t *p = NULL;
  rc = av_scheduler_plan(ops, &params, &ctx, &p, err);
  av_plan_destroy(p);
  return rc;
}

/* "q=0,1 0[0,8) 1[0,32) F" */
static void describe(const av_plan_t *p, int32_t i, char *out, size_t size) {
  const av_item_t *it = &p->items[i];
  size_t n = (size_t)snprintf(out, size, "q=");
  for (int32_t k = 0; k < it->n_q; k++)
    n += (size_t)snprintf(out + n, size - n, "%s%d", k ? "," : "",
                          p->item_queries[it->q_begin + k]);
  for (int32_t k = 0; k < it->n_seg; k++) {
    const av_segment_t *s = &p->segments[it->seg_begin + k];
    n += (size_t)snprintf(out + n, size - n, " %d[%lld,%lld)", s->node, (long long)s->begin,
                          (long long)s->end);
  }
  snprintf(out + n, size - n, " %s", it->output == AV_OUT_FINAL ? "F" : "P");
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The plan's items, described and sorted, must be exactly `expected` (sorted here too). */
static void expect_items(const av_plan_t *p, const char *const *expected, int n) {
  ck_assert_int_eq(p->n_items, n);
  char (*got)[256] = calloc((size_t)n, sizeof *got);
  const char **gp = calloc((size_t)n, sizeof *gp), **ep = calloc((size_t)n, sizeof *ep);
  for (int i = 0; i < n; i++) {
    describe(p, i, got[i], sizeof got[i]);
    gp[i] = got[i];
    ep[i] = expected[i];
  }
  qsort(gp, (size_t)n, sizeof *gp, str_cmp);
  qsort(ep, (size_t)n, sizeof *ep, str_cmp);
  for (int i = 0; i < n; i++) ck_assert_str_eq(gp[i], ep[i]);
  free(got);
  free(gp);
  free(ep);
}

/* PAT §5.1 Figure 6: four queries under a shared prefix u (node 0); child v1 (node 1) holds
 * queries 0-2 (s_1 = 3), child v2 (node 2) query 3 (s_2 = 1). By Eq. (1)-(2), merging v_i
 * into u's CTA gains 4·s_i·d - l_u·d: with l_u = 8, v1 merges (12 >= 8: Scheme 2, its CTA
 * reads u and v1 and writes the final output) and v2 stays apart (4 < 8: Scheme 1, u's CTA
 * keeps query 3); with l_u = 16 neither merges (12 < 16) and u's CTA holds all four. */
START_TEST(pat_figure6_schemes) {
  const int32_t parent[] = {-1, 0, 0}, req[] = {1, 1, 1, 2};
  const char *const no_split[] = {"long_kv_split=false", NULL};
  int64_t len8[] = {8, 32, 32};
  av_workload_t *w = forest(3, parent, len8, 4, req);
  av_plan_t *p = plan_with(&av_sched_profit_pack, w, no_split);
  const char *scheme2[] = {"q=0,1,2 0[0,8) 1[0,32) F", "q=3 0[0,8) P", "q=3 2[0,32) P"};
  expect_items(p, scheme2, 3);
  av_plan_destroy(p);
  av_workload_destroy(w);

  int64_t len16[] = {16, 32, 32};
  w = forest(3, parent, len16, 4, req);
  p = plan_with(&av_sched_profit_pack, w, no_split);
  const char *scheme1[] = {"q=0,1,2,3 0[0,16) P", "q=0,1,2 1[0,32) P", "q=3 2[0,32) P"};
  expect_items(p, scheme1, 3);
  av_plan_destroy(p);
  av_workload_destroy(w);

  /* the tie 4·s = l merges (Algorithm 1 line 7 splits only when 4·|c| < len) */
  int64_t len12[] = {12, 32, 32};
  w = forest(3, parent, len12, 4, req);
  p = plan_with(&av_sched_profit_pack, w, no_split);
  const char *tie[] = {"q=0,1,2 0[0,12) 1[0,32) F", "q=3 0[0,12) P", "q=3 2[0,32) P"};
  expect_items(p, tie, 3);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* PAT-naive packs every node alone; PAT-compute compares tile-padded FLOPs. On the l_u = 8
 * Figure 6 batch with the default tile menu (n = 64 only), splitting costs
 * pad(16 rows)·pad(8) + pad(12)·pad(32) = 16·64 + 16·64 and merging v1
 * pad(4)·pad(8) + pad(12)·pad(40) = 16·64 + 16·64: a tie, so PAT-compute keeps Scheme 1
 * where the memory rule merges. share_unit=rows counts s in query rows (3 x 4 = 12 >= 12). */
START_TEST(pat_naive_and_compute) {
  const int32_t parent[] = {-1, 0, 0}, req[] = {1, 1, 1, 2};
  int64_t len[] = {8, 32, 32};
  av_workload_t *w = forest(3, parent, len, 4, req);
  const char *const naive[] = {"long_kv_split=false", "packing=naive", NULL};
  const char *const compute[] = {"long_kv_split=false", "cost=compute", NULL};
  const char *split[] = {"q=0,1,2,3 0[0,8) P", "q=0,1,2 1[0,32) P", "q=3 2[0,32) P"};
  av_plan_t *p = plan_with(&av_sched_profit_pack, w, naive);
  expect_items(p, split, 3);
  av_plan_destroy(p);
  p = plan_with(&av_sched_profit_pack, w, compute);
  expect_items(p, split, 3);
  av_plan_destroy(p);
  av_workload_destroy(w);

  int64_t len48[] = {48, 32, 32};
  w = forest(3, parent, len48, 4, req);
  const char *const rows[] = {"long_kv_split=false", "share_unit=rows", NULL};
  p = plan_with(&av_sched_profit_pack, w, rows);
  const char *merged[] = {"q=0,1,2 0[0,48) 1[0,32) F", "q=3 0[0,48) P", "q=3 2[0,32) P"};
  expect_items(p, merged, 3); /* 4·12 = 48 >= 48; with queries 4·3 < 48 would split */
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* PAT §6 long-KV split on B=[1,4] L=[1000,10]: CTAs are the root (4 queries, 1000 tokens)
 * and four leaves (10): mean 1040/5 = 208, the root is cut into ceil(1000/208) = 5 equal
 * parts of 200 tokens; leaves stay whole. Multi-stream: the root parts (n by 200 tokens) and
 * leaves share m = 16; with tiles=fixed every launch is (64, 128); streams=serial puts all
 * launches on stream 0. */
START_TEST(pat_split_tiles_streams) {
  int64_t B[] = {1, 4}, L[] = {1000, 10};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  av_plan_t *p = plan_with(&av_sched_profit_pack, w, NULL);
  ck_assert_int_eq(p->n_items, 9);
  int root_parts = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_segment_t *s = &p->segments[p->items[i].seg_begin];
    if (s->node == 0) {
      ck_assert_int_eq(p->items[i].n_seg, 1);
      ck_assert_int_eq(s->begin, 200 * root_parts);
      ck_assert_int_eq(s->end - s->begin, 200);
      root_parts++;
    }
  }
  ck_assert_int_eq(root_parts, 5);
  av_plan_destroy(p);

  const char *const fixed[] = {"tiles=fixed", NULL};
  p = plan_with(&av_sched_profit_pack, w, fixed);
  for (int32_t l = 0; l < p->n_launches; l++) {
    ck_assert_int_eq(p->launches[l].tile.m_rows, 64);
    ck_assert_int_eq(p->launches[l].tile.n_tokens, 128);
  }
  av_plan_destroy(p);

  /* max_m_rows=16 with 4 queries x group 4 = 16 rows fits; with group 8 it would split */
  const char *const serial[] = {"streams=serial", "n_small_max=16", "n_mid_max=100", NULL};
  p = plan_with(&av_sched_profit_pack, w, serial);
  for (int32_t l = 0; l < p->n_launches; l++) ck_assert_int_eq(p->launches[l].stream, 0);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Queries beyond the largest m go to several CTAs over the same KV: 20 queries x group 4 =
 * 80 rows > 64, so the root's queries are split evenly into 10 + 10 (40 rows -> m = 64). */
START_TEST(pat_query_groups) {
  int64_t B[] = {1, 20}, L[] = {4096, 8};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  const char *const no_split[] = {"long_kv_split=false", NULL};
  av_plan_t *p = plan_with(&av_sched_profit_pack, w, no_split);
  int roots = 0;
  for (int32_t i = 0; i < p->n_items; i++)
    if (p->segments[p->items[i].seg_begin].node == 0) {
      ck_assert_int_eq(p->items[i].n_q, 10);
      ck_assert_int_eq(p->launches[p->items[i].launch].tile.m_rows, 64);
      roots++;
    }
  ck_assert_int_eq(roots, 2);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* FlashInfer Algorithm 1 by hand. Three requests with private KV of 100, 60 and 20 tokens,
 * #CTA = 2, T_q = 16 (smallest persistent m holding a group of 4), alpha = beta = 1.
 *   L = ceil((100 + 60 + 20) / 2) = 90: chunks r0[0,90) r0[90,100) r1[0,60) r2[0,20).
 *   Longest first: 90, 60, 20, 10. Heap (cost, cta), cost += 16 + l:
 *     90 -> CTA0 (0,0 tie: lower id)  costs {106, 0}
 *     60 -> CTA1                      costs {106, 76}
 *     20 -> CTA1 (76 < 106)           costs {106, 112}
 *     10 -> CTA0 (106 < 112)          costs {132, 112}
 *   Queues: CTA0 = [r0[0,90), r0[90,100)], CTA1 = [r1, r2]; r1 and r2 are unsplit and write
 *   their outputs directly (FlashInfer App. D.2); r0 merges [0,90) then [90,100). */
START_TEST(flashinfer_algorithm1_by_hand) {
  const int32_t parent[] = {-1, -1, -1}, req[] = {0, 1, 2};
  const int64_t len[] = {100, 60, 20};
  av_workload_t *w = forest(3, parent, len, 3, req);
  const char *const a[] = {"ctas=2", "min_chunk_tokens=1", NULL};
  av_plan_t *p = plan_with(&av_sched_streamk_balance, w, a);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 2);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 16);
  const char *want[] = {"q=0 0[0,90) P", "q=0 0[90,100) P", "q=1 1[0,60) F", "q=2 2[0,20) F"};
  const int32_t cta[] = {0, 0, 1, 1}, order[] = {0, 1, 0, 1};
  ck_assert_int_eq(p->n_items, 4);
  for (int32_t i = 0; i < 4; i++) {
    char d[256];
    describe(p, i, d, sizeof d);
    ck_assert_str_eq(d, want[i]);
    ck_assert_int_eq(p->items[i].cta, cta[i]);
    ck_assert_int_eq(p->items[i].order, order[i]);
  }
  ck_assert_int_eq(p->merge_offsets[1] - p->merge_offsets[0], 2);
  ck_assert_int_eq(p->merge_slots[p->merge_offsets[0]], p->items[0].slot_begin);
  ck_assert_int_eq(p->merge_slots[p->merge_offsets[0] + 1], p->items[1].slot_begin);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Algorithm 1's L is a ceiling: 181 tokens on 2 CTAs make chunks of 91 (a floor, 90, would
 * leave a third chunk of one token's worth of work to someone). */
START_TEST(flashinfer_chunk_length_is_ceil) {
  const int32_t parent[] = {-1, -1, -1}, req[] = {0, 1, 2};
  const int64_t len[] = {100, 60, 21};
  av_workload_t *w = forest(3, parent, len, 3, req);
  const char *const a[] = {"ctas=2", "min_chunk_tokens=1", NULL};
  av_plan_t *p = plan_with(&av_sched_streamk_balance, w, a);
  const char *want[] = {"q=0 0[0,91) P", "q=0 0[91,100) P", "q=1 1[0,60) F", "q=2 2[0,21) F"};
  expect_items(p, want, 4);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Composable formats (FlashInfer §3.1.2): a 64-token prefix shared by 3 requests becomes one
 * block with all three queries as rows; each request's 16-token suffix is its own unit.
 * One CTA: L = 112 (no split), queue = prefix block (longest) then suffixes by request;
 * every request merges prefix then suffix. */
START_TEST(flashinfer_composable) {
  const int32_t parent[] = {-1, 0, 0, 0}, req[] = {1, 2, 3};
  const int64_t len[] = {64, 16, 16, 16};
  av_workload_t *w = forest(4, parent, len, 3, req);
  const char *const a[] = {"ctas=1", "composable=true", NULL};
  av_plan_t *p = plan_with(&av_sched_streamk_balance, w, a);
  const char *want[] = {"q=0,1,2 0[0,64) P", "q=0 1[0,16) P", "q=1 2[0,16) P",
                        "q=2 3[0,16) P"};
  ck_assert_int_eq(p->n_items, 4);
  for (int32_t i = 0; i < 4; i++) {
    char d[256];
    describe(p, i, d, sizeof d);
    ck_assert_str_eq(d, want[i]);
    ck_assert_int_eq(p->items[i].order, i);
  }
  for (int32_t r = 0; r < 3; r++) {
    ck_assert_int_eq(p->merge_offsets[r + 1] - p->merge_offsets[r], 2);
    ck_assert_int_eq(p->merge_slots[p->merge_offsets[r]], p->items[0].slot_begin + r);
  }
  av_plan_destroy(p);
  /* without composable formats each request reads the prefix itself */
  const char *const b[] = {"ctas=1", NULL};
  p = plan_with(&av_sched_streamk_balance, w, b);
  ck_assert_int_eq(p->n_items, 3);
  ck_assert_int_eq(p->items[0].n_seg, 2);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* auto keeps a candidate's plan and says which one and by how much. */
START_TEST(auto_records_choice) {
  int64_t B[] = {1, 8}, L[] = {512, 32};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  av_variants_t *vs = av_test_variants(&gpu, &h);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs, .cost = NULL};
  av_params_t params;
  AV_CK_OK(av_params_init(&params, av_sched_auto.params, &err), &err);
  av_plan_t *p = NULL;
  AV_CK_OK(av_sched_auto.plan(&ctx, &params, &p, &err), &err);
  ck_assert_msg(strncmp(p->params, "chose=", 6) == 0, "params: %s", p->params);
  ck_assert_ptr_nonnull(strstr(p->params, "margin="));
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  AV_CK_OK(av_plan_check(p, w, &err), &err);
  /* the chosen plan is one of the candidates' plans ("NAME" or "NAME[ALTERNATIVE]"), so it
   * is no slower than any of them */
  const char *chose = p->params + 6;
  const size_t len = strcspn(chose, "[,");
  const av_scheduler_ops_t *winner = NULL;
  int n_ops = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  for (int i = 0; i < n_ops; i++)
    if (strlen(all[i]->name) == len && strncmp(chose, all[i]->name, len) == 0) winner = all[i];
  ck_assert_msg(winner != NULL, "chose an unknown scheduler: %s", p->params);
  av_params_t wp;
  AV_CK_OK(av_params_init(&wp, winner->params, &err), &err);
  if (chose[len] == '[') {
    char alt[96];
    snprintf(alt, sizeof alt, "%.*s", (int)strcspn(chose + len + 1, "]"), chose + len + 1);
    int declared = 0;
    for (int a = 0; winner->alternatives && winner->alternatives[a]; a++)
      declared |= strcmp(winner->alternatives[a], alt) == 0;
    ck_assert_msg(declared, "chose an alternative %s does not declare: %s", winner->name, alt);
    AV_CK_OK(av_params_set_text(&wp, alt, "test", &err), &err);
  }
  av_plan_t *again = NULL;
  AV_CK_OK(av_scheduler_plan(winner, &wp, &ctx, &again, &err), &err);
  memcpy(again->scheduler, p->scheduler, sizeof p->scheduler); /* equal up to the labels */
  memcpy(again->params, p->params, sizeof p->params);
  ck_assert(av_plan_equal(p, again));
  av_plan_destroy(again);
  /* every declared policy alternative was a candidate: none is predicted faster than auto's
   * choice (the same simulator and roofline model auto ranks with) */
  av_cost_env_t env = {.gpu = &gpu, .heads = &w->heads, .variants = vs};
  av_costmodel_t *roof = av_costmodel_create(av_costmodel_find("roofline"), NULL, &env, &err);
  ck_assert_ptr_nonnull(roof);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE};
  av_sim_result_t r;
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){p, w, &gpu, vs, roof}, &r, NULL, &err), &err);
  const double chosen_us = r.makespan_us;
  av_sim_result_free(&r);
  int tried = 0;
  for (int i = 0; i < n_ops; i++)
    for (int a = 0; all[i]->alternatives && all[i]->alternatives[a]; a++) {
      av_params_t ap;
      AV_CK_OK(av_params_init(&ap, all[i]->params, &err), &err);
      AV_CK_OK(av_params_set_text(&ap, all[i]->alternatives[a], "test", &err), &err);
      av_plan_t *alt = NULL;
      if (av_scheduler_plan(all[i], &ap, &ctx, &alt, &err) != AV_OK) continue;
      AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){alt, w, &gpu, vs, roof}, &r, NULL, &err), &err);
      ck_assert_msg(chosen_us <= r.makespan_us + 1e-9, "%s[%s] predicted %.4f us < auto's %.4f",
                    all[i]->name, all[i]->alternatives[a], r.makespan_us, chosen_us);
      tried++;
      av_sim_result_free(&r);
      av_plan_destroy(alt);
    }
  ck_assert_int_ge(tried, 3);
  av_costmodel_destroy(roof);
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_variants_destroy(vs);
}
END_TEST

/* Ties keep the earlier candidate (registry order): one request of 64 tokens is one CTA for
 * query_centric and node_naive alike, so auto keeps query_centric with a zero margin. */
START_TEST(auto_tie_keeps_earlier) {
  int64_t B[] = {1}, L[] = {64};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 1, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  av_variants_t *vs = av_test_variants(&gpu, &h);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs, .cost = NULL};
  av_plan_t *p = NULL;
  AV_CK_OK(av_scheduler_plan(&av_sched_auto, NULL, &ctx, &p, &err), &err);
  ck_assert_msg(strstr(p->params, "chose=query_centric,margin=0.0000,runner_up=node_naive"),
                "params: %s", p->params);
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_variants_destroy(vs);
}
END_TEST

/* A batch where PAT's compute-cost packing (a declared alternative of profit_pack) is the
 * predicted fastest plan of all (seed-52 random forest, H200 spec, roofline model): auto must
 * have simulated it and chosen it. */
START_TEST(auto_tries_alternatives) {
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t gpu;
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
  av_variants_t *vs = av_variants_load(NULL, &err);
  ck_assert_msg(vs != NULL, "%s", err.message);
  av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  av_random_spec_t spec = {.seed = 52, .min_depth = 1, .max_depth = 4, .max_requests = 64,
                           .max_children = 6, .min_len = 16, .max_len = 2048};
  av_workload_t *w = av_workload_random(&spec, &h, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs, .cost = NULL};
  av_plan_t *p = NULL;
  AV_CK_OK(av_scheduler_plan(&av_sched_auto, NULL, &ctx, &p, &err), &err);
  ck_assert_msg(strstr(p->params, "chose=profit_pack[cost=compute],") != NULL, "params: %s",
                p->params);
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_variants_destroy(vs);
}
END_TEST

START_TEST(bad_parameters) {
  const int32_t parent[] = {-1}, req[] = {0};
  const int64_t len[] = {64};
  av_workload_t *w = forest(1, parent, len, 1, req);
  av_error_t err;
  ck_assert_int_eq(plan_rc(&av_sched_profit_pack, w, "packing=greedy", &err), AV_ERR_NAME);
  ck_assert_ptr_nonnull(strstr(err.message, "profit, naive"));
  ck_assert_int_eq(plan_rc(&av_sched_profit_pack, w, "streams=parallel", &err), AV_ERR_NAME);
  ck_assert_int_eq(plan_rc(&av_sched_profit_pack, w, "split=3", &err), AV_ERR_NAME);
  ck_assert_int_eq(plan_rc(&av_sched_profit_pack, w, "max_m_rows=0", &err), AV_ERR_RANGE);
  ck_assert_int_eq(plan_rc(&av_sched_profit_pack, w, "n_small_max=5000", &err), AV_ERR_RANGE);
  ck_assert_ptr_nonnull(strstr(err.message, "n_mid_max"));
  ck_assert_int_eq(plan_rc(&av_sched_profit_pack, w, "max_m_rows=8", &err),
                   AV_ERR_UNSUPPORTED);
  ck_assert_int_eq(plan_rc(&av_sched_streamk_balance, w, "tq=2", &err), AV_ERR_RANGE);
  ck_assert_int_eq(plan_rc(&av_sched_streamk_balance, w, "tq=24", &err), AV_ERR_UNSUPPORTED);
  ck_assert_int_eq(plan_rc(&av_sched_streamk_balance, w, "ctas=-1", &err), AV_ERR_RANGE);
  ck_assert_int_eq(plan_rc(&av_sched_streamk_balance, w, "composable=maybe", &err),
                   AV_ERR_SCHEMA);
  ck_assert_int_eq(plan_rc(&av_sched_auto, w, "model=exact", &err), AV_ERR_NAME);
  av_workload_destroy(w);
}
END_TEST

/* Enum parameters are their choice's index, found by the full name only. */
START_TEST(enum_values_by_full_name) {
  av_params_t p;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_params_init(&p, av_sched_profit_pack.params, &err), &err);
  ck_assert_int_eq(av_params_choice(&p, "cost"), 0);
  AV_CK_OK(av_params_set_text(&p, "cost=compute", "-p", &err), &err);
  ck_assert_int_eq(av_params_choice(&p, "cost"), 1);
  ck_assert_int_eq(av_params_set_text(&p, "cost=c", "-p", &err), AV_ERR_NAME);
  ck_assert_str_eq(err.path, "cost");
  ck_assert_str_eq(err.message, "unknown value 'c'; expected one of: memory, compute");
  ck_assert_int_eq(av_params_choice(&p, "n_small_max"), -1);  /* not an enum */
  ck_assert_int_eq(av_params_choice(&p, "no_such"), -1);
}
END_TEST

START_TEST(registered_by_name) {
  ck_assert_ptr_eq(av_scheduler_find("profit_pack"), &av_sched_profit_pack);
  ck_assert_ptr_eq(av_scheduler_find("streamk_balance"), &av_sched_streamk_balance);
  ck_assert_ptr_eq(av_scheduler_find("auto"), &av_sched_auto);
  /* auto is the one scheduler that plans by simulating the others */
  int n = 0, flagged = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  for (int i = 0; i < n; i++)
    if (all[i]->flags & AV_SCHED_SIMULATES_OTHERS) {
      ck_assert_ptr_eq(all[i], &av_sched_auto);
      flagged++;
    }
  ck_assert_int_eq(flagged, 1);
}
END_TEST

/* The registry's own schedulers come first and the selectors after them, each once: a second
 * registration of the selectors adds nothing, and the registry refuses a name it holds. */
START_TEST(selectors_registered_once) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_selectors_register(&err), &err);
  AV_CK_OK(av_selectors_register(&err), &err);
  int n = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  ck_assert_int_eq(n, 7);
  ck_assert_ptr_eq(all[n - 1], &av_sched_auto);
  ck_assert_ptr_eq(all[4], &av_sched_profit_pack);
  ck_assert_int_eq(av_scheduler_register(&av_sched_auto, &err), AV_ERR_INTERNAL);
  ck_assert_str_eq(err.message, "a scheduler named 'auto' is already registered");
  av_error_clear(&err);
  const av_scheduler_ops_t unnamed = {.description = "no name", .plan = av_sched_auto.plan};
  ck_assert_int_eq(av_scheduler_register(&unnamed, &err), AV_ERR_INTERNAL);
  av_scheduler_all(&n);
  ck_assert_int_eq(n, 7);
}
END_TEST

int main(void) {
  /* every registered scheduler, `auto` (selectors/) among them */
  if (av_selectors_register(NULL)) return 1;
  Suite *s = suite_create("schedulers_b");
  TCase *tc = tcase_create("examples");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, pat_figure6_schemes);
  tcase_add_test(tc, pat_naive_and_compute);
  tcase_add_test(tc, pat_split_tiles_streams);
  tcase_add_test(tc, pat_query_groups);
  tcase_add_test(tc, flashinfer_algorithm1_by_hand);
  tcase_add_test(tc, flashinfer_composable);
  tcase_add_test(tc, flashinfer_chunk_length_is_ceil);
  tcase_add_test(tc, auto_tie_keeps_earlier);
  tcase_add_test(tc, auto_records_choice);
  tcase_add_test(tc, auto_tries_alternatives);
  tcase_add_test(tc, bad_parameters);
  tcase_add_test(tc, enum_values_by_full_name);
  tcase_add_test(tc, registered_by_name);
  tcase_add_test(tc, selectors_registered_once);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
