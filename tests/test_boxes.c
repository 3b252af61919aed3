/* Whole-box KV copies (docs/simulator.md#kv-copies-by-whole-boxes; sim/engine_boxes.c): on
 * sm_90 the kernels copy a segment's KV by TMA in boxes of min(block size, 32) tokens from a
 * page start, so a piece that begins inside a page reads from that page's start and every
 * piece reads up to the end of its last box. The span rule as a table of cases, and the
 * engine: a lone CTA over such a piece takes the profile's C at the boxes' tokens, and
 * exactly C at its own tokens where the kernels copy token-exact (another architecture, a
 * block size TMA cannot map, or the KV copy "cp_async"). The copy is a parameter of the run,
 * never the environment: an AV_NO_TMA left in it changes nothing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/costmodel.h"
#include "sim/engine_internal.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "support.h"
#include "profiler/profile.h"

static const av_tile_t PART = {AV_KERNEL_PARTIAL, 16, 64, 4};

/* sm_arch, block size, segment, the span the engine charges; every case under "tma" */
static const struct span_case {
  int sm_arch, block_size;
  int64_t begin, end, want_begin, want_end;
} spans[] = {
    {90, 16, 0, 64, 0, 64},      /* aligned: what the profile measures */
    {90, 16, 40, 104, 32, 112},  /* begins and ends inside 16-token pages */
    {90, 32, 104, 208, 96, 224}, /* pat-1's fixed_division pieces (416 / 4) */
    {90, 32, 0, 8, 0, 32},       /* a short piece reads its whole box */
    {90, 64, 70, 100, 64, 128},  /* boxes are at most 32 tokens: 64-token pages, 32-row boxes */
    {90, 64, 40, 60, 32, 64},
    {90, 12, 40, 104, 40, 104},  /* not a power of two: no tensor map, cp.async */
    {90, 4, 1, 3, 1, 3},         /* below 8: cp.async */
    {80, 16, 40, 104, 40, 104},  /* no TMA before Hopper */
    {89, 32, 104, 208, 104, 208},
};

START_TEST(test_span_cases) {
  for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
    const struct span_case *c = &spans[i];
    av_gpu_t g = av_test_small_gpu();
    g.sm_arch = c->sm_arch;
    av_workload_t w;
    memset(&w, 0, sizeof w);
    w.block_size_tokens = c->block_size;
    w.heads = av_test_heads();
    int64_t b, e;
    av__engine_box_span(av__engine_box_rows(&g, &w, AV_KV_COPY_TMA), c->begin, c->end, &b, &e);
    ck_assert_msg(b == c->want_begin && e == c->want_end,
                  "case %zu (sm_%d, block %d, [%lld, %lld)): got [%lld, %lld), want [%lld, %lld)",
                  i, c->sm_arch, c->block_size, (long long)c->begin, (long long)c->end,
                  (long long)b, (long long)e, (long long)c->want_begin, (long long)c->want_end);
  }
}
END_TEST

/* C(rows, kv) = 2 us + 0.01 us per token, flat in rows, measured at the token counts the
 * cases below look up (the model interpolates in log n between them). */
enum { FIXED_US = 2 };
static const double PER_TOKEN_US = 0.01;
static double lone_us(int64_t kv) { return FIXED_US + PER_TOKEN_US * (double)kv; }

static const char *write_profile(void) {
  av_profile_t p;
  av_test_profile_init(&p);
  const int64_t kv[] = {32, 64, 80, 128, 8192, 16384};
  av_test_profile_table(&p, PART, kv, 6, FIXED_US, PER_TOKEN_US);
  const char *path = av_test_write_profile(&p, "test_boxes");
  av_profile_free(&p);
  return path;
}

/* One CTA over tokens [begin, end) of a 256-token root (16-token pages), alone on a GPU
 * whose HBM, L2 and launches are out of the way: its simulated duration. */
static double lone_piece(int sm_arch, av_kv_copy_t copy, int64_t begin, int64_t end) {
  av_gpu_t g = av_test_small_gpu();
  g.sm_arch = sm_arch;
  g.hbm_bw_datasheet_GBps = g.hbm_bw_measured_GBps = g.l2_bw_GBps = 1e9;
  g.mem_latency_ns = 1;
  g.bytes_in_flight_per_sm = 1e12;
  g.fp16_tensor_tflops = g.fp32_tflops = 1e9;
  av_variant_t var[2];
  av_test_tile_variants(var, 76800);
  for (int i = 0; i < 2; i++) var[i].sm_arch = sm_arch;
  av_variants_t vs = {1, var};  /* the partial tile only: the profile has no other */
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_profile_cores_workload(1, 256, 0, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  ck_assert_int_eq(w->block_size_tokens, 16);
  av_plan_t *p = av_profile_cores_plan(w, &PART, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_items, 1);
  av_segment_t *sg = &p->segments[p->items[0].seg_begin];
  sg->begin = begin;  /* a piece of the root, as fixed_division cuts them */
  sg->end = end;
  av_costmodel_t *m = av_test_profile_model(write_profile(), &g, &w->heads, &vs, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1, .kv_copy = copy};
  av_sim_result_t res;
  av_timeline_t tl;
  memset(&tl, 0, sizeof tl);
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){p, w, &g, &vs, m}, &res, &tl, &err), &err);
  double dur = -1;
  for (int i = 0; i < tl.n; i++)
    if (tl.ev[i].item == 0) dur = tl.ev[i].end_us - tl.ev[i].start_us;
  av_timeline_free(&tl);
  av_sim_result_free(&res);
  av_costmodel_destroy(m);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return dur;
}

START_TEST(test_engine_piece) {
  const av_kv_copy_t TMA = AV_KV_COPY_TMA, CP = AV_KV_COPY_CP_ASYNC;
  /* aligned: C at its own 64 tokens, as the profile measured it, whatever the copy */
  ck_assert_double_eq_tol(lone_piece(90, TMA, 0, 64), lone_us(64), 1e-6);
  ck_assert_double_eq_tol(lone_piece(90, CP, 0, 64), lone_us(64), 1e-6);
  /* [40, 104) reads the boxes [32, 112): C(80), not C(64) */
  ck_assert_double_eq_tol(lone_piece(90, TMA, 40, 104), lone_us(80), 1e-6);
  /* token-exact copies: before Hopper, and with the KV copy "cp_async" */
  ck_assert_double_eq_tol(lone_piece(80, TMA, 40, 104), lone_us(64), 1e-6);
  ck_assert_double_eq_tol(lone_piece(90, CP, 40, 104), lone_us(64), 1e-6);
}
END_TEST

/* The environment the simulator runs in is no input: the former switch of the kernels'
 * copies, left set, changes no prediction (only the run's "kv_copy" does). */
START_TEST(test_environment_ignored) {
  setenv("AV_NO_TMA", "1", 1);
  const double d = lone_piece(90, AV_KV_COPY_TMA, 40, 104);
  unsetenv("AV_NO_TMA");
  ck_assert_double_eq_tol(d, lone_us(80), 1e-6);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("boxes");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_span_cases);
  tcase_add_test(tc, test_engine_piece);
  tcase_add_test(tc, test_environment_ignored);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
