/* Validation statistics (validation/compare.c) on hand-computed data, device identification
 * (validation/device_id.c) on fake device descriptions against the real sim/gpus/ specs, and
 * the profile / validation helpers that need no GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "validation/compare.h"
#include "validation/device_id.h"
#include "validation/profile.h"

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

static const char *pick(const char *name, int sms, int arch, double l2, double mem,
                        double clock, const char *spec, av_error_t *err, char *note) {
  static av_gpu_t g;
  av_device_desc_t d = {.sm_count = sms, .sm_arch = arch, .l2_bytes = l2, .total_bytes = mem,
                        .mem_clock_MHz = clock};
  snprintf(d.name, sizeof d.name, "%s", name);
  av_error_clear(err);
  if (av_device_pick_spec(&d, spec, NULL, &g, note, 256, err)) return NULL;
  return g.name;
}

START_TEST(test_device_auto_pick) {
  av_error_t err;
  char note[256];
  const char *s;
  s = pick("NVIDIA H200", 132, 90, 60 * MIB, 150.1 * GB, 0, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "H200-SXM") == 0, "%s", err.message);
  s = pick("NVIDIA H100 80GB HBM3", 132, 90, 50 * MIB, 85 * GB, 0, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "H100-SXM") == 0, "%s", err.message);
  s = pick("NVIDIA A100-PCIE-40GB", 108, 80, 40 * MIB, 42.5 * GB, 1215, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "A100-40GB-PCIe") == 0, "%s", err.message);
  s = pick("NVIDIA A100-SXM4-80GB", 108, 80, 40 * MIB, 85.1 * GB, 1593, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "A100-80GB-SXM") == 0, "%s", err.message);
  s = pick("NVIDIA GeForce RTX 4090", 128, 89, 72 * MIB, 25.4 * GB, 0, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "RTX-4090") == 0, "%s", err.message);
  /* L2 and memory unknown: the name and hard facts still decide */
  s = pick("NVIDIA H200", 132, 90, 0, 0, 0, NULL, &err, note);
  ck_assert_msg(s && strcmp(s, "H200-SXM") == 0, "%s", err.message);
}
END_TEST

START_TEST(test_device_no_match) {
  av_error_t err;
  char note[256];
  /* H100 PCIe: 114 SMs */
  ck_assert_ptr_null(pick("NVIDIA H100 PCIe", 114, 90, 50 * MIB, 80 * GB, 0, NULL, &err, note));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "--gpu-spec"));
  ck_assert_ptr_nonnull(strstr(err.message, "NVIDIA H100 PCIe (114 SMs, sm_90"));
  /* A100 80 GB PCIe: hard facts of both A100 specs, rules of neither */
  ck_assert_ptr_null(
      pick("NVIDIA A100 80GB PCIe", 108, 80, 40 * MIB, 80 * GB, 1512, NULL, &err, note));
  ck_assert_ptr_nonnull(strstr(err.message, "matches no GPU spec"));
  /* an SXM A100 whose memory clock says PCIe */
  ck_assert_ptr_null(
      pick("NVIDIA A100-SXM4-80GB", 108, 80, 40 * MIB, 85 * GB, 1512, NULL, &err, note));
  /* a 40 GB memory on a card called 80GB-SXM-like */
  ck_assert_ptr_null(pick("NVIDIA A100-SXM4", 108, 80, 40 * MIB, 40 * GB, 0, NULL, &err, note));
  /* RTX 4090 D: fewer SMs */
  ck_assert_ptr_null(pick("NVIDIA GeForce RTX 4090 D", 114, 89, 72 * MIB, 24 * GB, 0, NULL,
                          &err, note));
  /* an unknown card */
  ck_assert_ptr_null(pick("NVIDIA L40S", 142, 89, 96 * MIB, 48 * GB, 0, NULL, &err, note));
  ck_assert_ptr_nonnull(strstr(err.message, "H200-SXM"));
}
END_TEST

START_TEST(test_device_named_spec) {
  av_error_t err;
  char note[256];
  const char *s;
  /* the H200's own spec, named: no note */
  s = pick("NVIDIA H200", 132, 90, 60 * MIB, 150 * GB, 0, "H200-SXM", &err, note);
  ck_assert_msg(s && strcmp(s, "H200-SXM") == 0, "%s", err.message);
  ck_assert_str_eq(note, "");
  /* H100 spec on an H200: L2 differs, refused */
  ck_assert_ptr_null(pick("NVIDIA H200", 132, 90, 60 * MIB, 150 * GB, 0, "H100-SXM", &err, note));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "--gpu-spec");
  ck_assert_ptr_nonnull(strstr(err.message, "L2"));
  /* ... but when the device does not report its L2, only the name differs: accepted with a
   * note, never silently */
  s = pick("NVIDIA H200", 132, 90, 0, 150 * GB, 0, "H100-SXM", &err, note);
  ck_assert_msg(s && strcmp(s, "H100-SXM") == 0, "%s", err.message);
  ck_assert_ptr_nonnull(strstr(note, "H100"));
  /* an A100 spec on an H200: SMs and architecture differ */
  ck_assert_ptr_null(
      pick("NVIDIA H200", 132, 90, 60 * MIB, 150 * GB, 0, "A100-80GB-SXM", &err, note));
  ck_assert_ptr_nonnull(strstr(err.message, "sm_90"));
  /* an unknown spec name lists the valid ones */
  ck_assert_ptr_null(pick("NVIDIA H200", 132, 90, 0, 0, 0, "H300", &err, note));
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
  return s;
}

int main(void) { return av_test_run(suite(), 0); }
