/* The first-wave start cost (docs/simulator.md#a-launchs-first-wave): the profile
 * file's "start" key written by the profiler and read back by the `profile` cost model, the
 * queue step of the .details.json file as the fallback, bad values rejected with file and key
 * path (data: tests/data/start/bad/<case>/{input.json, expected_error}), the co-residency
 * curves discounted by it, and the engine: a full first wave of short CTAs takes the profiled
 * amount longer than a lone CTA, a partly filled one proportionally less, grid and persistent
 * alike, while refills pay the grid's refill gap instead. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodels/costmodel.h"
#include "core/json_util.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "support.h"
#include "profiler/profile.h"

static const av_tile_t PART = {AV_KERNEL_PARTIAL, 16, 64, 4};
static const av_tile_t PERS = {AV_KERNEL_PERSISTENT, 16, 64, 4};
#define SMEM_K3 76800 /* 3 CTAs per SM on av_test_small_gpu: a full wave is 12 CTAs */
#define FULL 12

/* 4 SMs; HBM, L2 and launches out of the way, so a CTA takes its profiled time. */
static av_gpu_t test_gpu(void) {
  av_gpu_t g = av_test_small_gpu();
  g.hbm_bw_datasheet_GBps = 1e9;
  g.hbm_bw_measured_GBps = 1e9;
  g.l2_bw_GBps = 1e9;
  g.mem_latency_ns = 1;
  g.bytes_in_flight_per_sm = 1e12;
  g.fp16_tensor_tflops = 1e9;
  g.fp32_tflops = 1e9;
  g.launch_overhead_us = 2;
  return g;
}

/* C(rows, kv) of every table: 2 us + 0.01 us per token, flat in rows. */
enum { FIXED_US = 2 };
static const double PER_TOKEN_US = 0.01;
static double lone_us(int64_t kv) { return FIXED_US + PER_TOKEN_US * (double)kv; }

/* Tables of PART and PERS; with `waves`, start waves of PERS at 4 and 12 CTAs costing 0.5 and
 * 1.5 us more than alone at one query row, 1 and 3 us at 16 rows, both lengths. */
static av_profile_t make_profile(int waves) {
  av_profile_t p;
  av_test_profile_init(&p);
  const int64_t kv[] = {32, 128, 8192, 16384};
  for (int v = 0; v < 2; v++)
    av_test_profile_table(&p, v ? PERS : PART, kv, 4, FIXED_US, PER_TOKEN_US);
  if (!waves) return p;
  p.start = calloc(1, sizeof *p.start);
  ck_assert_ptr_nonnull(p.start);
  p.n_start = 1;
  av_profile_start_t *s = &p.start[0];
  s->tile = PERS;
  s->head_dim = 128;
  s->dtype = AV_DTYPE_FP16;
  s->n_k = 2, s->ctas[0] = 4, s->ctas[1] = FULL;
  s->n_rows = 2, s->rows[0] = 1, s->rows[1] = 16;
  s->kv[0] = 32, s->kv[1] = 128;
  const double extra[2][2] = {{0.5, 1.5}, {1.0, 3.0}};
  for (int k = 0; k < 2; k++)
    for (int r = 0; r < 2; r++)
      for (int j = 0; j < 2; j++) s->dur_us[k][r][j] = lone_us(s->kv[j]) + extra[r][k];
  return p;
}

static av_costmodel_t *model(const char *path, const av_gpu_t *g) {
  av_heads_t h = {.hq = 8, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  av_error_t err;
  av_error_clear(&err);
  av_costmodel_t *m = av_test_profile_model(path, g, &h, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  return m;
}

static double start_at(const av_costmodel_t *m, av_tile_t tile, int32_t ctas, int32_t rows) {
  av_cost_query_t q = {.n_q = 1, .rows = rows, .kv_tokens = 32, .tile = tile,
                       .output = AV_OUT_PARTIAL, .starting = ctas};
  av_item_cost_t c;
  av_costmodel_estimate(m, &q, &c);
  return c.start_us;
}

START_TEST(test_round_trip) {
  av_profile_t p = make_profile(1);
  av_gpu_t g = test_gpu();
  av_costmodel_t *m = model(av_test_write_profile(&p, "test_start_round_trip"), &g);
  /* the measured points, and linear in the CTAs starting together through (0, 0) */
  ck_assert_double_eq_tol(start_at(m, PERS, FULL, 1), 1.5, 1e-9);
  ck_assert_double_eq_tol(start_at(m, PERS, 4, 1), 0.5, 1e-9);
  ck_assert_double_eq_tol(start_at(m, PERS, 6, 1), 0.75, 1e-9);
  ck_assert_double_eq_tol(start_at(m, PERS, 2, 1), 0.25, 1e-9);
  ck_assert_double_eq_tol(start_at(m, PERS, 2 * FULL, 1), 3.0, 1e-9); /* last slope on */
  /* in query rows: the measured counts, log-linear between them, clamped beyond */
  ck_assert_double_eq_tol(start_at(m, PERS, FULL, 16), 3.0, 1e-9);
  ck_assert_double_eq_tol(start_at(m, PERS, FULL, 4), 2.25, 1e-9);
  ck_assert_double_eq_tol(start_at(m, PERS, FULL, 64), 3.0, 1e-9);
  /* a grid tile without its own waves takes the nearest measured variant's */
  ck_assert_double_eq_tol(start_at(m, PART, FULL, 1), 1.5, 1e-9);
  ck_assert_double_eq(start_at(m, PERS, 0, 1), 0); /* not asked */
  av_costmodel_destroy(m);

  json_t *doc = av_profile_to_json(&p);
  const json_t *st = json_object_get(doc, "start");
  ck_assert_int_eq(json_array_size(json_object_get(st, "kv_tokens")), AV_PROF_START_KV);
  const json_t *v = json_array_get(json_object_get(st, "variants"), 0);
  ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(v, "ctas"), 1)), FULL);
  const json_t *d = json_array_get(json_array_get(json_object_get(v, "duration_us"), 1), 1);
  ck_assert_double_eq_tol(json_number_value(json_array_get(d, 1)), lone_us(128) + 3.0, 1e-9);
  json_decref(doc);
  av_profile_free(&p);

  /* without the key and without a details file next to it: no start cost */
  av_profile_t old = make_profile(0);
  m = model(av_test_write_profile(&old, "test_start_none"), &g);
  ck_assert_double_eq(start_at(m, PERS, FULL, 1), 0);
  av_costmodel_destroy(m);
  av_profile_free(&old);
}
END_TEST

/* The queue step of `<profile>.details.json` (the profiles measured before the start step):
 * a full wave's first item over one queue's, less the longer streaming the engine gives it.
 * HBM is set so that the wave's fair share is a quarter of a CTA's lone bound (51.2 GB/s,
 * from C's 0.01 us per 512-byte token); the 512-token point (bandwidth-bound) is not used. */
static const char *write_details(const char *name, const char *queue_json) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/%s.details.json", AV_BINARY_DIR, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"gpu\": \"test-gpu\", \"queue\": %s}\n", queue_json);
  fclose(f);
  return path;
}

START_TEST(test_from_queue) {
  av_gpu_t g = test_gpu();
  const double cap = 512 / 0.01; /* bytes per us */
  g.hbm_bw_measured_GBps = FULL * cap / 4 * 1e-3;
  /* one query row: its 256-byte query, and O plus lse in fp32 */
  const double bytes32 = 32 * 512 + 256 + 516, bytes128 = 128 * 512 + 256 + 516;
  const double shared32 = bytes32 * 3 / cap, shared128 = bytes128 * 3 / cap;
  char q[1024];
  snprintf(q, sizeof q,
           "{\"items\": 8, \"notes\": \"test\", \"variants\": [{\"kind\": \"persistent\", "
           "\"m\": 16, \"n\": 64, \"warps\": 4, \"head_dim\": 128, \"dtype\": \"fp16\", "
           "\"n_kv\": [32, 128, 512], \"first_us\": [5, 6, 14], \"next_us\": [2, 4, 12], "
           "\"loaded_ctas\": %d, \"loaded_first_us\": [%.9f, %.9f, 99], "
           "\"loaded_next_us\": [3, 5, 20]}]}",
           FULL, 5 + shared32 + 2.0, 6 + shared128 + 3.0);
  av_profile_t p = make_profile(0);
  char path[1024];
  snprintf(path, sizeof path, "%s", av_test_write_profile(&p, "test_start_queue"));
  const char *dpath = write_details("test_start_queue", q);
  av_costmodel_t *m = model(path, &g);
  ck_assert_double_eq_tol(start_at(m, PERS, FULL, 1), 2.5, 1e-6);
  ck_assert_double_eq_tol(start_at(m, PERS, FULL / 2, 16), 1.25, 1e-6); /* one row measured */
  av_costmodel_destroy(m);

  /* a malformed queue key is refused, naming the details file and the key path */
  write_details("test_start_queue", "{\"items\": 8, \"variants\": [{\"kind\": \"persistent\", "
                "\"m\": 16, \"n\": 64, \"warps\": 4, \"head_dim\": 128, \"dtype\": \"fp16\", "
                "\"n_kv\": [32], \"first_us\": [5], \"loaded_ctas\": 12}]}");
  av_heads_t h = {.hq = 8, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  av_error_t err;
  av_error_clear(&err);
  ck_assert_ptr_null(av_test_profile_model(path, &g, &h, NULL, &err));
  ck_assert_ptr_nonnull(strstr(err.source, "test_start_queue.details.json"));
  ck_assert_str_eq(err.path, "queue.variants[0].loaded_first_us");
  unlink(dpath);
  av_profile_free(&p);
}
END_TEST

/* Every directory under tests/data/start/bad: input.json must be rejected with the key path
 * on expected_error's first line and its second line inside the message. */
START_TEST(test_bad_values) {
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  ck_assert_int_ge(av_test_bad_profiles("data/start/bad", &g, &h), 8);
}
END_TEST

/* The co-residency grids start k x SMs CTAs together, so their durations hold the start cost
 * at that count, which the slowdown formula put on streaming: with start waves the curve is
 * s'(k) = (s(k) T - D(k SMs)) / (T - D(SMs)), T = (d_3 - d_1) / (s_3 - 1). */
START_TEST(test_curve_discount) {
  av_profile_t p = make_profile(1);
  av_profile_cores_t *c = av_test_profile_cores(&p, PART, 3);
  const double s[3] = {1.0, 1.4, 1.9}, T = 70;
  for (int k = 0; k < 3; k++) {
    c->slowdown[k] = s[k];
    c->dur_us[k] = 3 + T * s[k];
    c->hbm_dur_us[k] = c->dur_us[k];
    c->hbm_GBps[k] = 1000;
  }
  av_gpu_t g = test_gpu();
  av_costmodel_t *m = model(av_test_write_profile(&p, "test_start_discount"), &g);
  /* the start cost at 4, 8, 12 CTAs: PERS's waves less the streaming the curve slows */
  double D[3];
  for (int k = 1; k <= 3; k++) D[k - 1] = start_at(m, PART, 4 * k, 1);
  ck_assert_double_eq_tol(D[0], 0.5, 1e-9); /* k = 1: no slowdown to take out */
  ck_assert_double_lt(D[2], 1.5);
  for (int k = 1; k <= 3; k++) {
    av_cost_query_t q = {.n_q = 1, .rows = 1, .kv_tokens = 2048, .tile = PART,
                         .output = AV_OUT_PARTIAL, .coresident = k};
    av_item_cost_t r;
    av_costmodel_estimate(m, &q, &r);
    double want = (s[k - 1] * T - D[k - 1]) / (T - D[0]);
    ck_assert_double_eq_tol(r.slowdown, want, 1e-3);
  }
  av_costmodel_destroy(m);
  av_profile_free(&p);
}
END_TEST

/* `ctas` one-item CTAs of `tile` (persistent: one CTA per item), 32 tokens and one query
 * each over its own root, simulated with the profile at `path`; dur[i] = CTA i's time. */
static void engine_wave(const char *path, const av_gpu_t *g, av_tile_t tile, int ctas,
                        double *dur) {
  av_variant_t var[2];
  av_test_tile_variants(var, SMEM_K3);
  av_variants_t vs = {2, var};
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_profile_cores_workload(ctas, 32, 0, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  av_plan_t *p = av_profile_cores_plan(w, &tile, &err);
  ck_assert_msg(p != NULL, "%s", err.message);
  av_costmodel_t *m = av_test_profile_model(path, g, &w->heads, &vs, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
  av_sim_result_t res;
  av_timeline_t tl;
  memset(&tl, 0, sizeof tl);
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){p, w, g, &vs, m}, &res, &tl, &err), &err);
  int n = 0;
  for (int i = 0; i < tl.n; i++)
    if (tl.ev[i].item >= 0) dur[tl.ev[i].item] = tl.ev[i].end_us - tl.ev[i].start_us, n++;
  ck_assert_int_eq(n, ctas);
  av_timeline_free(&tl);
  av_sim_result_free(&res);
  av_costmodel_destroy(m);
  av_plan_destroy(p);
  av_workload_destroy(w);
}

START_TEST(test_engine_first_wave) {
  av_profile_t with = make_profile(1), without = make_profile(0);
  char p_with[1024], p_without[1024];
  snprintf(p_with, sizeof p_with, "%s", av_test_write_profile(&with, "test_start_engine"));
  snprintf(p_without, sizeof p_without, "%s",
           av_test_write_profile(&without, "test_start_engine_none"));
  av_gpu_t g = test_gpu();
  double lone[1], dur[FULL];
  const av_tile_t tiles[2] = {PART, PERS};
  for (int t = 0; t < 2; t++) {
    /* alone a CTA takes C (its own measurement); a lone start costs 1/12 of a full wave's */
    engine_wave(p_without, &g, tiles[t], 1, lone);
    ck_assert_double_eq_tol(lone[0], lone_us(32), 1e-6);
    engine_wave(p_with, &g, tiles[t], 1, dur);
    ck_assert_double_eq_tol(dur[0], lone_us(32) + 1.5 / FULL, 1e-6);
    /* a full first wave: the profiled 1.5 us longer each */
    engine_wave(p_with, &g, tiles[t], FULL, dur);
    for (int i = 0; i < FULL; i++) ck_assert_double_eq_tol(dur[i], lone[0] + 1.5, 1e-6);
    /* half a wave: proportionally less */
    engine_wave(p_with, &g, tiles[t], FULL / 2, dur);
    for (int i = 0; i < FULL / 2; i++) ck_assert_double_eq_tol(dur[i], lone[0] + 0.75, 1e-6);
  }
  av_profile_free(&with);
  av_profile_free(&without);
}
END_TEST

/* Two waves of grid CTAs: the first starts at once and pays the start cost of 12 (not of the
 * 24 in the grid); the second refills slots one by one and pays the refill gap instead. */
START_TEST(test_engine_refills) {
  av_profile_t p = make_profile(1);
  av_gpu_t g = test_gpu();
  g.cta_dispatch_us = 0.5;
  double dur[2 * FULL];
  engine_wave(av_test_write_profile(&p, "test_start_refills"), &g, PART, 2 * FULL, dur);
  int first = 0, refill = 0;
  for (int i = 0; i < 2 * FULL; i++) {
    if (fabs(dur[i] - (lone_us(32) + 1.5)) < 1e-6) first++;
    if (fabs(dur[i] - (lone_us(32) + 0.5)) < 1e-6) refill++;
  }
  ck_assert_int_eq(first, FULL);
  ck_assert_int_eq(refill, FULL);
  av_profile_free(&p);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("start");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_from_queue);
  tcase_add_test(tc, test_bad_values);
  tcase_add_test(tc, test_curve_discount);
  tcase_add_test(tc, test_engine_first_wave);
  tcase_add_test(tc, test_engine_refills);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
