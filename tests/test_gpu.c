/* GPU specs, kernel variant tables and the "waves" simulator model: every shipped spec
 * loads; bad specs and bad variant tables (data-driven cases under tests/data/gpus/) give
 * path-carrying errors; the waves model reproduces its closed forms with a fake cost model. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/costmodel.h"
#include "core/gpu.h"
#include "core/occupancy.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "core/variants.h"
#include "tests/support.h"

#define DATA AV_TEST_DIR "/data/gpus"

/* ---- specs ------------------------------------------------------------------------ */

START_TEST(test_every_spec_loads) {
  char **names;
  int n;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_list(NULL, &names, &n, &err), &err);
  static const char *const want[] = {"A100-40GB-PCIe", "A100-80GB-SXM", "H100-SXM", "H200-SXM",
                                     "RTX-4090"};
  ck_assert_int_eq(n, 5);
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(names[i], want[i]);
    av_gpu_t g;
    AV_CK_OK(av_gpu_load(names[i], NULL, &g, &err), &err);
    ck_assert_str_eq(g.name, names[i]);
    ck_assert(g.description[0] != '\0');
    ck_assert(av_gpu_hbm_bw_GBps(&g) > 0);
    free(names[i]);
  }
  free(names);
}
END_TEST

START_TEST(test_h200_facts) {
  av_gpu_t g;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &g, &err), &err);
  /* The measured facts of DESIGN §Data model. */
  ck_assert_int_eq(g.sm_arch, 90);
  ck_assert_int_eq(g.sm_count, 132);
  ck_assert(g.l2_bytes == 60.0 * 1024 * 1024);
  ck_assert_int_eq(g.smem_per_sm_bytes, 228 * 1024);
  ck_assert_int_eq(g.smem_per_cta_max_bytes, 227 * 1024);
  ck_assert_int_eq(g.regs_per_sm, 65536);
  ck_assert_int_eq(g.max_threads_per_sm, 2048);
  ck_assert_double_eq_tol(av_gpu_hbm_bw_GBps(&g), 4200.0, 1e-9);
  /* Unmeasured specs fall back to 0.9 x datasheet. */
  AV_CK_OK(av_gpu_load("H100-SXM", NULL, &g, &err), &err);
  ck_assert_double_eq_tol(av_gpu_hbm_bw_GBps(&g), 0.9 * 3350.0, 1e-9);
}
END_TEST

START_TEST(test_unknown_gpu_lists_valid) {
  av_gpu_t g;
  av_error_t err;
  av_error_clear(&err);
  ck_assert_int_eq(av_gpu_load("H300", NULL, &g, &err), AV_ERR_NAME);
  ck_assert_str_eq(err.message, "unknown GPU 'H300'; expected one of: A100-40GB-PCIe, "
                                "A100-80GB-SXM, H100-SXM, H200-SXM, RTX-4090");
  /* A name with a '/' is a spec file path: loaded from there, or an I/O error naming it. */
  av_error_clear(&err);
  ck_assert_int_eq(av_gpu_load("../gpus/H200-SXM", NULL, &g, &err), AV_ERR_IO);
  ck_assert_ptr_nonnull(strstr(err.message, "'../gpus/H200-SXM'"));
  av_error_clear(&err);
  ck_assert_int_eq(av_gpu_load("H200-SXM.json", NULL, &g, &err), AV_ERR_IO);
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("gpus/A100-80GB-SXM.json", NULL, &g, &err), &err);
  ck_assert_str_eq(g.name, "A100-80GB-SXM");
  ck_assert_str_eq(g.path, "gpus/A100-80GB-SXM.json");
  av_error_clear(&err);
  ck_assert_int_eq(av_gpu_load("H200-SXM", "/nonexistent-anvil-dir", &g, &err), AV_ERR_IO);
}
END_TEST

START_TEST(test_data_dir_env) {
  const char *old = getenv("ANVIL_DATA_DIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("ANVIL_DATA_DIR", "/tmp/anvil-elsewhere", 1);
  ck_assert_str_eq(av_data_dir(), "/tmp/anvil-elsewhere");
  unsetenv("ANVIL_DATA_DIR");
  ck_assert_str_eq(av_data_dir(), AV_DATA_DIR);
  if (saved) setenv("ANVIL_DATA_DIR", saved, 1);
  free(saved);
}
END_TEST

/* Runs every case directory under `dir` (input.json + expected_error) through `load`, which
 * must fail with a formatted error containing the expected text. */
typedef int (*load_fn)(const char *path, av_error_t *err);

static void run_bad_cases(const char *dir, load_fn load) {
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  struct dirent *e;
  int cases = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char input[1024], expected_path[1024];
    snprintf(input, sizeof input, "%s/%s/input.json", dir, e->d_name);
    snprintf(expected_path, sizeof expected_path, "%s/%s/expected_error", dir, e->d_name);
    char *expected = av_test_read_file(expected_path);
    ck_assert_msg(expected != NULL, "missing %s", expected_path);
    size_t len = strlen(expected);
    while (len && (expected[len - 1] == '\n' || expected[len - 1] == '\r')) expected[--len] = 0;
    av_error_t err;
    av_error_clear(&err);
    int rc = load(input, &err);
    char msg[1600];
    av_error_format(&err, msg, sizeof msg);
    ck_assert_msg(rc != AV_OK, "case %s: loaded without error", e->d_name);
    ck_assert_msg(av_error_exit_class(rc) == 1, "case %s: not a user error: %s", e->d_name, msg);
    ck_assert_msg(strstr(msg, expected) != NULL, "case %s:\n  got:      %s\n  expected: %s",
                  e->d_name, msg, expected);
    free(expected);
    cases++;
  }
  closedir(d);
  ck_assert_int_ge(cases, 5);
}

static int load_gpu(const char *path, av_error_t *err) {
  av_gpu_t g;
  return av_gpu_load_file(path, &g, err);
}

static int load_variants(const char *path, av_error_t *err) {
  av_variants_t *vs = av_variants_load(path, err);
  av_variants_destroy(vs);
  return vs ? AV_OK : err->code;
}

START_TEST(test_bad_specs) { run_bad_cases(DATA "/bad", load_gpu); }
END_TEST

START_TEST(test_bad_variants) { run_bad_cases(DATA "/variants_bad", load_variants); }
END_TEST

/* ---- variants --------------------------------------------------------------------- */

START_TEST(test_variants_find_and_tiles) {
  av_error_t err;
  av_error_clear(&err);
  av_variants_t *vs = av_variants_load(DATA "/variants_fixture.json", &err);
  AV_CK_OK(vs ? AV_OK : err.code, &err);
  ck_assert_int_eq(vs->n, 7);
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64, .warps = 4};
  const av_variant_t *v = av_variants_find(vs, &t, 128, AV_DTYPE_FP16, 90);
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(v->regs_per_thread, 96);
  ck_assert_int_eq(v->smem_bytes, 100000);
  ck_assert_int_eq(v->threads, 128);
  ck_assert_ptr_null(av_variants_find(vs, &t, 128, AV_DTYPE_BF16, 90));
  ck_assert_ptr_null(av_variants_find(vs, &t, 128, AV_DTYPE_FP16, 89));
  ck_assert_ptr_nonnull(av_variants_find(vs, &t, 64, AV_DTYPE_FP16, 90));
  av_tile_t tiles[8];
  int n = av_variants_tiles(vs, AV_KERNEL_PARTIAL, 128, AV_DTYPE_FP16, 90, tiles, 8);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(tiles[0].m_rows, 16); /* sorted by (m, n, warps) */
  ck_assert_int_eq(tiles[1].m_rows, 64);
  ck_assert_int_eq(av_variants_tiles(vs, AV_KERNEL_MERGE, 128, AV_DTYPE_FP16, 90, tiles, 8), 1);
  ck_assert_int_eq(av_variants_tiles(vs, AV_KERNEL_PARTIAL, 128, AV_DTYPE_FP16, 80, tiles, 0),
                   1);
  av_variants_destroy(vs);
  av_variants_destroy(NULL);
  av_error_clear(&err);
  ck_assert_ptr_null(av_variants_load(DATA "/no-such-file.json", &err));
  ck_assert_int_eq(err.code, AV_ERR_IO);
}
END_TEST

/* ---- waves model ------------------------------------------------------------------ */

/* Fake cost model: an item takes kv_tokens / 100 us, so tests set times through lengths. */
static void fake_estimate(const void *state, const av_cost_env_t *env, const av_cost_query_t *q,
                          av_item_cost_t *out) {
  (void)state;
  out->time_us = (double)q->kv_tokens / 100.0;
  out->hbm_bytes = av_cost_item_bytes(env->heads, q->rows, q->kv_tokens, q->output);
  out->flops = av_cost_item_flops(env->heads, q->rows, q->kv_tokens);
}
static const av_costmodel_ops_t fake_ops = {
    .name = "fake", .description = "test: time = kv_tokens / 100 us", .estimate = fake_estimate};

typedef struct fixture {
  av_gpu_t gpu;
  av_variants_t *vs;
  av_workload_t *w;
  av_costmodel_t *cost;
  av_plan_t *p;
} fixture_t;

/* n requests, request r on its own root of lens[r] tokens; an H200 cut down to `sms` SMs
 * with no launch overhead and practically unlimited bandwidth (so the closed forms of the
 * wave count are exact; tests of the bandwidth bound set it back). */
static void fixture_init(fixture_t *f, int n, const int64_t *lens, int hkv, int sms) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &f->gpu, &err), &err);
  f->gpu.sm_count = sms;
  f->gpu.launch_overhead_us = 0;
  f->gpu.hbm_bw_measured_GBps = 1e12;
  f->vs = av_variants_load(DATA "/variants_fixture.json", &err);
  AV_CK_OK(f->vs ? AV_OK : err.code, &err);
  f->w = av_workload_create(n, n);
  ck_assert_ptr_nonnull(f->w);
  f->w->heads = (av_heads_t){.hq = 8 * hkv, .hkv = hkv, .head_dim = 128,
                             .dtype = AV_DTYPE_FP16};
  for (int i = 0; i < n; i++) {
    f->w->nodes[i].kv_len_tokens = lens[i];
    f->w->request_node[i] = i;
  }
  AV_CK_OK(av_workload_finalize(f->w, &err), &err);
  av_cost_env_t env = {.gpu = &f->gpu, .heads = &f->w->heads, .variants = f->vs};
  f->cost = av_costmodel_create(&fake_ops, NULL, &env, &err);
  AV_CK_OK(f->cost ? AV_OK : err.code, &err);
  f->p = av_plan_create(f->w, "test");
  ck_assert_ptr_nonnull(f->p);
}

static void fixture_free(fixture_t *f) {
  av_plan_destroy(f->p);
  av_costmodel_destroy(f->cost);
  av_workload_destroy(f->w);
  av_variants_destroy(f->vs);
}

/* Item over request r's whole path. */
static void add_item(fixture_t *f, int32_t launch, int32_t r, av_output_t out, int32_t cta,
                     int32_t order) {
  av_segment_t s = {.node = r, .begin = 0, .end = f->w->nodes[r].kv_len_tokens};
  ck_assert_int_ge(av_plan_add_item(f->p, launch, (av_item_work_t){&r, 1, &s, 1}, out, cta, order),
                   0);
}

static const av_tile_t tile_k2 = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64,
                                  .warps = 4};

static void simulate(fixture_t *f, int timeline, av_sim_result_t *r, av_timeline_t *tl) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(f->p, &err), &err);
  av_sim_config_t cfg = {.model = AV_SIM_WAVES, .record_timeline = timeline};
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){f->p, f->w, &f->gpu, f->vs, f->cost}, r, tl, &err),
           &err);
}

/* N equal CTAs, occupancy k, S SMs: ceil(N/(kS)) waves of one CTA time. The fixture's
 * 16x64x4w variant uses 100000 B of shared memory: (100000 + 1024 reserved) rounded to 128
 * = 101120 B, and 233472 / 101120 = 2 CTAs per SM. */
START_TEST(test_waves_closed_form) {
  static const int Ns[] = {1, 7, 8, 9, 16, 17, 100};
  for (int hkv = 1; hkv <= 2; hkv++)
    for (size_t c = 0; c < sizeof Ns / sizeof Ns[0]; c++) {
      int N = Ns[c], S = 4, k = 2;
      int64_t lens[100];
      for (int i = 0; i < N; i++) lens[i] = 300; /* 3 us each */
      fixture_t f;
      fixture_init(&f, N, lens, hkv, S);
      int32_t l = av_plan_add_launch(f.p, 0, &tile_k2, 0);
      for (int i = 0; i < N; i++) add_item(&f, l, i, AV_OUT_FINAL, -1, -1);
      av_sim_result_t r;
      simulate(&f, 0, &r, NULL);
      int ctas = N * hkv, waves = (ctas + k * S - 1) / (k * S);
      ck_assert_int_eq(r.n_launches, 1);
      ck_assert_int_eq(r.launches[0].ctas_per_sm, k);
      ck_assert_int_eq(r.launches[0].ctas, ctas);
      ck_assert_double_eq_tol(r.launches[0].waves, (double)ctas / (k * S), 1e-12);
      ck_assert_double_eq_tol(r.makespan_us, waves * 3.0, 1e-9);
      ck_assert(r.merge_us == 0);
      double bytes = av_cost_item_bytes(&f.w->heads, 8, 300, AV_OUT_FINAL) * N * hkv;
      ck_assert_double_eq_tol(r.hbm_bytes, bytes, 1e-6);
      /* Busy SM time: N·hkv CTAs of 3 us each holding 1/k of an SM. */
      ck_assert_double_eq_tol(r.sm_busy_frac, ctas * 3.0 / k / (S * r.makespan_us), 1e-12);
      ck_assert_double_eq_tol(r.sm_busy_frac + r.bubble_frac, 1.0, 1e-12);
      av_sim_result_free(&r);
      fixture_free(&f);
    }
}
END_TEST

/* One long CTA among short ones sets the tail; the launch overhead is added per launch. */
START_TEST(test_waves_tail_and_overhead) {
  int64_t lens[8] = {100, 100, 100, 1000, 100, 100, 100, 100};
  fixture_t f;
  fixture_init(&f, 8, lens, 1, 4); /* 8 CTAs, 8 slots: one wave */
  f.gpu.launch_overhead_us = 2.5;
  int32_t l = av_plan_add_launch(f.p, 0, &tile_k2, 0);
  for (int i = 0; i < 8; i++) add_item(&f, l, i, AV_OUT_FINAL, -1, -1);
  av_sim_result_t r;
  av_timeline_t tl = {0};
  simulate(&f, 1, &r, &tl);
  ck_assert_double_eq_tol(r.makespan_us, 2.5 + 10.0, 1e-9);
  ck_assert_double_eq_tol(r.launches[0].start_us, 2.5, 1e-12);
  ck_assert_int_eq(tl.n, 8);
  for (int i = 0; i < tl.n; i++) {
    ck_assert_int_eq(tl.ev[i].item, i);
    ck_assert_int_eq(tl.ev[i].sm, i % 4);
    ck_assert_double_eq_tol(tl.ev[i].end_us - tl.ev[i].start_us, i == 3 ? 10.0 : 1.0, 1e-12);
  }
  free(tl.ev);
  av_sim_result_free(&r);
  fixture_free(&f);
}
END_TEST

/* Two streams overlap (makespan = the later one); on one stream they add up. */
START_TEST(test_waves_streams) {
  int64_t lens[2] = {500, 200};
  for (int same = 0; same <= 1; same++) {
    fixture_t f;
    fixture_init(&f, 2, lens, 1, 4);
    f.gpu.launch_overhead_us = 1.0;
    int32_t a = av_plan_add_launch(f.p, 0, &tile_k2, 0);
    int32_t b = av_plan_add_launch(f.p, same ? 0 : 1, &tile_k2, 0);
    add_item(&f, a, 0, AV_OUT_FINAL, -1, -1);
    add_item(&f, b, 1, AV_OUT_FINAL, -1, -1);
    av_sim_result_t r;
    simulate(&f, 0, &r, NULL);
    ck_assert_double_eq_tol(r.makespan_us, same ? 1 + 5 + 1 + 2 : 1 + 5, 1e-9);
    av_sim_result_free(&r);
    fixture_free(&f);
  }
}
END_TEST

/* A persistent grid's makespan is its longest queue; the merge phase moves the partial
 * states at HBM bandwidth after one launch overhead. */
START_TEST(test_waves_persistent_and_merge) {
  int64_t lens[5] = {100, 200, 300, 400, 50};
  fixture_t f;
  fixture_init(&f, 5, lens, 1, 4);
  f.gpu.launch_overhead_us = 2.0;
  f.gpu.hbm_bw_measured_GBps = 4200.0;
  av_tile_t pt = tile_k2;
  pt.kind = AV_KERNEL_PERSISTENT;
  int32_t l = av_plan_add_launch(f.p, 0, &pt, 3);
  /* CTA 0: 1 + 4 us; CTA 1: 2 + 3 + 0.5 us (longest, 5.5); CTA 2: idle. */
  add_item(&f, l, 0, AV_OUT_PARTIAL, 0, 0);
  add_item(&f, l, 2, AV_OUT_PARTIAL, 1, 1);
  add_item(&f, l, 1, AV_OUT_PARTIAL, 1, 0);
  add_item(&f, l, 3, AV_OUT_PARTIAL, 0, 1);
  add_item(&f, l, 4, AV_OUT_PARTIAL, 1, 2);
  av_sim_result_t r;
  av_timeline_t tl = {0};
  simulate(&f, 1, &r, &tl);
  ck_assert_int_eq(r.launches[0].ctas, 3);
  ck_assert_double_eq_tol(r.partial_us, 2.0 + 5.5, 1e-9);
  /* 5 slots x 8 query heads x (128 + 1) x 4 B read, 5 requests x 8 x 128 x 2 B written. */
  double mbytes = 5.0 * 8 * 129 * 4 + 5.0 * 8 * 128 * 2;
  ck_assert_double_eq_tol(r.merge_us, 2.0 + mbytes / (4200.0 * 1e3), 1e-9);
  ck_assert_double_eq_tol(r.makespan_us, r.partial_us + r.merge_us, 1e-12);
  /* CTA 1 runs its queue in order: items 2 (order 0), 1 (order 1), 4 (order 2). */
  ck_assert_int_eq(tl.n, 5);
  int seen = 0;
  for (int i = 0; i < tl.n; i++)
    if (tl.ev[i].item == 1) {
      ck_assert_double_eq_tol(tl.ev[i].start_us, 2.0 + 2.0, 1e-12);
      seen = 1;
    }
  ck_assert(seen);
  free(tl.ev);
  av_sim_result_free(&r);
  fixture_free(&f);
}
END_TEST

/* A purely bandwidth-bound plan takes its bytes / bandwidth: 20 CTAs of 1 us (100 tokens)
 * on 4 SMs x 2 = 8 slots would take 3 waves = 3 us, but at 1 GB/s their bytes take far
 * longer; each wave lasts its own bytes / bandwidth, so the launch lasts all of them. */
START_TEST(test_waves_bandwidth_bound) {
  int64_t lens[20];
  for (int i = 0; i < 20; i++) lens[i] = 100;
  fixture_t f;
  fixture_init(&f, 20, lens, 2, 4);
  f.gpu.hbm_bw_measured_GBps = 1.0;
  int32_t l = av_plan_add_launch(f.p, 0, &tile_k2, 0);
  for (int i = 0; i < 20; i++) add_item(&f, l, i, AV_OUT_FINAL, -1, -1);
  av_sim_result_t r;
  av_timeline_t tl = {0};
  simulate(&f, 1, &r, &tl);
  double bytes = av_cost_item_bytes(&f.w->heads, 8, 100, AV_OUT_FINAL) * 20 * 2;
  ck_assert_double_eq_tol(r.hbm_bytes, bytes, 1e-6);
  ck_assert_double_eq_tol(r.makespan_us, bytes / 1e3, 1e-6 * r.makespan_us);
  ck_assert_double_eq_tol(r.achieved_bw_GBps, 1.0, 1e-9);
  /* The stretched CTAs fill their waves: no bubble except the last wave's empty slots
   * (40 CTAs in 5 waves of 8: none empty). */
  ck_assert_double_eq_tol(r.bubble_frac, 0.0, 1e-9);
  ck_assert_int_eq(tl.n, 40);
  ck_assert_double_eq_tol(tl.ev[tl.n - 1].end_us, r.makespan_us, 1e-6 * r.makespan_us);
  free(tl.ev);
  av_sim_result_free(&r);
  fixture_free(&f);
}
END_TEST

START_TEST(test_waves_missing_variant) {
  int64_t lens[1] = {100};
  fixture_t f;
  fixture_init(&f, 1, lens, 1, 4);
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = 32, .n_tokens = 128, .warps = 8};
  int32_t l = av_plan_add_launch(f.p, 0, &t, 0);
  add_item(&f, l, 0, AV_OUT_FINAL, -1, -1);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(f.p, &err), &err);
  av_sim_config_t cfg = {.model = AV_SIM_WAVES};
  av_sim_result_t r;
  ck_assert_int_eq(
      av_sim_run(&cfg, &(av_sim_input_t){f.p, f.w, &f.gpu, f.vs, f.cost}, &r, NULL, &err),
      AV_ERR_UNSUPPORTED);
  ck_assert_ptr_null(r.launches);
  ck_assert_str_eq(err.path, "launches[0].tile");
  ck_assert_msg(strstr(err.message, "partial m=32 n=128 warps=8 (head_dim 128, fp16) on sm_90") &&
                    strstr(err.message, "16x64x4w, 64x32x4w"),
                "%s", err.message);
  fixture_free(&f);
}
END_TEST

START_TEST(test_model_names) {
  av_sim_model_t m;
  ck_assert_int_eq(av_sim_model_from_name("waves", &m), AV_OK);
  ck_assert_int_eq(m, AV_SIM_WAVES);
  ck_assert_int_eq(av_sim_model_from_name("engine", &m), AV_OK);
  ck_assert_int_eq(m, AV_SIM_ENGINE);
  ck_assert_str_eq(av_sim_model_name(AV_SIM_ENGINE), "engine");
  av_error_t err;
  av_error_clear(&err);
  ck_assert_int_eq(av_sim_model_lookup("cycle", "exp.json", "sim", &m, &err), AV_ERR_NAME);
  ck_assert_str_eq(err.message, "unknown simulator model 'cycle'; expected one of: waves, engine, engine_lines");
  ck_assert_str_eq(err.path, "sim");
}
END_TEST

static Suite *gpu_suite(void) {
  Suite *s = suite_create("gpu");
  TCase *t = tcase_create("specs");
  tcase_add_test(t, test_every_spec_loads);
  tcase_add_test(t, test_h200_facts);
  tcase_add_test(t, test_unknown_gpu_lists_valid);
  tcase_add_test(t, test_data_dir_env);
  tcase_add_test(t, test_bad_specs);
  suite_add_tcase(s, t);
  t = tcase_create("variants");
  tcase_add_test(t, test_variants_find_and_tiles);
  tcase_add_test(t, test_bad_variants);
  suite_add_tcase(s, t);
  t = tcase_create("waves");
  tcase_add_test(t, test_waves_closed_form);
  tcase_add_test(t, test_waves_tail_and_overhead);
  tcase_add_test(t, test_waves_streams);
  tcase_add_test(t, test_waves_persistent_and_merge);
  tcase_add_test(t, test_waves_bandwidth_bound);
  tcase_add_test(t, test_waves_missing_variant);
  tcase_add_test(t, test_model_names);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return av_test_run(gpu_suite(), 0); }
