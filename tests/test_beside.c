/* launch=beside (node_naive / fixed_division; it implies tiles=per_shape): the largest tile's
 * pieces are a grid launched first on stream 0 and the smaller tiles persistent launches with
 * as many queues as fit in what the grid's CTAs leave on each SM. The case is the
 * B=[1,128] L=[16384,512] tree (prefix16k, docs/kernels.md) at heads 32/8: the root's
 * 64-row pieces on the
 * m64 grid, the 4-row leaves on m16 queues. With the sm_90a wgmma m64 tiles at 168 registers
 * (three to an SM), two root CTAs per SM leave a third of the registers and shared memory:
 * two m16 n32 CTAs (64 threads) or one m16 n64 CTA; at 190 registers nothing fits beside.
 * Only the root is cut in k = 4; the leaves stay whole. The same batch checks the plans that
 * take the warp-specialised m128 tile with wide=on: fixed_division's, greedy_division's (the
 * root's grid sized to one wave, then the leaves' queues on the same stream) and auto's race. */
#include <string.h>

#include "proofs/proofs.h"
#include "selectors/auto.h"
#include "schedulers/scheduler.h"
#include "core/gpu.h"
#include "costmodels/costmodel.h"
#include "core/plan.h"
#include "core/variants.h"
#include "tests/support.h"

extern const av_scheduler_ops_t av_sched_fixed_division;
extern const av_scheduler_ops_t av_sched_greedy_division;
extern const av_scheduler_ops_t av_sched_auto;

/* sm_90 fp16 d128 variants as ptxas reported them (kernels/variants.json of the m64 root kernels),
 * written out so the test does not depend on the build's table. Index 0 is the m64 root. */
static av_variant_t table[] = {
    {.tile = {AV_KERNEL_PARTIAL, 64, 64, 4}, .head_dim = 128, .dtype = AV_DTYPE_FP16,
     .sm_arch = 90, .threads = 128, .regs_per_thread = 168, .smem_bytes = 69632},
    {.tile = {AV_KERNEL_PARTIAL, 16, 32, 2}, .head_dim = 128, .dtype = AV_DTYPE_FP16,
     .sm_arch = 90, .threads = 64, .regs_per_thread = 168, .smem_bytes = 34816},
    {.tile = {AV_KERNEL_PARTIAL, 16, 64, 4}, .head_dim = 128, .dtype = AV_DTYPE_FP16,
     .sm_arch = 90, .threads = 128, .regs_per_thread = 168, .smem_bytes = 69632},
    {.tile = {AV_KERNEL_PERSISTENT, 16, 32, 2}, .head_dim = 128, .dtype = AV_DTYPE_FP16,
     .sm_arch = 90, .threads = 64, .regs_per_thread = 166, .smem_bytes = 35008},
    {.tile = {AV_KERNEL_PERSISTENT, 16, 64, 4}, .head_dim = 128, .dtype = AV_DTYPE_FP16,
     .sm_arch = 90, .threads = 128, .regs_per_thread = 167, .smem_bytes = 69824},
    /* the warp-specialised m128 tile: one CTA an SM, on the menu only with wide=on */
    {.tile = {AV_KERNEL_PARTIAL, 128, 128, 12}, .head_dim = 128, .dtype = AV_DTYPE_FP16,
     .sm_arch = 90, .threads = 384, .regs_per_thread = 168, .smem_bytes = 208896},
};

/* fixed_division (k = 4) with the given "set" on the prefix16k tree; the plan is proved
 * exact. Caller owns it. */
/* The batch of these tests: prefix16k (one 16384-token root shared by 128 requests of 512
 * tokens) on the H200 with the table above. */
typedef struct fixture {
  av_gpu_t gpu;
  av_variants_t vs;
  av_workload_t *w;
  av_costmodel_t *cost;
  av_sched_ctx_t ctx;
} fixture_t;

static void fixture_init(fixture_t *f) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &f->gpu, &err), &err);
  f->vs = (av_variants_t){.n = (int)(sizeof table / sizeof table[0]), .v = table};
  av_heads_t h = av_test_heads();
  int64_t B[] = {1, 128}, L[] = {16384, 512};
  f->w = av_workload_from_levels(B, L, 2, &h, &err);
  AV_CK_OK(f->w ? AV_OK : err.code, &err);
  /* the roofline model over the table: greedy_division needs one, the others ignore it */
  av_cost_env_t env = {.gpu = &f->gpu, .heads = &f->w->heads, .variants = &f->vs};
  f->cost = av_costmodel_create(av_costmodel_find("roofline"), NULL, &env, &err);
  AV_CK_OK(f->cost ? AV_OK : err.code, &err);
  f->ctx = (av_sched_ctx_t){.workload = f->w, .gpu = &f->gpu, .variants = &f->vs, .cost = f->cost};
}

static void fixture_free(fixture_t *f) {
  av_costmodel_destroy(f->cost);
  av_workload_destroy(f->w);
}

/* A scheduler's plan of the batch with its parameters `set`, proved exact. */
static av_plan_t *plan_with(const av_scheduler_ops_t *ops, const char *const *set) {
  av_error_t err;
  av_error_clear(&err);
  fixture_t f;
  fixture_init(&f);
  av_params_t params;
  AV_CK_OK(av_params_init(&params, ops->params, &err), &err);
  for (int i = 0; set[i]; i++) AV_CK_OK(av_params_set_text(&params, set[i], "test", &err), &err);
  av_plan_t *p = NULL;
  AV_CK_OK(av_scheduler_plan(ops, &params, &f.ctx, &p, &err), &err);
  AV_CK_OK(av_plan_check(p, f.w, &err), &err);
  fixture_free(&f);
  return p;
}

static av_plan_t *prefix16k_plan(const char *const *set) {
  return plan_with(&av_sched_fixed_division, set);
}

START_TEST(test_beside_fills_the_room) {
  const char *set[] = {"tiles=per_shape", "launch=beside", NULL};
  table[0].regs_per_thread = 168;
  av_plan_t *p = prefix16k_plan(set);
  ck_assert_int_eq(p->n_launches, 2);
  /* the root grid first, on stream 0: 8 query groups x 4 pieces */
  const av_launch_t *g = &p->launches[0], *b = &p->launches[1];
  ck_assert_int_eq(g->tile.kind, AV_KERNEL_PARTIAL);
  ck_assert_int_eq(g->tile.m_rows, 64);
  ck_assert_int_eq(g->stream, 0);
  ck_assert_int_eq(g->persistent_ctas, 0);
  /* 256 root CTAs on 132 SMs: two per SM leave room for two m16 n32 CTAs (one m16 n64):
   * n32 is taken, 132 x 2 / 8 KV heads = 33 queues */
  ck_assert_int_eq(b->tile.kind, AV_KERNEL_PERSISTENT);
  ck_assert_int_eq(b->tile.m_rows, 16);
  ck_assert_int_eq(b->tile.n_tokens, 32);
  ck_assert_int_eq(b->stream, 1);
  ck_assert_int_eq(b->persistent_ctas, 33);
  int roots = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    const int on_grid = it->launch == 0;
    roots += on_grid;
    const av_segment_t *sg = &p->segments[it->seg_begin];
    ck_assert_int_eq(sg->node == 0, on_grid);
    if (on_grid) continue;
    /* a leaf on the queues stays whole: the queues balance it, a cut only adds a merge */
    ck_assert(it->cta >= 0 && it->cta < 33);
    ck_assert_int_eq(sg->begin, 0);
    ck_assert_int_eq(sg->end, 512);
  }
  ck_assert_int_eq(roots, 32);
  ck_assert_int_eq(p->n_items, 32 + 128);
  av_plan_destroy(p);
}
END_TEST

START_TEST(test_beside_is_per_shape) {
  /* with the default tiles=single the plan is the same two launches */
  const char *set[] = {"launch=beside", NULL};
  av_plan_t *p = prefix16k_plan(set);
  ck_assert_int_eq(p->n_launches, 2);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 64);
  ck_assert_int_eq(p->launches[1].tile.kind, AV_KERNEL_PERSISTENT);
  av_plan_destroy(p);
}
END_TEST

START_TEST(test_beside_no_room) {
  /* m64 at 190 registers: two root CTAs take all the registers an SM can give them, so the
   * leaves get one queue per SM (they start as the grid drains) and the preferred n */
  const char *set[] = {"tiles=per_shape", "launch=beside", NULL};
  table[0].regs_per_thread = 190;
  av_plan_t *p = prefix16k_plan(set);
  table[0].regs_per_thread = 168;
  ck_assert_int_eq(p->launches[1].persistent_ctas, 132 / 8);
  ck_assert_int_eq(p->launches[1].tile.n_tokens, 64);
  av_plan_destroy(p);
}
END_TEST

/* The largest m among a plan's launches. */
static int largest_m(const av_plan_t *p) {
  int m = 0;
  for (int32_t l = 0; l < p->n_launches; l++)
    if (p->launches[l].tile.m_rows > m) m = p->launches[l].tile.m_rows;
  return m;
}

START_TEST(test_wide_only_when_asked) {
  /* wide off (the default): the root's 512 rows go in m64 pieces, never on the m128 tile */
  const char *off[] = {"tiles=per_shape", NULL}, *on[] = {"tiles=per_shape", "wide=on", NULL};
  av_plan_t *p = prefix16k_plan(off);
  ck_assert_int_eq(largest_m(p), 64);
  av_plan_destroy(p);
  /* wide on: 32 queries x GQA 4 = 128 rows a root piece, 4 groups x 4 pieces; the 4-row
   * leaves keep the smallest tile */
  p = prefix16k_plan(on);
  ck_assert_int_eq(largest_m(p), 128);
  int roots = 0;
  for (int32_t i = 0; i < p->n_items; i++)
    roots += p->launches[p->items[i].launch].tile.m_rows == 128;
  ck_assert_int_eq(roots, 16);
  av_plan_destroy(p);
}
END_TEST

START_TEST(test_wide_beside_takes_free_sms) {
  /* 16 root pieces x 8 KV heads = 128 m128 CTAs, one an SM: 4 of the 132 SMs stay free and
   * the leaves' queues fill them at the m16 n32 tile's full occupancy (6 a SM by shared
   * memory): 4 x 6 / 8 KV heads = 3 queues */
  const char *k4[] = {"tiles=per_shape", "launch=beside", "wide=on", NULL};
  av_plan_t *p = prefix16k_plan(k4);
  ck_assert_int_eq(p->n_launches, 2);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 128);
  ck_assert_int_eq(p->launches[1].tile.kind, AV_KERNEL_PERSISTENT);
  ck_assert_int_eq(p->launches[1].tile.n_tokens, 32);
  ck_assert_int_eq(p->launches[1].persistent_ctas, 3);
  av_plan_destroy(p);
  /* k = 8: 256 root CTAs cover every SM, so one queue per SM, started as the grid drains */
  const char *k8[] = {"tiles=per_shape", "launch=beside", "wide=on", "k=8", NULL};
  p = prefix16k_plan(k8);
  ck_assert_int_eq(p->launches[0].tile.m_rows, 128);
  ck_assert_int_eq(p->launches[1].persistent_ctas, 132 / 8);
  av_plan_destroy(p);
}
END_TEST

START_TEST(test_greedy_wide_grid_then_queues) {
  /* wide off: one persistent launch, the root's 512 rows a KV head in pieces of the table's
   * persistent tile, m16 */
  const char *off[] = {NULL}, *on[] = {"wide=on", NULL};
  av_plan_t *p = plan_with(&av_sched_greedy_division, off);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(largest_m(p), 16);
  av_plan_destroy(p);
  /* wide on: the root's four 128-row groups divided for the m128 grid, whose p is one wave
   * of it (132 SMs x 1 / 8 KV heads = 16 CTAs a KV head), launched first; the 4-row leaves
   * after it on the same stream, on persistent queues of the smallest tile */
  p = plan_with(&av_sched_greedy_division, on);
  ck_assert_int_eq(p->n_launches, 2);
  const av_launch_t *g = &p->launches[0], *q = &p->launches[1];
  ck_assert_int_eq(g->tile.m_rows, 128);
  ck_assert_int_eq(g->persistent_ctas, 0);
  ck_assert_int_eq(q->tile.kind, AV_KERNEL_PERSISTENT);
  ck_assert_int_eq(q->tile.m_rows, 16);
  ck_assert_int_eq(g->stream, 0);
  ck_assert_int_eq(q->stream, 0);
  int32_t root_items = 0, leaf_items = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    if (it->launch == 0) {
      root_items++;
      ck_assert_int_eq(it->n_q, 32); /* 32 queries x GQA 4 = 128 rows */
    } else {
      leaf_items++;
      ck_assert_int_eq(it->n_q, 1);
    }
  }
  /* four pieces a group fill the wave exactly; the leaves, each cheaper than a root piece,
   * stay whole */
  ck_assert_int_eq(root_items, 16);
  ck_assert_int_eq(leaf_items, 128);
  av_plan_destroy(p);
}
END_TEST

/* auto's candidates, predicted fastest first, with auto's parameters `set`: their number. */
static int auto_ranks(const char *const *set, av_auto_candidate_t *c) {
  av_error_t err;
  av_error_clear(&err);
  fixture_t f;
  fixture_init(&f);
  av_params_t params;
  AV_CK_OK(av_params_init(&params, av_sched_auto.params, &err), &err);
  for (int i = 0; set[i]; i++) AV_CK_OK(av_params_set_text(&params, set[i], "test", &err), &err);
  int n = 0;
  AV_CK_OK(av_auto_rank(&f.ctx, &params, c, AV_AUTO_MAX_CANDIDATES, &n, &err), &err);
  fixture_free(&f);
  return n;
}

static int named(const av_auto_candidate_t *c, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(c[i].name, name) == 0) return 1;
  return 0;
}

START_TEST(test_auto_races_wide_only_when_asked) {
  static av_auto_candidate_t c[AV_AUTO_MAX_CANDIDATES];
  const char *off[] = {NULL}, *on[] = {"wide=on", NULL};
  const int n_off = auto_ranks(off, c);
  for (int i = 0; i < n_off; i++) ck_assert_msg(!strstr(c[i].name, "wide=on"), "%s", c[i].name);
  /* wide=on: the three m128 alternatives join the race, their parameters set together */
  const int n_on = auto_ranks(on, c);
  ck_assert_int_eq(n_on, n_off + 3);
  ck_assert(named(c, n_on, "greedy_division[wide=on]"));
  ck_assert(named(c, n_on, "fixed_division[tiles=per_shape;wide=on]"));
  ck_assert(named(c, n_on, "node_naive[tiles=per_shape;wide=on]"));
  /* the plan auto makes is its first candidate's: on the m128 tile exactly when that is one
   * of the wide alternatives */
  av_plan_t *p = plan_with(&av_sched_auto, on);
  char want[128];
  snprintf(want, sizeof want, "chose=%s,", c[0].name);
  ck_assert_msg(strstr(p->params, want) != NULL, "%s", p->params);
  ck_assert_int_eq(largest_m(p) == 128, strstr(c[0].name, "wide=on") != NULL);
  av_plan_destroy(p);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("beside");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_beside_fills_the_room);
  tcase_add_test(tc, test_beside_is_per_shape);
  tcase_add_test(tc, test_beside_no_room);
  tcase_add_test(tc, test_wide_only_when_asked);
  tcase_add_test(tc, test_wide_beside_takes_free_sms);
  tcase_add_test(tc, test_greedy_wide_grid_then_queues);
  tcase_add_test(tc, test_auto_races_wide_only_when_asked);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
