/* Co-residency (docs/simulator.md): the profile file's "coresidency" key written by the
 * profiler and read back by the `profile` cost model, bad values rejected with file and key path (data:
 * tests/data/coresidency/bad/<case>/{input.json, expected_error}), the profiler's batches and
 * slowdown formula, and the engine: k identical CTAs per SM stream curve(k) times slower
 * than one alone, and a profile without the key changes nothing. */
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
#define SMEM_K3 76800 /* 3 CTAs per SM on av_test_small_gpu */

/* 4 SMs; HBM, L2 and launches out of the way so only the CTAs' own rates bind. */
static av_gpu_t test_gpu(void) {
  av_gpu_t g = av_test_small_gpu();
  g.hbm_bw_datasheet_GBps = 1e9;
  g.hbm_bw_measured_GBps = 1e9;
  g.l2_bytes = 0;
  g.l2_bw_GBps = 1e9;
  g.mem_latency_ns = 1;
  g.bytes_in_flight_per_sm = 1e12;
  g.fp16_tensor_tflops = 1e9;
  g.fp32_tflops = 1e9;
  g.launch_overhead_us = 2;
  g.cta_fixed_us = 0;
  return g;
}

/* A profile of TILE on test-gpu: C linear in n through 0 (so the engine's fixed cost is 0 and
 * a lone CTA's time is all streaming), with `curve` (n_k points; NULL = no key). */
static av_profile_t make_profile(const double *curve, int n_k) {
  av_profile_t p;
  av_test_profile_init(&p);
  const int64_t kv[] = {8192, 16384};
  av_test_profile_table(&p, TILE, kv, 2, 0, 0.01);
  if (curve) {
    av_profile_cores_t *c = av_test_profile_cores(&p, TILE, n_k);
    for (int k = 0; k < n_k; k++) {
      c->slowdown[k] = curve[k];
      c->dur_us[k] = 70 * curve[k];
      c->hbm_dur_us[k] = 75 * curve[k];
      c->hbm_GBps[k] = 1000.0 * (k + 1);
      c->resident[k] = k + 1;
    }
  }
  return p;
}

/* The profile cost model on gpu/heads from `path`; NULL with err set when rejected. */
static double slowdown_at(const av_costmodel_t *m, av_tile_t tile, int k) {
  av_cost_query_t q = {.n_q = 1, .rows = 1, .kv_tokens = 2048, .tile = tile,
                       .output = AV_OUT_PARTIAL, .coresident = k};
  av_item_cost_t c;
  av_costmodel_estimate(m, &q, &c);
  return c.slowdown;
}

START_TEST(test_round_trip) {
  const double curve[3] = {1.0, 1.2, 1.5};
  av_profile_t p = make_profile(curve, 3);
  const char *path = av_test_write_profile(&p, "test_coresidency_round_trip");
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_costmodel_t *m = av_test_profile_model(path, &g, &h, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  for (int k = 1; k <= 3; k++) ck_assert_double_eq_tol(slowdown_at(m, TILE, k), curve[k - 1], 1e-9);
  /* beyond the measured occupancy: the last slope continues (1.5 + 0.3) */
  ck_assert_double_eq_tol(slowdown_at(m, TILE, 4), 1.8, 1e-9);
  /* another tile of the same d and dtype takes the nearest measured curve */
  av_tile_t dec = {AV_KERNEL_DECODE, 16, 64, 4};
  ck_assert_double_eq_tol(slowdown_at(m, dec, 2), 1.2, 1e-9);
  /* not asked: no figure */
  ck_assert_double_eq(slowdown_at(m, TILE, 0), 0);
  av_costmodel_destroy(m);

  /* the written document carries every recorded series */
  json_t *doc = av_profile_to_json(&p);
  const json_t *v =
      json_array_get(json_object_get(json_object_get(doc, "coresidency"), "variants"), 0);
  ck_assert_int_eq(json_array_size(json_object_get(v, "k")), 3);
  ck_assert_double_eq_tol(json_number_value(json_array_get(json_object_get(v, "hbm_GBps"), 2)),
                          3000, 1e-9);
  ck_assert_double_eq_tol(json_number_value(json_array_get(json_object_get(v, "duration_us"), 1)),
                          84, 1e-9);
  json_decref(doc);

  /* a profile without the key (the committed one) loads and gives no figure */
  av_profile_t old = make_profile(NULL, 0);
  m = av_test_profile_model(av_test_write_profile(&old, "test_coresidency_old"), &g, &h, NULL,
                            &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  ck_assert_double_eq(slowdown_at(m, TILE, 2), 0);
  av_costmodel_destroy(m);
  av_profile_free(&old);
  av_profile_free(&p);
}
END_TEST

/* Every directory under tests/data/coresidency/bad: input.json must be rejected with the key
 * path on expected_error's first line and its second line inside the message. */
START_TEST(test_bad_values) {
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  ck_assert_int_ge(av_test_bad_profiles("data/coresidency/bad", &g, &h), 8);
}
END_TEST

START_TEST(test_profiler_batches) {
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_profile_cores_workload(12, 2048, 1, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  ck_assert_int_eq(w->n_nodes, 1);
  ck_assert_int_eq(w->n_requests, 12);
  av_tile_t pt = {AV_KERNEL_PERSISTENT, 16, 64, 4};
  av_plan_t *p = av_profile_cores_plan(w, &pt, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  ck_assert_int_eq(p->n_items, 12);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 12);
  av_plan_destroy(p);
  av_workload_destroy(w);
  w = av_profile_cores_workload(8, 2048, 0, 128, AV_DTYPE_FP16, &err);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_eq(w->n_nodes, 8);
  p = av_profile_cores_plan(w, &TILE, &err);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(p->n_items, 8);
  ck_assert_int_eq(p->launches[0].persistent_ctas, 0);
  av_plan_destroy(p);
  av_workload_destroy(w);
  ck_assert_ptr_null(av_profile_cores_workload(0, 2048, 1, 128, AV_DTYPE_FP16, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);

  /* slowdown of the streaming part: (d - f) / (d1 - f) */
  const double dur[3] = {71, 81, 101};
  double s[3];
  AV_CK_OK(av_profile_cores_slowdown(dur, 3, 1.0, s, &err), &err);
  ck_assert_double_eq_tol(s[0], 1.0, 1e-12);
  ck_assert_double_eq_tol(s[1], 80.0 / 70.0, 1e-12);
  ck_assert_double_eq_tol(s[2], 100.0 / 70.0, 1e-12);
  /* a negative fit intercept is not a fixed cost */
  AV_CK_OK(av_profile_cores_slowdown(dur, 3, -5.0, s, &err), &err);
  ck_assert_double_eq_tol(s[2], 101.0 / 71.0, 1e-12);
  const double bad[2] = {70, NAN};
  av_error_clear(&err);
  ck_assert_int_eq(av_profile_cores_slowdown(bad, 2, 1.0, s, &err), AV_ERR_RANGE);
  ck_assert_ptr_nonnull(strstr(err.message, "k = 2"));
}
END_TEST

/* Finalizes p and simulates it on g with the profile at `path`, recording every CTA in *tl
 * (caller frees tl and res). */
static void sim_timeline(const char *path, const av_gpu_t *g, const av_variants_t *vs,
                         const av_workload_t *w, av_plan_t *p, av_sim_result_t *res,
                         av_timeline_t *tl) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  av_costmodel_t *m = av_test_profile_model(path, g, &w->heads, vs, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
  memset(tl, 0, sizeof *tl);
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){p, w, g, vs, m}, res, tl, &err), &err);
  av_costmodel_destroy(m);
}

/* n one-query requests, each on its own 8192-token root (d 128 fp16, one KV head): CTAs that
 * read distinct KV. Caller destroys. */
static av_workload_t *roots_workload(int n, av_error_t *err) {
  av_workload_t *w = av_workload_create(n, n);
  ck_assert_ptr_nonnull(w);
  w->heads = (av_heads_t){.hq = 1, .hkv = 1, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  w->block_size_tokens = 16;
  for (int i = 0; i < n; i++) {
    w->nodes[i].parent = -1;
    w->nodes[i].kv_len_tokens = 8192;
    w->request_node[i] = i;
  }
  AV_CK_OK(av_workload_finalize(w, err), err);
  return w;
}

/* Durations of k x SMs identical CTAs (8192 tokens each) on test-gpu, predicted by the engine
 * with the profile at `path`; every CTA's duration in dur[] (k x 4 of them). */
static void engine_grid(const char *path, int k, double *dur) {
  av_gpu_t g = test_gpu();
  av_variant_t var[2];
  av_test_tile_variants(var, SMEM_K3);
  av_variants_t vs = {1, var}; /* the partial variant only: the profile covers it alone */
  av_error_t err;
  av_error_clear(&err);
  int n = k * g.sm_count;
  av_workload_t *w = roots_workload(n, &err);
  av_plan_t *p = av_plan_create(w, "test");
  int32_t l = av_plan_add_launch(p, 0, &TILE, 0);
  for (int32_t r = 0; r < n; r++) {
    av_segment_t sg = {r, 0, 8192};
    ck_assert_int_ge(av_plan_add_item(p, l, (av_item_work_t){&r, 1, &sg, 1}, AV_OUT_FINAL, -1, -1),
                     0);
  }
  av_sim_result_t res;
  av_timeline_t tl;
  sim_timeline(path, &g, &vs, w, p, &res, &tl);
  ck_assert_int_eq(tl.n, n);
  for (int i = 0; i < n; i++) dur[i] = tl.ev[i].end_us - tl.ev[i].start_us;
  av_timeline_free(&tl);
  av_sim_result_free(&res);
  av_plan_destroy(p);
  av_workload_destroy(w);
}

START_TEST(test_engine_follows_curve) {
  const double curve[3] = {1.0, 1.25, 1.6};
  av_profile_t with = make_profile(curve, 3), without = make_profile(NULL, 0);
  char p_with[1024], p_without[1024];
  snprintf(p_with, sizeof p_with, "%s", av_test_write_profile(&with, "test_coresidency_engine"));
  snprintf(p_without, sizeof p_without, "%s",
           av_test_write_profile(&without, "test_coresidency_engine_old"));
  double lone[4], dur[12];
  engine_grid(p_with, 1, lone);
  /* alone, a CTA takes C(n_q, n) of the profile: 0.01 us per token (plus its Q/O bytes) */
  ck_assert_double_gt(lone[0], 81.92);
  ck_assert_double_lt(lone[0], 82.3);
  for (int k = 2; k <= 3; k++) {
    engine_grid(p_with, k, dur);
    for (int i = 0; i < 4 * k; i++)
      ck_assert_msg(fabs(dur[i] - curve[k - 1] * lone[0]) < 1e-6 * lone[0],
                    "k=%d CTA %d: %.6f us, expected %.4f x %.6f", k, i, dur[i], curve[k - 1],
                    lone[0]);
    /* without the key: co-resident CTAs keep their lone rate (the model before) */
    engine_grid(p_without, k, dur);
    for (int i = 0; i < 4 * k; i++) ck_assert_double_eq_tol(dur[i], lone[0], 1e-6 * lone[0]);
  }
  av_profile_free(&with);
  av_profile_free(&without);
}
END_TEST

/* L2 hits take a CTA's time but not HBM's: after launch 0 has read root 0 into L2, launch 1
 * runs B (root 0 again: all hits) next to C (root 1: all misses) on an HBM that cannot feed
 * two CTAs at their rate bound. C gets the bandwidth B does not need, so both run at their
 * lone rate; charging hits to HBM would hold both to half of it. */
START_TEST(test_engine_hits_spare_hbm) {
  av_profile_t prof = make_profile(NULL, 0);
  char path[1024];
  snprintf(path, sizeof path, "%s", av_test_write_profile(&prof, "test_coresidency_hits"));
  av_gpu_t g = test_gpu();
  g.l2_bytes = 64 << 20;
  const double cap_GBps = 2.0 * 128 * 2 / 0.01 / 1e3; /* a token's K and V per 0.01 us */
  g.hbm_bw_measured_GBps = 1.5 * cap_GBps;
  av_variant_t var[2];
  av_test_tile_variants(var, SMEM_K3);
  av_variants_t vs = {1, var};
  av_error_t err;
  av_error_clear(&err);
  const int64_t len[2] = {8192, 8192};
  av_workload_t *w = av_workload_create(2, 3);
  ck_assert_ptr_nonnull(w);
  w->heads = (av_heads_t){.hq = 1, .hkv = 1, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  w->block_size_tokens = 16;
  for (int i = 0; i < 2; i++) {
    w->nodes[i].parent = -1;
    w->nodes[i].kv_len_tokens = len[i];
  }
  w->request_node[0] = 0, w->request_node[1] = 0, w->request_node[2] = 1;
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  av_plan_t *p = av_plan_create(w, "test");
  int32_t l0 = av_plan_add_launch(p, 0, &TILE, 0), l1 = av_plan_add_launch(p, 0, &TILE, 0);
  for (int32_t r = 0; r < 3; r++) {
    av_segment_t sg = {w->request_node[r], 0, 8192};
    ck_assert_int_ge(av_plan_add_item(p, r == 0 ? l0 : l1, (av_item_work_t){&r, 1, &sg, 1},
                                      AV_OUT_FINAL, -1, -1),
                     0);
  }
  av_sim_result_t res;
  av_timeline_t tl;
  sim_timeline(path, &g, &vs, w, p, &res, &tl);
  ck_assert_int_eq(tl.n, 3);
  double dur[3];
  for (int i = 0; i < 3; i++) dur[tl.ev[i].item] = tl.ev[i].end_us - tl.ev[i].start_us;
  ck_assert_double_gt(res.l2_bytes, 0.99 * 8192 * 512);
  for (int i = 1; i < 3; i++)
    ck_assert_msg(fabs(dur[i] - dur[0]) < 1e-3 * dur[0],
                  "item %d: %.4f us, the lone rate gives %.4f us", i, dur[i], dur[0]);
  av_timeline_free(&tl);
  av_sim_result_free(&res);
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_profile_free(&prof);
}
END_TEST

/* A queued item of a persistent CTA overlaps its fixed cost with its bytes. Alone
 * it still takes C(n_q, n) = F + bytes at the lone rate (the queue step measured queued items
 * alone at C); when HBM binds, it takes only its bytes at the fair share, while the queue's
 * first item pays F before streaming (loaded_next_us vs loaded_first_us). `ctas` persistent
 * CTAs (one per SM) each run two items of 8192 tokens; returns the two items' durations. */
static void queue_pair(double hbm_GBps, int ctas, double *first, double *second) {
  av_gpu_t g = test_gpu();
  g.hbm_bw_measured_GBps = hbm_GBps;
  av_variant_t var[2];
  av_test_tile_variants(var, SMEM_K3);
  av_variants_t vs = {1, &var[1]}; /* the persistent variant only: the profile covers it */
  av_profile_t prof = make_profile(NULL, 0);
  av_profile_table_t *t = &prof.t[0];
  t->tile = var[1].tile;  /* the persistent tile; C = 20 us + 0.01 us per token */
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) t->time_us[i][j] = 20 + 0.01 * (double)t->kv[j];
  char path[1024];
  snprintf(path, sizeof path, "%s", av_test_write_profile(&prof, "test_coresidency_queue"));
  av_error_t err;
  av_error_clear(&err);
  int n = 2 * ctas;
  av_workload_t *w = roots_workload(n, &err);
  av_plan_t *p = av_plan_create(w, "test");
  int32_t l = av_plan_add_launch(p, 0, &var[1].tile, ctas);
  for (int32_t r = 0; r < n; r++) {
    av_segment_t sg = {r, 0, 8192};
    ck_assert_int_ge(
        av_plan_add_item(p, l, (av_item_work_t){&r, 1, &sg, 1}, AV_OUT_PARTIAL, r / 2, r % 2), 0);
  }
  av_sim_result_t res;
  av_timeline_t tl;
  sim_timeline(path, &g, &vs, w, p, &res, &tl);
  *first = *second = 0;
  for (int i = 0; i < tl.n; i++) {
    if (tl.ev[i].item < 0) continue;  /* the merge CTAs */
    double d = (tl.ev[i].end_us - tl.ev[i].start_us) / ctas;
    if (tl.ev[i].item % 2) *second += d;
    else *first += d;
  }
  av_timeline_free(&tl);
  av_sim_result_free(&res);
  av_plan_destroy(p);
  av_workload_destroy(w);
  av_profile_free(&prof);
}

START_TEST(test_engine_queue_overlap) {
  double first, second;
  /* alone (HBM out of the way): both items take C = 20 + 81.92 us (+ their Q/O bytes) */
  queue_pair(1e9, 1, &first, &second);
  ck_assert_double_gt(first, 101.9);
  ck_assert_double_lt(first, 102.3);
  ck_assert_double_eq_tol(second, first, 1e-6 * first);
  /* 4 CTAs sharing 51.2 GB/s, a quarter of the lone rate each: the first item takes
   * F + 4 x 81.92 us, the queued one only its bytes at the share, 4 x 81.92 us */
  queue_pair(51.2, 4, &first, &second);
  ck_assert_double_gt(first, 20 + 4 * 81.92 - 0.1);
  ck_assert_double_lt(first, 20 + 4 * 81.92 + 1.5);
  ck_assert_double_gt(second, 4 * 81.92 - 0.1);
  ck_assert_double_lt(second, 4 * 81.92 + 1.5);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("coresidency");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_bad_values);
  tcase_add_test(tc, test_profiler_batches);
  tcase_add_test(tc, test_engine_follows_curve);
  tcase_add_test(tc, test_engine_hits_spare_hbm);
  tcase_add_test(tc, test_engine_queue_overlap);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
