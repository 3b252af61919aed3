/* Validation statistics (pipeline/compare.c) on hand-computed data, device identification
 * (executor/device_id.c) on fake device descriptions against the real gpus/ specs, and
 * the profile / validation helpers that need no GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodels/costmodel.h"
#include "core/json_util.h"
#include "support.h"
#include "pipeline/compare.h"
#include "executor/device_id.h"
#include "profiler/profile.h"

#define EPS 1e-9

START_TEST(test_ape_mape_worst) {
  /* APEs 2/12, 2/18, 3/33, 10/50 */
  av_cmp_pair_t p[4] = {{0, 0, 10, 12}, {0, 1, 20, 18}, {1, 0, 30, 33}, {1, 1, 40, 50}};
  av_cmp_opts_t o = {.n_sched = 2, .focus = -1, .tol = 0.05};
  av_cmp_summary_t s;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_cmp_summarize(p, 4, &o, &s, NULL, &err), &err);
  ck_assert_int_eq(s.n, 4);
  ck_assert_double_eq_tol(s.mape, (2.0 / 12 + 2.0 / 18 + 3.0 / 33 + 10.0 / 50) / 4, EPS);
  ck_assert_double_eq_tol(s.worst_ape, 0.2, EPS);
  ck_assert_int_eq(s.worst, 3);
  ck_assert_double_eq_tol(s.spearman, 1.0, EPS);
  ck_assert_double_eq_tol(s.kendall, 1.0, EPS);
  ck_assert_double_eq_tol(av_cmp_ape(9, 10), 0.1, EPS);
  ck_assert(isnan(av_cmp_ape(9, 0)));
}
END_TEST

START_TEST(test_rank_correlations) {
  /* d = (-1, 1, -1, 1, 0): rho = 1 - 6*4/(5*24) = 0.8; discordant (1,2), (3,4): tau = 0.6 */
  double x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 1, 4, 3, 5};
  ck_assert_double_eq_tol(av_cmp_spearman(x, y, 5), 0.8, EPS);
  ck_assert_double_eq_tol(av_cmp_kendall(x, y, 5), 0.6, EPS);
  /* reversed: -1 both */
  double z[5] = {5, 4, 3, 2, 1};
  ck_assert_double_eq_tol(av_cmp_spearman(x, z, 5), -1.0, EPS);
  ck_assert_double_eq_tol(av_cmp_kendall(x, z, 5), -1.0, EPS);
  /* ties in x: C = 5, D = 0, Tx = 1: tau-b = 5 / sqrt(6 * 5); Spearman over average ranks
   * (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): 4.5 / sqrt(4.5 * 5) */
  double tx[4] = {1, 2, 2, 3}, ty[4] = {1, 2, 3, 4};
  ck_assert_double_eq_tol(av_cmp_kendall(tx, ty, 4), 5.0 / sqrt(30.0), EPS);
  ck_assert_double_eq_tol(av_cmp_spearman(tx, ty, 4), 4.5 / sqrt(22.5), 1e-12);
  /* undefined: constant series, too few points */
  double c[3] = {2, 2, 2};
  ck_assert(isnan(av_cmp_spearman(x, c, 3)));
  ck_assert(isnan(av_cmp_kendall(c, x, 3)));
  ck_assert(isnan(av_cmp_kendall(x, y, 1)));
}
END_TEST

START_TEST(test_best_plan_regret_focus) {
  /* schedulers 0, 1 ranked, 2 = auto (focus, not ranked).
   * batch 7: predicted best 0, measured best 1 (9 us): disagree, regret 11/9 - 1,
   *          auto 11.2/9 - 1 > 5 %;
   * batch 3: both say 0: agree, regret 0, auto 6.1/6 - 1 < 5 %. */
  av_cmp_pair_t p[6] = {{7, 0, 10, 11}, {7, 1, 12, 9}, {7, 2, 10, 11.2},
                        {3, 0, 5, 6},   {3, 1, 7, 8},  {3, 2, 5, 6.1}};
  uint8_t ranked[3] = {1, 1, 0};
  av_cmp_opts_t o = {.ranked = ranked, .n_sched = 3, .focus = 2, .tol = 0.05};
  av_cmp_summary_t s;
  av_cmp_batch_t *b = NULL;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_cmp_summarize(p, 6, &o, &s, &b, &err), &err);
  ck_assert_int_eq(s.n_batches, 2);
  ck_assert_int_eq(b[0].batch, 7);
  ck_assert_int_eq(b[0].pred_best, 0);
  ck_assert_int_eq(b[0].meas_best, 1);
  ck_assert_int_eq(b[0].agree, 0);
  ck_assert_double_eq_tol(b[0].regret, 11.0 / 9 - 1, EPS);
  ck_assert_double_eq_tol(b[0].focus_gap, 11.2 / 9 - 1, EPS);
  ck_assert_int_eq(b[1].batch, 3);
  ck_assert_int_eq(b[1].agree, 1);
  ck_assert_double_eq_tol(b[1].regret, 0, EPS);
  ck_assert_int_eq(s.agree, 1);
  ck_assert_double_eq_tol(s.agree_frac, 0.5, EPS);
  ck_assert_double_eq_tol(s.regret_mean, (11.0 / 9 - 1) / 2, EPS);
  ck_assert_double_eq_tol(s.regret_max, 11.0 / 9 - 1, EPS);
  ck_assert_int_eq(s.regret_within, 1);
  ck_assert_int_eq(s.focus_batches, 2);
  ck_assert_int_eq(s.focus_within, 1);
  ck_assert_double_eq_tol(s.focus_frac, 0.5, EPS);
  free(b);
  /* every scheduler ranked (ranked = NULL): in batch 7 auto's 10 ties scheduler 0's
   * prediction; the first one wins */
  o.ranked = NULL;
  AV_CK_OK(av_cmp_summarize(p, 6, &o, &s, &b, &err), &err);
  ck_assert_int_eq(b[0].pred_best, 0);
  free(b);
}
END_TEST

START_TEST(test_compare_bad_inputs) {
  av_cmp_summary_t s;
  av_cmp_opts_t o = {.n_sched = 2, .focus = -1, .tol = 0.05};
  av_error_t err;
  av_error_clear(&err);
  ck_assert_int_eq(av_cmp_summarize(NULL, 0, &o, &s, NULL, &err), AV_ERR_RANGE);
  av_cmp_pair_t zero[2] = {{0, 0, 1, 2}, {0, 1, 1, 0}};
  av_error_clear(&err);
  ck_assert_int_eq(av_cmp_summarize(zero, 2, &o, &s, NULL, &err), AV_ERR_RANGE);
  ck_assert_str_eq(err.path, "pairs[1]");
  av_cmp_pair_t nan_pred[1] = {{0, 0, NAN, 2}};
  av_error_clear(&err);
  ck_assert_int_eq(av_cmp_summarize(nan_pred, 1, &o, &s, NULL, &err), AV_ERR_RANGE);
  av_cmp_pair_t dup[2] = {{4, 1, 1, 2}, {4, 1, 2, 3}};
  av_error_clear(&err);
  ck_assert_int_eq(av_cmp_summarize(dup, 2, &o, &s, NULL, &err), AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "pairs[0]"));
  av_cmp_pair_t range[1] = {{0, 2, 1, 2}};
  av_error_clear(&err);
  ck_assert_int_eq(av_cmp_summarize(range, 1, &o, &s, NULL, &err), AV_ERR_RANGE);
  /* one pair: defined error, undefined correlations */
  av_cmp_pair_t one[1] = {{0, 0, 1, 2}};
  av_error_clear(&err);
  AV_CK_OK(av_cmp_summarize(one, 1, &o, &s, NULL, &err), &err);
  ck_assert_double_eq_tol(s.mape, 0.5, EPS);
  ck_assert(isnan(s.spearman));
}
END_TEST

/* --- device identification --------------------------------------------------------- */
#define GB 1e9
#define MIB (1024.0 * 1024.0)

/* A device as the driver reports it: SMs, compute capability (x10), L2 and memory bytes and
 * the memory clock in MHz (0: unknown). */
typedef struct {
  int sms, arch;
  double l2, mem, clock;
} facts_t;

static const char *pick(const char *name, facts_t f, const char *spec, av_error_t *err,
                        char *note) {
  static av_gpu_t g;
  av_device_desc_t d = {.sm_count = f.sms,
                        .sm_arch = f.arch,
                        .l2_bytes = f.l2,
                        .total_bytes = f.mem,
                        .mem_clock_MHz = f.clock};
  snprintf(d.name, sizeof d.name, "%s", name);
  av_error_clear(err);
  if (av_device_pick_spec(&d, spec, NULL, &g, note, 256, err)) return NULL;
  return g.name;
}

START_TEST(test_device_auto_pick) {
  av_error_t err;
  char note[256];
  const char *s;
  s = pick("NVIDIA H200", (facts_t){132, 90, 60 * MIB, 150.1 * GB, 0}, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "H200-SXM") == 0, "%s", err.message);
  s = pick("NVIDIA H100 80GB HBM3", (facts_t){132, 90, 50 * MIB, 85 * GB, 0}, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "H100-SXM") == 0, "%s", err.message);
  s = pick("NVIDIA A100-PCIE-40GB", (facts_t){108, 80, 40 * MIB, 42.5 * GB, 1215}, NULL, &err,
           note);
  ck_assert_msg(s && strcmp(s, "A100-40GB-PCIe") == 0, "%s", err.message);
  s = pick("NVIDIA A100-SXM4-80GB", (facts_t){108, 80, 40 * MIB, 85.1 * GB, 1593}, NULL, &err,
           note);
  ck_assert_msg(s && strcmp(s, "A100-80GB-SXM") == 0, "%s", err.message);
  s = pick("NVIDIA GeForce RTX 4090", (facts_t){128, 89, 72 * MIB, 25.4 * GB, 0}, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "RTX-4090") == 0, "%s", err.message);
  /* L2 and memory unknown: the name and hard facts still decide */
  s = pick("NVIDIA H200", (facts_t){132, 90, 0, 0, 0}, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "H200-SXM") == 0, "%s", err.message);
}
END_TEST

START_TEST(test_device_no_match) {
  av_error_t err;
  char note[256];
  /* H100 PCIe: 114 SMs */
  ck_assert_ptr_null(
      pick("NVIDIA H100 PCIe", (facts_t){114, 90, 50 * MIB, 80 * GB, 0}, NULL, &err, note));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "--gpu-spec"));
  ck_assert_ptr_nonnull(strstr(err.message, "NVIDIA H100 PCIe (114 SMs, sm_90"));
  /* A100 80 GB PCIe: hard facts of both A100 specs, rules of neither */
  ck_assert_ptr_null(
      pick("NVIDIA A100 80GB PCIe", (facts_t){108, 80, 40 * MIB, 80 * GB, 1512}, NULL, &err, note));
  ck_assert_ptr_nonnull(strstr(err.message, "matches no GPU spec"));
  /* an SXM A100 whose memory clock says PCIe */
  ck_assert_ptr_null(
      pick("NVIDIA A100-SXM4-80GB", (facts_t){108, 80, 40 * MIB, 85 * GB, 1512}, NULL, &err, note));
  /* a 40 GB memory on a card called 80GB-SXM-like */
  ck_assert_ptr_null(
      pick("NVIDIA A100-SXM4", (facts_t){108, 80, 40 * MIB, 40 * GB, 0}, NULL, &err, note));
  /* RTX 4090 D: fewer SMs */
  ck_assert_ptr_null(pick("NVIDIA GeForce RTX 4090 D", (facts_t){114, 89, 72 * MIB, 24 * GB, 0},
                          NULL, &err, note));
  /* an unknown card */
  ck_assert_ptr_null(
      pick("NVIDIA L40S", (facts_t){142, 89, 96 * MIB, 48 * GB, 0}, NULL, &err, note));
  ck_assert_ptr_nonnull(strstr(err.message, "H200-SXM"));
}
END_TEST

START_TEST(test_device_named_spec) {
  av_error_t err;
  char note[256];
  const char *s;
  /* the H200's own spec, named: no note */
  s = pick("NVIDIA H200", (facts_t){132, 90, 60 * MIB, 150 * GB, 0}, "H200-SXM", &err, note);
  ck_assert_msg(s && strcmp(s, "H200-SXM") == 0, "%s", err.message);
  ck_assert_str_eq(note, "");
  /* H100 spec on an H200: L2 differs, refused */
  ck_assert_ptr_null(
      pick("NVIDIA H200", (facts_t){132, 90, 60 * MIB, 150 * GB, 0}, "H100-SXM", &err, note));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "--gpu-spec");
  ck_assert_ptr_nonnull(strstr(err.message, "L2"));
  /* ... but when the device does not report its L2, only the name differs: accepted with a
   * note, never silently */
  s = pick("NVIDIA H200", (facts_t){132, 90, 0, 150 * GB, 0}, "H100-SXM", &err, note);
  ck_assert_msg(s && strcmp(s, "H100-SXM") == 0, "%s", err.message);
  ck_assert_ptr_nonnull(strstr(note, "H100"));
  /* an A100 spec on an H200: SMs and architecture differ */
  ck_assert_ptr_null(
      pick("NVIDIA H200", (facts_t){132, 90, 60 * MIB, 150 * GB, 0}, "A100-80GB-SXM", &err, note));
  ck_assert_ptr_nonnull(strstr(err.message, "sm_90"));
  /* an unknown spec name lists the valid ones */
  ck_assert_ptr_null(pick("NVIDIA H200", (facts_t){132, 90, 0, 0, 0}, "H300", &err, note));
  ck_assert_int_eq(err.code, AV_ERR_NAME);
  ck_assert_ptr_nonnull(strstr(err.message, "RTX-4090"));
}
END_TEST

START_TEST(test_device_query_without_gpu) {
  /* This machine (CI, the build host) has no GPU: the query says so, as the commands do. */
  av_device_desc_t d;
  av_error_t err;
  av_error_clear(&err);
  int rc = av_device_query(&d, &err);
  if (rc == AV_OK) return; /* running on a GPU host: nothing to check here */
  ck_assert_int_eq(rc, AV_ERR_NODEVICE);
  ck_assert_ptr_nonnull(strstr(err.message, "no CUDA device"));
}
END_TEST


/* --- profile host helpers ------------------------------------------------------------- */

START_TEST(test_profile_plans_are_exact) {
  av_error_t err;
  av_error_clear(&err);
  int64_t kv[3] = {16, 100, 4096};
  av_workload_t *w = av_profile_workload(4, kv, 3, 128, AV_DTYPE_FP16, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  ck_assert_int_eq(w->n_requests, 12);
  ck_assert_int_eq(w->heads.hq, 1);
  av_tile_t tiles[3] = {{AV_KERNEL_PARTIAL, 16, 64, 4}, {AV_KERNEL_PERSISTENT, 16, 64, 4},
                        {AV_KERNEL_DECODE, 16, 64, 4}};
  for (int k = 0; k < 3; k++)
    for (int serial = 0; serial < 2; serial++) {
      av_plan_t *p = av_profile_plan(w, &tiles[k], serial, &err);
      ck_assert_msg(p != NULL, "%s", err.message);
      ck_assert_int_eq(p->n_items, 3);
      ck_assert_int_eq(p->n_launches, serial ? 3 : 1);
      for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(p->items[i].n_q, 4);
        ck_assert_int_eq(p->items[i].output,
                         k == 2 ? AV_OUT_FINAL : AV_OUT_PARTIAL);
      }
      /* serial launches share stream 0, so every CTA runs alone */
      for (int l = 0; l < p->n_launches; l++) ck_assert_int_eq(p->launches[l].stream, 0);
      av_plan_destroy(p);
    }
  av_workload_destroy(w);
  ck_assert_ptr_null(av_profile_workload(0, kv, 3, 128, AV_DTYPE_FP16, &err));
  ck_assert_int_eq(err.code, AV_ERR_RANGE);
}
END_TEST

START_TEST(test_profile_max_resident) {
  av_error_t err;
  av_error_clear(&err);
  json_t *tr = NULL;
  /* SM 0: [0,10) [5,15) [9,12) -> 3 at t = 9; SM 1: [0,5) [5,10) back to back -> 1 */
  AV_CK_OK(av_json_load_string(
               "{\"ctas\": [{\"sm\": 0, \"start_us\": 0, \"end_us\": 10},"
               "{\"sm\": 0, \"start_us\": 5, \"end_us\": 15},"
               "{\"sm\": 1, \"start_us\": 0, \"end_us\": 5},"
               "{\"sm\": 0, \"start_us\": 9, \"end_us\": 12},"
               "{\"sm\": 1, \"start_us\": 5, \"end_us\": 10}]}",
               "trace", &tr, &err),
           &err);
  int m = 0;
  AV_CK_OK(av_profile_max_resident(tr, &m, &err), &err);
  ck_assert_int_eq(m, 3);
  json_decref(tr);
  AV_CK_OK(av_json_load_string("{\"ctas\": [{\"sm\": 0, \"start_us\": 4, \"end_us\": 1}]}",
                               "trace", &tr, &err),
           &err);
  ck_assert_int_eq(av_profile_max_resident(tr, &m, &err), AV_ERR_RANGE);
  ck_assert_str_eq(err.path, "ctas[0]");
  json_decref(tr);
}
END_TEST

START_TEST(test_profile_fit_line) {
  double x[4] = {1, 2, 4, 8}, y[4] = {5, 7, 11, 19}; /* y = 3 + 2x */
  double c0, c1, r2;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_profile_fit_line(x, y, 4, &c0, &c1, &r2, &err), &err);
  ck_assert_double_eq_tol(c0, 3, 1e-9);
  ck_assert_double_eq_tol(c1, 2, 1e-9);
  ck_assert_double_eq_tol(r2, 1, 1e-12);
  ck_assert_int_eq(av_profile_fit_line(x, y, 1, &c0, &c1, &r2, &err), AV_ERR_RANGE);
}
END_TEST

/* A written profile is read back by the `profile` cost model, exactly at grid points; the
 * calibrated spec loads as the same GPU with the measured figures. */
START_TEST(test_profile_files_round_trip) {
  av_profile_t p = {0};
  snprintf(p.gpu, sizeof p.gpu, "H200-SXM");
  snprintf(p.device, sizeof p.device, "NVIDIA H200");
  snprintf(p.command, sizeof p.command, "anvil profile (test)");
  p.copy_GBps = 4123.4;
  p.read_GBps = 4398.6;
  p.launch_us = 2.25;
  p.lone_GBps = 80.0;
  p.cta_fixed_us = 1.5;
  av_profile_table_t *t = av_profile_add(&p);
  t->tile = (av_tile_t){AV_KERNEL_PARTIAL, 16, 64, 4};
  t->head_dim = 128;
  t->dtype = AV_DTYPE_FP16;
  t->n_nq = 2;
  t->nq[0] = 1, t->nq[1] = 16;
  t->n_kv = 3;
  t->kv[0] = 64, t->kv[1] = 1024, t->kv[2] = 16384;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) t->time_us[i][j] = 2.0 + i + 0.01 * (double)t->kv[j];
  char dir[] = "/tmp/av_test_profile_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char out[256], spec_path[300], path[300], *text;
  snprintf(out, sizeof out, "%s/H200-SXM.json", dir);
  snprintf(spec_path, sizeof spec_path, "%s/gpus/H200-SXM.json", av_data_dir());
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_profile_write(&p, out, spec_path, &err), &err);

  av_gpu_t g;
  snprintf(path, sizeof path, "%s/H200-SXM.spec.json", dir);
  AV_CK_OK(av_profile_load_spec(path, &g, &err), &err);
  ck_assert_str_eq(g.name, "H200-SXM");
  ck_assert_double_eq_tol(g.hbm_bw_measured_GBps, 4123, 1e-9);
  ck_assert_double_eq_tol(g.hbm_bw_read_GBps, 4399, 1e-9);  /* the floor's, not the model's */
  ck_assert_double_eq_tol(g.launch_overhead_us, 2.25, 1e-9);
  ck_assert_double_eq_tol(g.cta_fixed_us, 1.5, 1e-9);
  ck_assert_double_eq_tol(g.bytes_in_flight_per_sm, 80.0 * 700.0, 1e-6);
  ck_assert_ptr_nonnull(strstr(text = av_test_read_file(path), "anvil profile (test)"));
  free(text);

  const av_costmodel_ops_t *ops = av_costmodel_find("profile");
  av_params_t prm;
  AV_CK_OK(av_params_init(&prm, ops->params, &err), &err);
  char assign[400];
  snprintf(assign, sizeof assign, "path=%s", out);
  AV_CK_OK(av_params_set_text(&prm, assign, "test", &err), &err);
  av_heads_t h = av_test_heads();
  av_cost_env_t env = {.gpu = &g, .heads = &h};
  av_costmodel_t *m = av_costmodel_create(ops, &prm, &env, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  av_cost_query_t q = {.n_q = 4, .rows = 16, .kv_tokens = 1024,
                       .tile = t->tile, .output = AV_OUT_PARTIAL};
  av_item_cost_t c;
  av_costmodel_estimate(m, &q, &c);
  ck_assert_double_eq_tol(c.time_us, 3.0 + 10.24, 1e-9);
  av_costmodel_destroy(m);

  /* another GPU's spec: the cost model refuses the profile */
  av_gpu_t other;
  AV_CK_OK(av_gpu_load("A100-80GB-SXM", NULL, &other, &err), &err);
  env.gpu = &other;
  av_error_clear(&err);
  ck_assert_ptr_null(av_costmodel_create(ops, &prm, &env, &err));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);

  /* a spec that cannot be read: no file is left behind */
  char out2[300];
  snprintf(out2, sizeof out2, "%s/B.json", dir);
  av_error_clear(&err);
  ck_assert_int_eq(av_profile_write(&p, out2, "/nonexistent/spec.json", &err), AV_ERR_IO);
  FILE *f = fopen(out2, "r");
  ck_assert_ptr_null(f);
  av_profile_free(&p);
  const char *files[] = {"H200-SXM.json", "H200-SXM.spec.json", "H200-SXM.details.json"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    ck_assert_int_eq(remove(path), 0);
  }
  rmdir(dir);
}
END_TEST

/* --- the commands, without a GPU -------------------------------------------------------- */

/* Runs `anvil ARGS...` from the repository root; *out_text / *err_text (caller frees). */
static int anvil(char **out_text, char **err_text, const char *a1, const char *a2,
                 const char *a3, const char *a4, const char *a5) {
  char bin[600], out[] = "/tmp/av_test_validate_out_XXXXXX", err[] = "/tmp/av_test_validate_err_XXXXXX";
  snprintf(bin, sizeof bin, "%s/anvil", AV_BINARY_DIR);
  int fo = mkstemp(out), fe = mkstemp(err);
  ck_assert(fo >= 0 && fe >= 0);
  close(fo);
  close(fe);
  char *argv[] = {bin, (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5, NULL};
  int rc = av_test_spawn(NULL, argv, out, err);
  *out_text = av_test_read_file(out);
  *err_text = av_test_read_file(err);
  remove(out);
  remove(err);
  return rc;
}

START_TEST(test_cmds_without_gpu) {
  av_device_desc_t d;
  av_error_t e;
  av_error_clear(&e);
  if (av_device_query(&d, &e) == AV_OK) return; /* a GPU host: the commands would run */
  char *o, *r;
  ck_assert_int_eq(anvil(&o, &r, "profile", NULL, NULL, NULL, NULL), 1);
  ck_assert_msg(strstr(r, "no CUDA device"), "%s", r);
  free(o), free(r);
  ck_assert_int_eq(anvil(&o, &r, "validate", "experiments/quickstart.json", NULL, NULL, NULL), 1);
  ck_assert_msg(strstr(r, "no CUDA device"), "%s", r);
  free(o), free(r);
  /* input errors come first, and name what is wrong */
  ck_assert_int_eq(anvil(&o, &r, "validate", NULL, NULL, NULL, NULL), 1);
  ck_assert_msg(strstr(r, "missing the experiment file"), "%s", r);
  free(o), free(r);
  ck_assert_int_eq(anvil(&o, &r, "validate", "no/such.json", NULL, NULL, NULL), 1);
  ck_assert_msg(strstr(r, "no/such.json"), "%s", r);
  free(o), free(r);
  ck_assert_int_eq(anvil(&o, &r, "profile", "--runs", "0", NULL, NULL), 1);
  ck_assert_msg(strstr(r, "--runs"), "%s", r);
  free(o), free(r);
}
END_TEST

START_TEST(test_table2_predicts) {
  char *o, *r;
  ck_assert_int_eq(anvil(&o, &r, "table2", "--gpu", "A100-80GB-SXM", "--gpu", "RTX-4090"), 0);
  ck_assert_msg(strstr(o, "A100-80GB-SXM (predicted") && strstr(o, "RTX-4090 (predicted"), "%s",
                o);
  /* the single-CTA time grows with n: compare the first row's first and last cells */
  const char *row = strstr(strstr(o, "A100-80GB-SXM (predicted"), "\n1 ");
  ck_assert_ptr_nonnull(row);
  double c[5];
  ck_assert_int_eq(sscanf(row, " %*d %lf %lf %lf %lf %lf", &c[0], &c[1], &c[2], &c[3], &c[4]), 5);
  ck_assert(c[0] > 0 && c[4] > 10 * c[0]);
  free(o), free(r);
  ck_assert_int_eq(anvil(&o, &r, "table2", NULL, NULL, NULL, NULL), 1);
  ck_assert_msg(strstr(r, "--gpu"), "%s", r);
  free(o), free(r);
  ck_assert_int_eq(anvil(&o, &r, "table2", "--gpu", "B300", NULL, NULL), 1);
  ck_assert_msg(strstr(r, "H200-SXM"), "%s", r);
  free(o), free(r);
  ck_assert_int_eq(anvil(&o, &r, "table2", "--gpu", "H200-SXM", "--tile", "7,7"), 1);
  ck_assert_msg(strstr(r, "no compiled partial tile"), "%s", r);
  free(o), free(r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("validate");
  TCase *tc = tcase_create("compare");
  tcase_add_test(tc, test_ape_mape_worst);
  tcase_add_test(tc, test_rank_correlations);
  tcase_add_test(tc, test_best_plan_regret_focus);
  tcase_add_test(tc, test_compare_bad_inputs);
  suite_add_tcase(s, tc);
  tc = tcase_create("device_id");
  tcase_add_test(tc, test_device_auto_pick);
  tcase_add_test(tc, test_device_no_match);
  tcase_add_test(tc, test_device_named_spec);
  tcase_add_test(tc, test_device_query_without_gpu);
  suite_add_tcase(s, tc);
  tc = tcase_create("profile");
  tcase_add_test(tc, test_profile_plans_are_exact);
  tcase_add_test(tc, test_profile_max_resident);
  tcase_add_test(tc, test_profile_fit_line);
  tcase_add_test(tc, test_profile_files_round_trip);
  suite_add_tcase(s, tc);
  tc = tcase_create("commands");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_cmds_without_gpu);
  tcase_add_test(tc, test_table2_predicts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
