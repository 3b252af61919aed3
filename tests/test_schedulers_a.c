/* Baseline and division schedulers (query_centric, node_naive, fixed_division,
 * greedy_division) and the scheduler registry: exact item counts on small levels trees,
 * every plan checked exact (and by the CPU reference), determinism, bad parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "tests/support.h"

static av_gpu_t gpu;
static av_error_t err;

static void setup(void) {
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
}

static av_workload_t *levels(const int64_t *B, const int64_t *L, int n) {
  av_heads_t h = av_test_heads();
  av_workload_t *w = av_workload_from_levels(B, L, n, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  return w;
}

/* Plans w with scheduler `name` and the given "k=v" assignments (NULL-terminated), a
 * roofline cost model and no variants table; checks the plan exact. Caller owns the plan. */
static av_plan_t *plan_with(const char *name, const av_workload_t *w, const char *const *set) {
  const av_scheduler_ops_t *ops;
  AV_CK_OK(av_scheduler_lookup(name, "test", NULL, &ops, &err), &err);
  av_params_t p;
  AV_CK_OK(av_params_init(&p, ops->params, &err), &err);
  for (int i = 0; set && set[i]; i++) AV_CK_OK(av_params_set_text(&p, set[i], "test", &err), &err);
  av_cost_env_t env = {.gpu = &gpu, .heads = &w->heads};
  av_costmodel_t *cost = av_costmodel_create(av_costmodel_find("roofline"), NULL, &env, &err);
  AV_CK_OK(cost ? AV_OK : err.code, &err);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = NULL, .cost = cost};
  av_plan_t *plan = NULL, *again = NULL;
  AV_CK_OK(av_scheduler_plan(ops, &p, &ctx, &plan, &err), &err);
  AV_CK_OK(av_plan_check(plan, w, &err), &err);
  AV_CK_OK(av_scheduler_plan(ops, &p, &ctx, &again, &err), &err);
  ck_assert_msg(av_plan_equal(plan, again), "%s: planning twice gave different plans", name);
  av_plan_destroy(again);
  av_costmodel_destroy(cost);
  return plan;
}

static int count_output(const av_plan_t *p, av_output_t o) {
  int n = 0;
  for (int32_t i = 0; i < p->n_items; i++) n += p->items[i].output == o;
  return n;
}

static void reference_ok(const av_plan_t *p, const av_workload_t *w) {
  av_reference_opts_t o = {.seed = 7, .dim = 8, .max_requests = 0};
  av_reference_result_t r;
  AV_CK_OK(av_reference_run(p, w, &o, &r, &err), &err);
  ck_assert_msg(r.max_rel_err < 1e-9, "reference error %g", r.max_rel_err);
}

START_TEST(test_registry) {
  int n;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  ck_assert_int_ge(n, 4);
  static const char *const first[] = {"query_centric", "node_naive", "fixed_division",
                                      "greedy_division"};
  for (int i = 0; i < 4; i++) ck_assert_str_eq(all[i]->name, first[i]);
  for (int i = 0; i < n; i++) {
    ck_assert_ptr_eq(av_scheduler_find(all[i]->name), all[i]);
    ck_assert_ptr_nonnull(all[i]->description);
    for (int j = 0; j < i; j++) ck_assert_str_ne(all[i]->name, all[j]->name);
    av_params_t p;
    AV_CK_OK(av_params_init(&p, all[i]->params, &err), &err);
  }
  const av_scheduler_ops_t *ops;
  ck_assert_int_eq(av_scheduler_lookup("flash", "exp.json", "schedulers[1].name", &ops, &err),
                   AV_ERR_NAME);
  ck_assert_ptr_null(ops);
  ck_assert_str_eq(err.source, "exp.json");
  ck_assert_str_eq(err.path, "schedulers[1].name");
  static const char want[] = "unknown scheduler 'flash'; expected one of: query_centric, "
                             "node_naive, fixed_division, greedy_division";
  ck_assert_msg(strncmp(err.message, want, strlen(want)) == 0, "%s", err.message);
}
END_TEST

START_TEST(test_query_centric_counts) {
  static const int64_t B[] = {1, 4, 16}, L[] = {128, 256, 1024};
  av_workload_t *w = levels(B, L, 3);
  const char *none[] = {"split=none", NULL};
  av_plan_t *p = plan_with("query_centric", w, none);
  ck_assert_int_eq(p->n_items, 16);
  ck_assert_int_eq(count_output(p, AV_OUT_FINAL), 16);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].tile.kind, AV_KERNEL_DECODE);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 16);  /* group of 4 -> smallest m */
  ck_assert_int_eq(p->items[0].n_seg, 3);            /* the whole root->leaf path */
  reference_ok(p, w);
  av_plan_destroy(p);

  const char *fixed[] = {"split=fixed", "splits=4", NULL};
  p = plan_with("query_centric", w, fixed);
  ck_assert_int_eq(p->n_items, 64);
  ck_assert_int_eq(count_output(p, AV_OUT_PARTIAL), 64);
  ck_assert_int_eq(p->n_slots, 64);
  /* 1408 tokens in 4 even runs of 352: the first spans the root and 224 tokens of level 1 */
  ck_assert_int_eq(p->items[0].n_seg, 2);
  ck_assert_int_eq(p->segments[p->items[0].seg_begin + 1].end, 224);
  reference_ok(p, w);
  av_plan_destroy(p);

  /* FlashAttention's heuristic: 16 x 8 = 128 CTAs < 0.8 x 132 x 2 slots; 11 blocks of 128;
   * 2 splits reach 97% wave efficiency -> runs of 6 blocks = 768 tokens: 2 pieces each */
  const char *heur[] = {"split=heuristic", "ctas_per_sm=2", NULL};
  p = plan_with("query_centric", w, heur);
  ck_assert_int_eq(p->n_items, 32);
  ck_assert_int_eq(count_output(p, AV_OUT_PARTIAL), 32);
  reference_ok(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);

  /* enough CTAs to fill the GPU: no split */
  static const int64_t B2[] = {1, 256}, L2[] = {1024, 64};
  w = levels(B2, L2, 2);
  p = plan_with("query_centric", w, heur);
  ck_assert_int_eq(p->n_items, 256);
  ck_assert_int_eq(count_output(p, AV_OUT_FINAL), 256);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_node_naive_counts) {
  static const int64_t B[] = {1, 4, 16}, L[] = {128, 256, 1024};
  av_workload_t *w = levels(B, L, 3);
  av_plan_t *p = plan_with("node_naive", w, NULL);
  ck_assert_int_eq(p->n_items, 21);                     /* one CTA per node */
  ck_assert_int_eq(count_output(p, AV_OUT_PARTIAL), 21);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 64);     /* root: 16 queries x 4 rows */
  reference_ok(p, w);
  av_plan_destroy(p);
  const char *shapes[] = {"tiles=per_shape", NULL};
  p = plan_with("node_naive", w, shapes);
  ck_assert_int_eq(p->n_items, 21);
  ck_assert_int_eq(p->n_launches, 2);  /* m=16 for 16 leaves and 4 mid nodes, m=64 root */
  ck_assert_int_eq(p->launches[0].tile.m_rows, 16);
  ck_assert_int_eq(p->launches[1].tile.m_rows, 64);
  ck_assert_int_ne(p->launches[0].stream, p->launches[1].stream);
  reference_ok(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);

  /* 64 queries x 4 rows exceed the largest tile (128 rows): the root splits in 2 */
  static const int64_t B2[] = {1, 64}, L2[] = {512, 32};
  w = levels(B2, L2, 2);
  p = plan_with("node_naive", w, NULL);
  ck_assert_int_eq(p->n_items, 2 + 64);
  av_plan_destroy(p);
  av_workload_destroy(w);

  /* a single node with one request covers its whole path: FINAL */
  static const int64_t B3[] = {3}, L3[] = {100};
  w = levels(B3, L3, 1);
  p = plan_with("node_naive", w, NULL);
  ck_assert_int_eq(p->n_items, 3);
  ck_assert_int_eq(count_output(p, AV_OUT_FINAL), 3);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_fixed_division_counts) {
  static const int64_t B[] = {1, 4, 16}, L[] = {128, 256, 2};
  av_workload_t *w = levels(B, L, 3);
  const char *k4[] = {"k=4", NULL};
  av_plan_t *p = plan_with("fixed_division", w, k4);
  /* root and mid nodes in 4, 2-token leaves in 2 */
  ck_assert_int_eq(p->n_items, 4 + 16 + 32);
  reference_ok(p, w);
  av_plan_destroy(p);
  const char *k1[] = {"k=1", NULL};
  p = plan_with("fixed_division", w, k1);
  ck_assert_int_eq(p->n_items, 21);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Items (pieces) per node of plan p. Caller frees. */
static int *pieces_per_node(const av_plan_t *p, const av_workload_t *w) {
  int *n = calloc((size_t)w->n_nodes, sizeof *n);
  for (int32_t i = 0; i < p->n_items; i++) {
    ck_assert_int_eq(p->items[i].n_seg, 1);
    n[p->segments[p->items[i].seg_begin].node]++;
  }
  return n;
}

START_TEST(test_greedy_division_document_qa) {
  /* FlashForge §5.1: "in documented question-answering tasks, despite the shared document KV
   * cache node (n ~ 10k), the workload of the question KV cache node for each request
   * (n ~ 50) is usually much smaller" — Eq. 5 leaves those undivided and cuts the document. */
  static const int64_t B[] = {1, 64}, L[] = {32768, 64};
  av_workload_t *w = levels(B, L, 2);
  av_plan_t *p = plan_with("greedy_division", w, NULL);
  int *per = pieces_per_node(p, w);
  /* 64 queries x 4 rows exceed the 128-row tile: the root is two tasks (b_q forced to 2),
   * each cut into several KV pieces */
  ck_assert_int_ge(per[0], 2 * 4);
  for (int32_t u = 1; u < w->n_nodes; u++) ck_assert_int_eq(per[u], 1);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].tile.kind, AV_KERNEL_PERSISTENT);
  ck_assert_int_gt(p->launches[0].persistent_ctas, 0);
  ck_assert_int_le(p->launches[0].persistent_ctas, gpu.sm_count);
  reference_ok(p, w);
  free(per);
  av_plan_destroy(p);

  /* without Eq. 5 the short nodes may be divided too; the plan stays exact */
  const char *noeq5[] = {"eq5=false", "max_pieces=8", "launch=grid", NULL};
  p = plan_with("greedy_division", w, noeq5);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 0);
  reference_ok(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Eq. (4) sums the load of every task: 64 identical leaves weigh 64 times one leaf. Their
 * class is searched once, but its count must stay in the average load, or the lower bound
 * falls and every leaf is cut into pieces it does not need (the count pinned here). */
START_TEST(test_greedy_division_identical_tasks) {
  static const int64_t B[] = {1, 64}, L[] = {4096, 4096};
  av_workload_t *w = levels(B, L, 2);
  av_plan_t *p = plan_with("greedy_division", w, NULL);
  ck_assert_int_eq(p->n_items, 66);
  int *per = pieces_per_node(p, w);
  for (int32_t u = 2; u < w->n_nodes; u++) ck_assert_int_eq(per[u], per[1]);
  free(per);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_greedy_division_lpt_queues) {
  /* three single-request roots of 3000, 2000 and 1000 tokens on 2 CTAs */
  static const int64_t B[] = {3}, L[] = {3000};
  av_workload_t *w = levels(B, L, 1);
  w->nodes[1].kv_len_tokens = 2000;
  w->nodes[2].kv_len_tokens = 1000;
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  const char *two[] = {"ctas=2", NULL};
  av_plan_t *p = plan_with("greedy_division", w, two);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 2);
  /* queues are dense and in order; the CTAs' loads differ by at most one sub-task */
  int seen[2] = {0, 0};
  double load[2] = {0, 0};
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    ck_assert(it->cta == 0 || it->cta == 1);
    ck_assert_int_eq(it->order, seen[it->cta]++);
    const av_segment_t *sg = &p->segments[it->seg_begin];
    load[it->cta] += (double)(sg->end - sg->begin);
  }
  ck_assert_int_gt(seen[0], 0);
  ck_assert_int_gt(seen[1], 0);
  /* 6000 tokens over 2 CTAs: the undivided LPT (3000 | 2000+1000) is already perfect */
  ck_assert_double_eq(load[0], 3000);
  ck_assert_double_eq(load[1], 3000);
  ck_assert_int_eq(p->n_items, 3);
  ck_assert_int_eq(count_output(p, AV_OUT_FINAL), 3);
  reference_ok(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* launch=persistent: per tile shape one persistent launch of SMs x 1 / hkv queues (no
 * variants table: one CTA per SM), every piece in exactly one queue at a dense position, the
 * longest pieces spread first; the plan is still exact. */
START_TEST(test_node_naive_persistent) {
  static const int64_t B[] = {1, 4, 16}, L[] = {128, 256, 1024};
  av_workload_t *w = levels(B, L, 3);
  const char *set[] = {"tiles=per_shape", "launch=persistent", NULL};
  av_plan_t *p = plan_with("node_naive", w, set);
  ck_assert_int_eq(p->n_items, 21);
  ck_assert_int_eq(p->n_launches, 2);
  const int32_t q = gpu.sm_count / w->heads.hkv;
  int *seen = calloc((size_t)q * 2, sizeof *seen);
  int64_t *load = calloc((size_t)q * 2, sizeof *load);
  for (int32_t l = 0; l < 2; l++) {
    ck_assert_int_eq(p->launches[l].tile.kind, AV_KERNEL_PERSISTENT);
    ck_assert_int_eq(p->launches[l].persistent_ctas, q);
  }
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    ck_assert(it->cta >= 0 && it->cta < q);
    ck_assert_int_eq(it->order, seen[it->launch * q + it->cta]++);
    const av_segment_t *sg = &p->segments[it->seg_begin];
    load[it->launch * q + it->cta] += sg->end - sg->begin;
  }
  /* 20 m16 pieces on 16 queues: the 16 leaves of 1024 tokens go one per queue first */
  for (int32_t c = 0; c < q; c++) ck_assert_int_ge(load[c], 1024);
  reference_ok(p, w);
  av_plan_destroy(p);
  free(seen);
  free(load);
  const char *one[] = {"launch=persistent", NULL};
  p = plan_with("fixed_division", w, one);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].persistent_ctas, q);
  reference_ok(p, w);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_bad_params) {
  static const struct {
    const char *sched, *set, *msg;
    int code;
  } cases[] = {
      {"fixed_division", "k=0", "", AV_ERR_RANGE},
      {"fixed_division", "k=-3", "", AV_ERR_RANGE},
      {"query_centric", "split=half", "unknown value 'half'; expected one of: none, fixed, "
                                      "heuristic", AV_ERR_NAME},
      {"query_centric", "splits=0", "", AV_ERR_RANGE},
      {"node_naive", "tiles=big", "expected one of: single, per_shape", AV_ERR_NAME},
      {"node_naive", "k=2", "unknown parameter 'k'; expected one of: tiles, tile_n, launch",
       AV_ERR_NAME},
      {"node_naive", "launch=stream", "expected one of: grid, persistent", AV_ERR_NAME},
      {"fixed_division", "launch=", "expected one of: grid, persistent", AV_ERR_NAME},
      {"greedy_division", "launch=async", "expected one of: persistent, grid", AV_ERR_NAME},
      {"greedy_division", "max_pieces=0", "", AV_ERR_RANGE},
      {"greedy_division", "eq5=maybe", "expected true or false", AV_ERR_SCHEMA},
      {"greedy_division", "wide=yes", "expected one of: off, on", AV_ERR_NAME},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const av_scheduler_ops_t *ops = av_scheduler_find(cases[i].sched);
    ck_assert_ptr_nonnull(ops);
    av_params_t p;
    av_error_clear(&err);
    AV_CK_OK(av_params_init(&p, ops->params, &err), &err);
    ck_assert_int_eq(av_params_set_text(&p, cases[i].set, "cli", &err), cases[i].code);
    ck_assert_msg(strstr(err.message, cases[i].msg), "%s: '%s'", cases[i].set, err.message);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("schedulers_a");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, test_registry);
  tcase_add_test(tc, test_query_centric_counts);
  tcase_add_test(tc, test_node_naive_counts);
  tcase_add_test(tc, test_fixed_division_counts);
  tcase_add_test(tc, test_node_naive_persistent);
  tcase_add_test(tc, test_greedy_division_document_qa);
  tcase_add_test(tc, test_greedy_division_lpt_queues);
  tcase_add_test(tc, test_greedy_division_identical_tasks);
  tcase_add_test(tc, test_bad_params);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
