/* Cost models: hand-computed roofline / linear / compute / memory figures, the registry, and
 * the profile model's table (exact at grid points, monotone between, bad files rejected). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/costmodel.h"
#include "tests/support.h"

/* A round-number GPU so the figures below can be checked by hand: 100 SMs, 1000 GB/s,
 * 100 TFLOP/s, 2 us per CTA. */
static av_gpu_t test_gpu(void) {
  av_gpu_t g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "round");
  g.sm_arch = 90;
  g.sm_count = 100;
  g.hbm_bw_datasheet_GBps = 1200;
  g.hbm_bw_measured_GBps = 1000;
  g.fp16_tensor_tflops = 100;
  g.cta_fixed_us = 2;
  return g;
}

static av_costmodel_t *make(const char *name, const av_gpu_t *g, const av_heads_t *h,
                            int concurrent, const char *const *assign, av_error_t *err) {
  const av_costmodel_ops_t *ops;
  AV_CK_OK(av_costmodel_lookup(name, "test", NULL, &ops, err), err);
  av_params_t p;
  AV_CK_OK(av_params_init(&p, ops->params, err), err);
  for (int i = 0; assign && assign[i]; i++) AV_CK_OK(av_params_set_text(&p, assign[i], "test", err), err);
  av_cost_env_t env = {.gpu = g, .heads = h, .variants = NULL, .concurrent_ctas = concurrent};
  return av_costmodel_create(ops, &p, &env, err);
}

static av_cost_query_t query(int32_t n_q, int64_t kv, av_output_t o) {
  av_cost_query_t q = {.n_q = n_q, .rows = n_q * 4, .kv_tokens = kv, .output = o,
                       .tile = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64,
                                .warps = 4}};
  return q;
}

START_TEST(test_bytes_and_flops) {
  av_heads_t h = av_test_heads();
  /* K+V 2·1024·128·2 = 524288, Q 4·128·2 = 1024, O 1024 */
  ck_assert_double_eq(av_cost_item_bytes(&h, 4, 1024, AV_OUT_FINAL), 526336.0);
  /* partial O + lse in fp32: 4·129·4 = 2064 */
  ck_assert_double_eq(av_cost_item_bytes(&h, 4, 1024, AV_OUT_PARTIAL), 524288.0 + 1024 + 2064);
  ck_assert_double_eq(av_cost_item_flops(&h, 4, 1024), 4.0 * 4 * 1024 * 128);
}
END_TEST

START_TEST(test_roofline_hand_computed) {
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  av_costmodel_t *m = make("roofline", &g, &h, 0, NULL, &err);
  ck_assert_ptr_nonnull(m);
  av_item_cost_t c;
  av_cost_query_t q = query(1, 1024, AV_OUT_FINAL);
  av_costmodel_estimate(m, &q, &c);
  /* memory: 526336 B / (1000 GB/s / 100 CTAs = 1e4 B/us) = 52.6336 us; compute: padded
   * 16 x 1024 x 128 x 4 = 8388608 FLOP / (1e6 FLOP/us per SM) = 8.39 us; + 2 us fixed */
  ck_assert_double_eq_tol(c.time_us, 2.0 + 52.6336, 1e-9);
  ck_assert_double_eq(c.flops, 8388608.0);
  ck_assert_double_eq(c.hbm_bytes, 526336.0);
  av_costmodel_destroy(m);

  /* half the CTAs share bandwidth: twice the share */
  m = make("roofline", &g, &h, 50, NULL, &err);
  av_costmodel_estimate(m, &q, &c);
  ck_assert_double_eq_tol(c.time_us, 2.0 + 26.3168, 1e-9);
  av_costmodel_destroy(m);

  /* compute-bound: 64 queries (256 rows) over 64 tokens with tile m=256 would pad nothing;
   * with a slow tensor rate compute dominates: 256·64·128·4 = 8388608 FLOP at 1e4 FLOP/us */
  const char *slow[] = {"tensor_scale=0.01", "fixed_us=0", NULL};
  m = make("roofline", &g, &h, 0, slow, &err);
  ck_assert_ptr_nonnull(m);
  q = query(64, 64, AV_OUT_FINAL);
  q.tile.m_rows = 256;
  av_costmodel_estimate(m, &q, &c);
  ck_assert_double_eq_tol(c.time_us, 8388608.0 / 1e4, 1e-9);
  av_costmodel_destroy(m);
}
END_TEST

START_TEST(test_linear) {
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  const char *set[] = {"alpha=0.5", "beta=0.01", "fixed_us=3", NULL};
  av_costmodel_t *m = make("linear", &g, &h, 0, set, &err);
  ck_assert_ptr_nonnull(m);
  av_item_cost_t c;
  av_cost_query_t q = query(2, 1000, AV_OUT_PARTIAL);
  av_costmodel_estimate(m, &q, &c);
  ck_assert_double_eq_tol(c.time_us, 3 + 0.5 * 8 + 0.01 * 1000, 1e-12);
  av_costmodel_destroy(m);

  /* defaults: 512 bytes per token and per row over 1e4 B/us, fixed from the GPU */
  m = make("linear", &g, &h, 0, NULL, &err);
  av_costmodel_estimate(m, &q, &c);
  ck_assert_double_eq_tol(c.time_us, 2 + 0.0512 * 8 + 0.0512 * 1000, 1e-9);
  av_costmodel_destroy(m);
}
END_TEST

START_TEST(test_compute_and_memory) {
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t g = test_gpu();
  av_heads_t h = av_test_heads();
  av_costmodel_t *m = make("compute", &g, &h, 0, NULL, &err);
  ck_assert_ptr_nonnull(m);
  av_item_cost_t c1, c2;
  /* 4 rows pad to 16, 100 tokens pad to 128: 16·128·128·4 FLOP over 1e6 FLOP/us */
  av_cost_query_t q = query(1, 100, AV_OUT_FINAL);
  av_costmodel_estimate(m, &q, &c1);
  ck_assert_double_eq_tol(c1.time_us, 2 + 16.0 * 128 * 128 * 4 / 1e6, 1e-12);
  /* more rows inside the same tile cost nothing more: the point of a padded model */
  q = query(4, 100, AV_OUT_FINAL);
  av_costmodel_estimate(m, &q, &c2);
  ck_assert_double_eq(c1.time_us, c2.time_us);
  av_costmodel_destroy(m);

  m = make("memory", &g, &h, 0, NULL, &err);
  ck_assert_ptr_nonnull(m);
  q = query(1, 1024, AV_OUT_FINAL);
  av_costmodel_estimate(m, &q, &c1);
  ck_assert_double_eq_tol(c1.time_us, 2 + 526336.0 / 1e4, 1e-9);
  /* partial: write 4·129·4 and the merge's read of it */
  q.output = AV_OUT_PARTIAL;
  av_costmodel_estimate(m, &q, &c2);
  ck_assert_double_eq_tol(c2.time_us, 2 + (524288.0 + 1024 + 2 * 2064) / 1e4, 1e-9);
  ck_assert_double_eq(c2.hbm_bytes, 524288.0 + 1024 + 2064);
  av_costmodel_destroy(m);
}
END_TEST

START_TEST(test_registry) {
  int n;
  const av_costmodel_ops_t *const *all = av_costmodel_all(&n);
  ck_assert_int_ge(n, 4);
  for (int i = 0; i < n; i++) {
    ck_assert_ptr_nonnull(all[i]->description);
    ck_assert_ptr_eq(av_costmodel_find(all[i]->name), all[i]);
    for (int j = 0; j < i; j++) ck_assert_str_ne(all[i]->name, all[j]->name);
    av_params_t p;
    av_error_t err;
    av_error_clear(&err);
    AV_CK_OK(av_params_init(&p, all[i]->params, &err), &err);
    /* only the measured model declares per-CTA measurements; the analytic ones none */
    const unsigned measured = AV_COST_MEASURED_CTAS | AV_COST_CORESIDENCY | AV_COST_START |
                              AV_COST_MERGE;
    ck_assert_uint_eq(all[i]->flags, strcmp(all[i]->name, "profile") == 0 ? measured : 0);
  }
  av_error_t err;
  av_error_clear(&err);
  const av_costmodel_ops_t *ops;
  ck_assert_int_eq(av_costmodel_lookup("rooflin", "exp.json", "cost.model", &ops, &err),
                   AV_ERR_NAME);
  ck_assert_ptr_null(ops);
  ck_assert_str_eq(err.source, "exp.json");
  ck_assert_str_eq(err.path, "cost.model");
  ck_assert_ptr_nonnull(strstr(err.message, "unknown cost model 'rooflin'"));
  ck_assert_ptr_nonnull(strstr(err.message, "roofline, "));
}
END_TEST

/* A profile model on the round GPU from tests/data/profiles/<file>; NULL with err set when
 * the file is rejected. */
static av_costmodel_t *make_profile(const char *file, const av_variants_t *vs, av_error_t *err) {
  static av_gpu_t g;
  static av_heads_t h;
  g = test_gpu();
  h = av_test_heads();
  const av_costmodel_ops_t *ops = av_costmodel_find("profile");
  ck_assert_ptr_nonnull(ops);
  av_params_t p;
  AV_CK_OK(av_params_init(&p, ops->params, err), err);
  char set[600];
  snprintf(set, sizeof set, "path=%s/data/profiles/%s", AV_TEST_DIR, file);
  AV_CK_OK(av_params_set_text(&p, set, "test", err), err);
  av_cost_env_t env = {.gpu = &g, .heads = &h, .variants = vs};
  return av_costmodel_create(ops, &p, &env, err);
}

static double profile_time(const av_costmodel_t *m, int32_t rows, int64_t kv) {
  av_cost_query_t q = {.n_q = rows / 4, .rows = rows, .kv_tokens = kv, .output = AV_OUT_PARTIAL,
                       .tile = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64,
                                .warps = 4}};
  av_item_cost_t c;
  av_costmodel_estimate(m, &q, &c);
  return c.time_us;
}

START_TEST(test_profile_exact_at_grid_points) {
  av_error_t err;
  av_error_clear(&err);
  av_costmodel_t *m = make_profile("good.json", NULL, &err);
  AV_CK_OK(m ? AV_OK : err.code, &err);
  static const int32_t nq[] = {4, 16, 64};
  static const int64_t n[] = {64, 256, 1024, 4096};
  static const double t[3][4] = {{3.0, 4.0, 8.0, 24.0}, {3.5, 5.0, 10.0, 30.0},
                                 {5.0, 9.0, 20.0, 70.0}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) ck_assert_double_eq_tol(profile_time(m, nq[i], n[j]), t[i][j], 1e-12);
  av_costmodel_destroy(m);
}
END_TEST

START_TEST(test_profile_monotone_and_outside) {
  av_error_t err;
  av_error_clear(&err);
  av_costmodel_t *m = make_profile("good.json", NULL, &err);
  AV_CK_OK(m ? AV_OK : err.code, &err);
  /* monotone in n and in n_q between grid points, strictly inside cells */
  for (int32_t rows = 4; rows <= 64; rows += 4) {
    double prev = 0;
    for (int64_t kv = 64; kv <= 4096; kv += 37) {
      double x = profile_time(m, rows, kv);
      ck_assert(x >= prev);
      prev = x;
      if (rows > 4) ck_assert(x >= profile_time(m, rows - 4, kv));
    }
  }
  /* between: (16 rows, 512 tokens) sits at the log-midpoint of 256 and 1024: (5 + 10) / 2 */
  ck_assert_double_eq_tol(profile_time(m, 16, 512), 7.5, 1e-9);
  /* outside: n_q clamped, n below the grid clamped, above it linear from the last columns */
  ck_assert_double_eq_tol(profile_time(m, 1000, 1024), 20.0, 1e-12);
  ck_assert_double_eq_tol(profile_time(m, 1, 1024), 8.0, 1e-12);
  ck_assert_double_eq_tol(profile_time(m, 16, 1), 3.5, 1e-12);
  ck_assert_double_eq_tol(profile_time(m, 16, 8192), 30.0 + 4096 * (30.0 - 10.0) / 3072, 1e-9);
  av_costmodel_destroy(m);
}
END_TEST

START_TEST(test_profile_bad_files) {
  static const struct {
    const char *file, *path, *message;
  } cases[] = {
      {"bad_grid.json", "variants[0].n_kv[2]", "grid must be strictly increasing: 256 follows 1024"},
      {"ragged_times.json", "variants[0].time_us[1]", "expected 4 times (one per n_kv), got 3"},
      {"other_gpu.json", "gpu", "profile was measured on 'H200-SXM'"},
      {"unknown_key.json", "variants[1]", "colour"},
      {"no_such_file.json", "", ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    av_error_t err;
    av_error_clear(&err);
    av_costmodel_t *m = make_profile(cases[i].file, NULL, &err);
    ck_assert_msg(m == NULL, "%s accepted", cases[i].file);
    ck_assert_int_ne(err.code, AV_OK);
    ck_assert_msg(strstr(err.source, cases[i].file), "%s: source '%s'", cases[i].file, err.source);
    ck_assert_msg(strstr(err.path, cases[i].path), "%s: path '%s'", cases[i].file, err.path);
    ck_assert_msg(strstr(err.message, cases[i].message), "%s: message '%s'", cases[i].file,
                  err.message);
  }
  /* a compiled variant the profile lacks */
  av_variant_t v[2] = {
      {.tile = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64, .warps = 4},
       .head_dim = 128, .dtype = AV_DTYPE_FP16, .sm_arch = 90},
      {.tile = {.kind = AV_KERNEL_PARTIAL, .m_rows = 64, .n_tokens = 32, .warps = 4},
       .head_dim = 128, .dtype = AV_DTYPE_FP16, .sm_arch = 90}};
  av_variants_t vs = {.n = 2, .v = v};
  av_error_t err;
  av_error_clear(&err);
  ck_assert_ptr_null(make_profile("good.json", &vs, &err));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "missing variant partial m=64 n=32 warps=4"));
  /* with only profiled variants compiled it loads */
  vs.n = 1;
  av_error_clear(&err);
  av_costmodel_t *m = make_profile("good.json", &vs, &err);
  AV_CK_OK(m ? AV_OK : err.code, &err);
  av_costmodel_destroy(m);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("costmodels");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_bytes_and_flops);
  tcase_add_test(tc, test_roofline_hand_computed);
  tcase_add_test(tc, test_linear);
  tcase_add_test(tc, test_compute_and_memory);
  tcase_add_test(tc, test_registry);
  tcase_add_test(tc, test_profile_exact_at_grid_points);
  tcase_add_test(tc, test_profile_monotone_and_outside);
  tcase_add_test(tc, test_profile_bad_files);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
