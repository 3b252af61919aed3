/* streamk_balance's assignment of chunks to CTAs (FlashInfer §3.3.1, Algorithm 1 lines 8-12:
 * each chunk, longest first, goes to the CTA of least accumulated cost, ties to the lower
 * CTA id) with three or more CTAs, where the min-heap's right child and its tie rule decide:
 * by hand, and against a brute-force linear scan over the CTAs on seeded random batches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/plan.h"
#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "tests/support.h"

extern const av_scheduler_ops_t av_sched_streamk_balance;

static av_gpu_t gpu;

static void setup(void) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
}

/* n requests, request r alone on root node r of len[r] tokens; heads (32, 8). */
static av_workload_t *roots(int n, const int64_t *len) { return av_test_flat_workload(n, len, 8); }

/* streamk_balance with ctas CTAs and chunks down to one token; the plan is proved exact. */
static av_plan_t *plan(const av_workload_t *w, int ctas) {
  av_error_t err;
  av_error_clear(&err);
  av_params_t params;
  AV_CK_OK(av_params_init(&params, av_sched_streamk_balance.params, &err), &err);
  char set[32];
  snprintf(set, sizeof set, "ctas=%d", ctas);
  AV_CK_OK(av_params_set_text(&params, set, "test", &err), &err);
  AV_CK_OK(av_params_set_text(&params, "min_chunk_tokens=1", "test", &err), &err);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu};
  av_plan_t *p = NULL;
  AV_CK_OK(av_scheduler_plan(&av_sched_streamk_balance, &params, &ctx, &p, &err), &err);
  AV_CK_OK(av_plan_check(p, w, &err), &err);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].persistent_ctas, ctas);
  return p;
}

/* The item of request r starting at token b: its CTA and queue position. */
static void item_at(const av_plan_t *p, int32_t r, int64_t b, int64_t e, int32_t *cta,
                    int32_t *order) {
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    const av_segment_t *s = &p->segments[it->seg_begin];
    if (it->n_seg == 1 && s->node == r && s->begin == b) {
      ck_assert_int_eq(s->end, e);
      *cta = it->cta;
      *order = it->order;
      return;
    }
  }
  ck_abort_msg("no item of request %d starts at token %lld", r, (long long)b);
}

/* Three requests of 60, 50 and 10 tokens on 3 CTAs: L = ceil(120 / 3) = 40, chunks
 * r0[0,40) r1[0,40) (the full ones, in creation order), then r0[40,60), r1[40,50),
 * r2[0,10) (the shorter ones by length, then creation order). A chunk costs
 * alpha·T_q + beta·l_kv = 16 + l_kv (Algorithm 1 line 10, T_q = 16 rows):
 *   r0[0,40)  -> CTA0 (all 0, lowest id)    costs {56, 0, 0}
 *   r1[0,40)  -> CTA1 (0 = 0, lower id)     costs {56, 56, 0}
 *   r0[40,60) -> CTA2                        costs {56, 56, 36}
 *   r1[40,50) -> CTA2 (36 < 56)              costs {56, 56, 62}
 *   r2[0,10)  -> CTA0 (56 = 56, lower id)    costs {82, 56, 62}
 * After the second chunk the heap is [CTA2 0, CTA0 56, CTA1 56] only if the sift-down looks
 * at the right child (CTA2 sits there); looking left only, the third chunk would go to a CTA
 * of cost 56 while CTA2 is idle. Taking ties to the higher id, the second chunk would go to
 * CTA2. */
START_TEST(three_ctas_by_hand) {
  const int64_t len[] = {60, 50, 10};
  av_workload_t *w = roots(3, len);
  av_plan_t *p = plan(w, 3);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 16);
  const int32_t r[] = {0, 1, 0, 1, 2};
  const int64_t b[] = {0, 0, 40, 40, 0}, e[] = {40, 40, 60, 50, 10};
  const int32_t cta[] = {0, 1, 2, 2, 0}, order[] = {0, 0, 0, 1, 1};
  ck_assert_int_eq(p->n_items, 5);
  for (int k = 0; k < 5; k++) {
    int32_t c, o;
    item_at(p, r[k], b[k], e[k], &c, &o);
    ck_assert_msg(c == cta[k] && o == order[k], "r%d[%lld,%lld): CTA %d #%d, expected CTA %d #%d",
                  r[k], (long long)b[k], (long long)e[k], c, o, cta[k], order[k]);
  }
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

typedef struct {
  int32_t r, w;
  int64_t b, e;
} chunk_t;

static int chunk_cmp(const void *x, const void *y) {
  const chunk_t *a = x, *c = y;
  if (a->e - a->b != c->e - c->b) return a->e - a->b > c->e - c->b ? -1 : 1;
  return (a->w > c->w) - (a->w < c->w);
}

/* Algorithm 1 without a heap: chunks of L = ceil(total / ctas) tokens in creation order w,
 * sorted longest first then by w, each to the CTA of least cost by a scan over all CTAs
 * (lowest id among equals); every item of the plan must sit on that CTA at that position. */
static void brute_force(const av_workload_t *w, const av_plan_t *p, int ctas) {
  int64_t total = 0;
  for (int32_t r = 0; r < w->n_requests; r++) total += w->nodes[r].kv_len_tokens;
  int64_t L = (total + ctas - 1) / ctas;
  chunk_t *ch = calloc((size_t)(total + 1), sizeof *ch);
  int32_t n = 0;
  for (int32_t r = 0; r < w->n_requests; r++)
    for (int64_t b = 0; b < w->nodes[r].kv_len_tokens; b += L) {
      int64_t e = b + L < w->nodes[r].kv_len_tokens ? b + L : w->nodes[r].kv_len_tokens;
      ch[n] = (chunk_t){.r = r, .w = n, .b = b, .e = e};
      n++;
    }
  qsort(ch, (size_t)n, sizeof *ch, chunk_cmp);
  ck_assert_int_eq(p->n_items, n);
  double *cost = calloc((size_t)ctas, sizeof *cost);
  int32_t *queue = calloc((size_t)ctas, sizeof *queue);
  for (int32_t k = 0; k < n; k++) {
    int32_t best = 0;
    for (int32_t c = 1; c < ctas; c++)
      if (cost[c] < cost[best]) best = c;
    cost[best] += p->launches[0].tile.m_rows + (double)(ch[k].e - ch[k].b);
    int32_t cta, order;
    item_at(p, ch[k].r, ch[k].b, ch[k].e, &cta, &order);
    ck_assert_msg(cta == best && order == queue[best],
                  "%d CTAs, chunk %d (r%d[%lld,%lld)): CTA %d #%d, expected CTA %d #%d", ctas,
                  k, ch[k].r, (long long)ch[k].b, (long long)ch[k].e, cta, order, best,
                  queue[best]);
    queue[best]++;
  }
  free(cost);
  free(queue);
  free(ch);
}

/* Seeded batches of 2-40 requests of 1-300 tokens on 3 to 13 CTAs; equal lengths are common
 * (a small range), so ties between CTAs are too. */
START_TEST(matches_linear_scan) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int trial = 0; trial < 60; trial++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int n = 2 + (int)((s >> 33) % 39);
    int64_t len[40];
    for (int i = 0; i < n; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      len[i] = 1 + (int64_t)((s >> 33) % (trial % 2 ? 300 : 8)) * (trial % 2 ? 1 : 16);
    }
    const int ctas_list[] = {3, 4, 5, 7, 13};
    int ctas = ctas_list[trial % 5];
    av_workload_t *w = roots(n, len);
    av_plan_t *p = plan(w, ctas);
    brute_force(w, p, ctas);
    av_plan_destroy(p);
    av_workload_destroy(w);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("streamk_heap");
  TCase *tc = tcase_create("algorithm1_assignment");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, three_ctas_by_hand);
  tcase_add_test(tc, matches_linear_scan);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
