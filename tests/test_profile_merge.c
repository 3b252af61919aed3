/* The profile's merge step (docs/simulator.md): the "merge" key written by the profiler and
 * read back by the `profile` cost model, bad values rejected with file and key path (data:
 * tests/data/profile_merge/bad/<case>/{input.json, expected_error}), the profiler's merge and
 * empty-CTA batches, and the engine: a lone merge CTA takes the profile's time for its
 * longest slot list, an empty persistent CTA holds its slot for the measured time, and a
 * profile without the key leaves the spec's figures in charge. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/costmodel.h"
#include "core/json_util.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "support.h"
#include "profiler/profile.h"

static const av_tile_t TILE = {AV_KERNEL_PARTIAL, 16, 64, 4};
static const av_tile_t PTILE = {AV_KERNEL_PERSISTENT, 16, 64, 4};
static const int32_t SLOTS[4] = {1, 2, 4, 8};
static const double TIMES[4] = {2.0, 2.5, 3.5, 5.5};
#define EMPTY_US 0.75
#define SPEC_FIXED 3.0
static double g_join, g_tail;  /* the spec's join_overhead_us and run_tail_us in a test */
static double g_pdl;           /* the spec's pdl_join_overhead_us in a test */
static double g_l2;            /* the spec's L2 bytes in a test (0: no L2, states warm) */
#define COLD 2.0               /* time_cold_us = COLD x time_us in make_profile */

/* 4 SMs; HBM, L2 and the spec's rates out of the way so only measured figures bind. */
static av_gpu_t test_gpu(void) {
  av_gpu_t g = av_test_small_gpu();
  g.hbm_bw_datasheet_GBps = 1e9;
  g.hbm_bw_measured_GBps = 1e9;
  g.l2_bytes = g_l2;
  g.l2_bw_GBps = 1e9;
  g.mem_latency_ns = 1;
  g.bytes_in_flight_per_sm = 1e12;
  g.fp16_tensor_tflops = 1e9;
  g.fp32_tflops = 1e9;
  g.launch_overhead_us = 2;
  g.cta_fixed_us = SPEC_FIXED;
  g.join_overhead_us = g_join;
  g.run_tail_us = g_tail;
  g.pdl_join_overhead_us = g_pdl;
  return g;
}

/* A profile of the partial and persistent tiles on test-gpu (C = 0.01 us per token), with
 * the merge curve of TIMES and EMPTY_US when `merge` (and time_cold_us, COLD x TIMES, when
 * merge is 2). */
static av_profile_t make_profile(int merge) {
  av_profile_t p;
  av_test_profile_init(&p);
  const int64_t kv[] = {16, 16384};
  av_test_profile_table(&p, TILE, kv, 2, 0, 0.01);
  av_test_profile_table(&p, PTILE, kv, 2, 0, 0.01);
  if (merge) {
    p.n_merge = 1;
    av_profile_merge_t *m = &p.merge[0];
    m->head_dim = 128;
    m->dtype = AV_DTYPE_FP16;
    m->rows = 4;
    m->n = 4;
    for (int i = 0; i < 4; i++) {
      m->slots[i] = SLOTS[i];
      m->time_us[i] = TIMES[i];
      m->time_cold_us[i] = merge > 1 ? COLD * TIMES[i] : 0;
    }
    p.empty_cta_us = EMPTY_US;
  }
  return p;
}

static double merge_time_cold(const av_costmodel_t *m, int slots, double cold) {
  av_cost_query_t q = {.n_q = slots, .rows = 4, .cold_frac = cold};
  q.tile.kind = AV_KERNEL_MERGE;
  q.tile.m_rows = 4;
  av_item_cost_t c;
  av_costmodel_estimate(m, &q, &c);
  return c.time_us;
}

static double merge_time(const av_costmodel_t *m, int slots) {
  return merge_time_cold(m, slots, 0);
}

static double empty_time(const av_costmodel_t *m) {
  av_cost_query_t q = {.n_q = 0, .kv_tokens = 0};
  q.tile = PTILE;
  av_item_cost_t c;
  av_costmodel_estimate(m, &q, &c);
  return c.time_us;
}

START_TEST(test_round_trip) {
  av_profile_t p = make_profile(1), old = make_profile(0);
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  h.head_dim = 128;
  h.dtype = AV_DTYPE_FP16;
  av_error_t err;
  av_error_clear(&err);
  av_costmodel_t *m =
      av_test_profile_model(av_test_write_profile(&p, "test_profile_merge_rt"), &g, &h, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(merge_time(m, SLOTS[i]), TIMES[i], 1e-9);
  ck_assert_double_eq_tol(merge_time(m, 3), 3.0, 1e-9);          /* between 2 and 4 */
  ck_assert_double_eq_tol(merge_time(m, 16), 5.5 + 8 * 0.5, 1e-9); /* last slope on */
  ck_assert_double_eq_tol(empty_time(m), EMPTY_US, 1e-9);
  /* without a cold curve the warm one stands in for states read from HBM */
  ck_assert_double_eq_tol(merge_time_cold(m, 4, 1), 3.5, 1e-9);
  av_costmodel_destroy(m);
  av_profile_t cold = make_profile(2);
  m = av_test_profile_model(av_test_write_profile(&cold, "test_profile_merge_cold"), &g, &h, NULL,
                            &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  ck_assert_double_eq_tol(merge_time_cold(m, 4, 0), 3.5, 1e-9);
  ck_assert_double_eq_tol(merge_time_cold(m, 4, 1), COLD * 3.5, 1e-9);
  ck_assert_double_eq_tol(merge_time_cold(m, 3, 0.25), 0.75 * 3.0 + 0.25 * COLD * 3.0, 1e-9);
  ck_assert_double_eq_tol(merge_time_cold(m, 16, 1), COLD * (5.5 + 8 * 0.5), 1e-9);
  av_costmodel_destroy(m);
  av_profile_free(&cold);
  m = av_test_profile_model(av_test_write_profile(&old, "test_profile_merge_old"), &g, &h, NULL,
                            &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  ck_assert_double_eq(merge_time(m, 4), 0);
  ck_assert_double_eq(empty_time(m), 0);
  av_costmodel_destroy(m);
  av_profile_free(&p);
  av_profile_free(&old);
}
END_TEST

START_TEST(test_bad_values) {
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  ck_assert_int_ge(av_test_bad_profiles("data/profile_merge/bad", &g, &h), 8);
}
END_TEST

START_TEST(test_profiler_batches) {
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_profile_merge_workload(8, 4, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  ck_assert_int_eq(w->n_requests, 1);
  ck_assert_int_eq(w->heads.hq, 4);
  ck_assert_int_eq(w->heads.hkv, 1);
  ck_assert_int_eq(w->nodes[0].kv_len_tokens, 8 * AV_PROF_MERGE_SEG);
  av_plan_t *p = av_profile_merge_plan(w, &TILE, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_items, 8);
  ck_assert_int_eq(p->merge_offsets[1] - p->merge_offsets[0], 8);
  av_plan_destroy(p);
  p = av_profile_empty_plan(w, &PTILE, 40, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_items, 1);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 40);
  ck_assert_int_eq(p->n_slots, 0);
  av_plan_destroy(p);
  ck_assert_ptr_null(av_profile_empty_plan(w, &PTILE, 0, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);
  av_workload_destroy(w);
  av_error_clear(&err);
  ck_assert_ptr_null(av_profile_merge_workload(0, 4, 128, AV_DTYPE_FP16, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);
  /* the cold batch: the subject first, then one final-output streamer per extra request */
  av_error_clear(&err);
  w = av_profile_merge_cold_workload(8, 4, 128, AV_DTYPE_FP16, 6, 96, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  ck_assert_int_eq(w->n_requests, 7);
  ck_assert_int_eq(w->n_nodes, 7);
  ck_assert_int_eq(w->nodes[0].kv_len_tokens, 8 * AV_PROF_MERGE_SEG);
  ck_assert_int_eq(w->nodes[6].kv_len_tokens, 96);
  p = av_profile_merge_plan(w, &TILE, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_items, 8 + 6);
  ck_assert_int_eq(p->n_slots, 8);
  for (int32_t i = 0; i < p->n_items; i++)
    ck_assert_int_eq(p->items[i].output, i < 8 ? AV_OUT_PARTIAL : AV_OUT_FINAL);
  ck_assert_int_eq(p->merge_offsets[1] - p->merge_offsets[0], 8);
  ck_assert_int_eq(p->merge_offsets[7] - p->merge_offsets[1], 0);
  av_plan_destroy(p);
  av_workload_destroy(w);
  ck_assert_ptr_null(av_profile_merge_cold_workload(8, 4, 128, AV_DTYPE_FP16, 0, 96, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);
  av_error_clear(&err);
  ck_assert_ptr_null(av_profile_merge_cold_workload(8, 4, 128, AV_DTYPE_FP16, 2, 0, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);
}
END_TEST

/* Simulates p on w with the profile at path; returns the result (caller frees) and, when
 * merge_cta_us is given, the duration of the (one) merge CTA; *gap (may be NULL) = the merge
 * CTA's start minus the last attention CTA's end. */
static av_sim_result_t simulate_gap(const char *path, const av_plan_t *p,
                                    const av_workload_t *w, double *merge_cta_us, double *gap,
                                    double *last_end) {
  av_gpu_t g = test_gpu();
  av_variant_t var[2];
  av_test_tile_variants(var, 76800);
  av_variants_t vs = {2, var};
  av_error_t err;
  av_error_clear(&err);
  av_costmodel_t *m = av_test_profile_model(path, &g, &w->heads, &vs, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
  av_sim_result_t res;
  av_timeline_t tl;
  memset(&tl, 0, sizeof tl);
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){p, w, &g, &vs, m}, &res, &tl, &err), &err);
  int merges = 0;
  double attn_end = 0, merge_start = 0, end = 0;
  for (int32_t i = 0; i < tl.n; i++) {
    end = fmax(end, tl.ev[i].end_us);
    if (tl.ev[i].item >= 0) {
      attn_end = fmax(attn_end, tl.ev[i].end_us);
      continue;
    }
    if (merge_cta_us) *merge_cta_us = tl.ev[i].end_us - tl.ev[i].start_us;
    merge_start = tl.ev[i].start_us;
    merges++;
  }
  ck_assert_int_eq(merges, p->n_slots > 0 ? 1 : 0);
  if (gap) *gap = merge_start - attn_end;
  if (last_end) *last_end = end;
  av_timeline_free(&tl);
  av_costmodel_destroy(m);
  return res;
}

static av_sim_result_t simulate(const char *path, const av_plan_t *p, const av_workload_t *w,
                                double *merge_cta_us) {
  return simulate_gap(path, p, w, merge_cta_us, NULL, NULL);
}

START_TEST(test_engine_merge_and_empty) {
  av_profile_t with = make_profile(1), without = make_profile(0);
  char p_with[1024], p_without[1024];
  snprintf(p_with, sizeof p_with, "%s", av_test_write_profile(&with, "test_profile_merge_engine"));
  snprintf(p_without, sizeof p_without, "%s",
           av_test_write_profile(&without, "test_profile_merge_engine_old"));
  av_error_t err;
  av_error_clear(&err);
  /* one merge CTA (4 rows, one request) of k slots: alone it takes the profile's T(k) */
  const int ks[3] = {2, 8, 16};
  const double want[3] = {2.5, 5.5, 9.5};
  for (int i = 0; i < 3; i++) {
    av_workload_t *w = av_profile_merge_workload(ks[i], 4, 128, AV_DTYPE_FP16, &err);
    ck_assert_ptr_nonnull(w);
    av_plan_t *p = av_profile_merge_plan(w, &TILE, &err);
    ck_assert_msg(p != NULL, "%s", err.message);
    double cta = 0;
    av_sim_result_t r = simulate(p_with, p, w, &cta);
    ck_assert_msg(fabs(cta - want[i]) < 1e-6, "k=%d: merge CTA %.6f us, expected %.4f", ks[i],
                  cta, want[i]);
    av_sim_result_free(&r);
    /* without the key the merge is charged the spec's fixed cost (and moves its bytes) */
    r = simulate(p_without, p, w, &cta);
    ck_assert_double_ge(cta, SPEC_FIXED);
    ck_assert_double_lt(cta, SPEC_FIXED + 0.01);
    av_sim_result_free(&r);
    av_plan_destroy(p);
    av_workload_destroy(w);
  }
  /* empty persistent CTAs: each wave of them holds the slots for EMPTY_US (spec: its fixed
   * cost); one item of 16 tokens on CTA 0 */
  const int64_t kv = 16;
  av_workload_t *w = av_profile_workload(1, &kv, 1, 128, AV_DTYPE_FP16, &err);
  ck_assert_ptr_nonnull(w);
  double span[2][2];
  int per_wave = 0;
  for (int v = 0; v < 2; v++)
    for (int s = 0; s < 2; s++) {
      av_plan_t *probe = av_profile_empty_plan(w, &PTILE, 1, &err);
      av_sim_result_t r0 = simulate(p_with, probe, w, NULL);
      per_wave = 4 * r0.launches[0].ctas_per_sm;
      av_sim_result_free(&r0);
      av_plan_destroy(probe);
      av_plan_t *p = av_profile_empty_plan(w, &PTILE, (s ? 9 : 1) * per_wave, &err);
      ck_assert_msg(p != NULL, "%s", err.message);
      av_sim_result_t r = simulate(v ? p_without : p_with, p, w, NULL);
      span[v][s] = r.makespan_us;
      av_sim_result_free(&r);
      av_plan_destroy(p);
    }
  ck_assert_int_gt(per_wave, 0);
  ck_assert_msg(fabs(span[0][1] - span[0][0] - 8 * EMPTY_US) < 1e-6,
                "8 more waves of empty CTAs: +%.6f us, expected %.4f", span[0][1] - span[0][0],
                8 * EMPTY_US);
  ck_assert_msg(fabs(span[1][1] - span[1][0] - 8 * SPEC_FIXED) < 1e-6,
                "without the key: +%.6f us, expected %.4f", span[1][1] - span[1][0],
                8 * SPEC_FIXED);
  av_workload_destroy(w);
  av_profile_free(&with);
  av_profile_free(&without);
}
END_TEST

/* Where the merge finds its states: with the batch's KV and partial states (X bytes) larger
 * than L2, a fraction 1 - L2 / X comes from HBM at the cold curve's time; with no L2 in the
 * spec, or X within it, the warm curve alone. */
START_TEST(test_engine_merge_cold) {
  av_profile_t cold = make_profile(2);
  char path[1024];
  snprintf(path, sizeof path, "%s", av_test_write_profile(&cold, "test_profile_merge_engine_cold"));
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_profile_merge_workload(8, 4, 128, AV_DTYPE_FP16, &err);
  av_plan_t *p = w ? av_profile_merge_plan(w, &TILE, &err) : NULL;
  ck_assert_msg(p != NULL, "%s", err.message);
  /* X: 128 KV tokens x 512 bytes (K and V, d 128, fp16, one KV head) + 8 slots x 4 rows x
   * (128 + 1) fp32 */
  const double x = 128.0 * 512 + 8.0 * 4 * 129 * 4;
  const double l2[3] = {0, 2 * x, x / 4}, frac[3] = {0, 0, 0.75};
  for (int i = 0; i < 3; i++) {
    g_l2 = l2[i];
    double cta = 0;
    av_sim_result_t r = simulate(path, p, w, &cta);
    const double want = (1 - frac[i]) * 5.5 + frac[i] * COLD * 5.5;
    ck_assert_msg(fabs(cta - want) < 1e-6, "L2 %g: merge CTA %.6f us, expected %.6f", l2[i],
                  cta, want);
    av_sim_result_free(&r);
  }
  g_l2 = 0;
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_profile_free(&cold);
}
END_TEST

/* The dispatch figures of a calibrated spec: the merge starts join_overhead_us after the
 * last attention CTA (its launch was issued long before), and the run ends run_tail_us after
 * the last CTA; a spec without them (0) keeps the merge right behind the attention. */
START_TEST(test_engine_join_and_tail) {
  av_profile_t with = make_profile(1);
  char path[1024];
  snprintf(path, sizeof path, "%s", av_test_write_profile(&with, "test_profile_merge_join"));
  av_error_t err;
  av_error_clear(&err);
  /* 4096 tokens per item: the attention launch outlasts the merge launch's issue time */
  av_workload_t *w = av_profile_merge_workload(4, 4, 128, AV_DTYPE_FP16, &err);
  ck_assert_ptr_nonnull(w);
  w->nodes[0].kv_len_tokens = 4 * 4096;
  av_plan_t *p = av_plan_create(w, "test");
  int32_t l = av_plan_add_launch(p, 0, &TILE, 0);
  for (int32_t j = 0; j < 4; j++) {
    const int32_t q = 0;
    av_segment_t sg = {0, j * 4096, (j + 1) * 4096};
    ck_assert_int_ge(
        av_plan_add_item(p, l, (av_item_work_t){&q, 1, &sg, 1}, AV_OUT_PARTIAL, -1, -1), 0);
  }
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  double gap, last, cta;
  g_join = 0, g_tail = 0;
  av_sim_result_t r = simulate_gap(path, p, w, &cta, &gap, &last);
  ck_assert_double_eq_tol(gap, 0, 1e-9);
  ck_assert_double_eq_tol(r.makespan_us, last, 1e-9);
  av_sim_result_free(&r);
  g_join = 4.0, g_tail = 1.5;
  r = simulate_gap(path, p, w, &cta, &gap, &last);
  ck_assert_double_eq_tol(gap, 4.0, 1e-9);
  ck_assert_double_eq_tol(r.makespan_us, last + 1.5, 1e-9);
  ck_assert_double_eq_tol(cta, 3.5, 1e-9); /* T(4) of the profile, unchanged */
  av_sim_result_free(&r);
  /* the pdl launch model: its measured join where the GPU has one, the streams' join where
   * the spec has none; an older GPU or a plan of several streams issues it as streams */
  g_pdl = 0.5;
  r = simulate_gap(path, p, w, &cta, &gap, &last);
  ck_assert_double_eq_tol(gap, 4.0, 1e-9);  /* streams: pdl_join_overhead_us is not used */
  av_sim_result_free(&r);
  p->launch_model = AV_LAUNCH_PDL;
  r = simulate_gap(path, p, w, &cta, &gap, &last);
  ck_assert_double_eq_tol(gap, 0.5, 1e-9);
  ck_assert_double_eq_tol(r.makespan_us, last + 1.5, 1e-9);
  av_sim_result_free(&r);
  g_pdl = 0;
  r = simulate_gap(path, p, w, &cta, &gap, &last);
  ck_assert_double_eq_tol(gap, 4.0, 1e-9);
  av_sim_result_free(&r);
  g_pdl = 0.5;
  ck_assert_int_eq(av_plan_issue_model(p, 90), AV_LAUNCH_PDL);
  p->launches[0].stream = 1;  /* one stream, whichever: still pdl */
  ck_assert_int_eq(av_plan_issue_model(p, 90), AV_LAUNCH_PDL);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &TILE, 0), 1);  /* a second stream */
  ck_assert_int_eq(av_plan_issue_model(p, 90), AV_LAUNCH_STREAMS);
  ck_assert_int_eq(av_plan_issue_model(p, 80), AV_LAUNCH_STREAMS);
  g_join = 0, g_tail = 0, g_pdl = 0;
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_profile_free(&with);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("profile_merge");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_bad_values);
  tcase_add_test(tc, test_profiler_batches);
  tcase_add_test(tc, test_engine_merge_and_empty);
  tcase_add_test(tc, test_engine_join_and_tail);
  tcase_add_test(tc, test_engine_merge_cold);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
