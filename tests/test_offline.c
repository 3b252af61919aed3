/* `anvil validate --offline` re-predicts a recorded validation in the record's own calibration
 * mode: a record predicted with the calibrated spec (profiles/<gpu>.spec.json) is re-predicted
 * with it, one predicted with the datasheet spec (gpus/<gpu>.json, "(uncalibrated)") with
 * that, even though a calibrated spec exists; both reproduce the recorded predictions exactly.
 * The records (tests/data/offline/) are three batches x three schedulers of the H100's
 * held-out validation. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

static char g_tmp[256];

static void setup(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/anvil_offline_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_tmp));
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  ck_assert_int_eq(system(cmd), 0);
}

/* Re-predicts tests/data/offline/<record> (extra: one more option or NULL) into g_tmp/<out>
 * and returns the new report (caller decrefs). */
static json_t *offline(const char *record, const char *extra, const char *out) {
  char rec[512], exp[512], dir[512], so[512], se[512];
  snprintf(rec, sizeof rec, "%s/data/offline/%s", AV_TEST_DIR, record);
  snprintf(exp, sizeof exp, "%s/data/offline/experiment.json", AV_TEST_DIR);
  snprintf(dir, sizeof dir, "%s/%s", g_tmp, out);
  snprintf(so, sizeof so, "%s/%s.stdout", g_tmp, out);
  snprintf(se, sizeof se, "%s/%s.stderr", g_tmp, out);
  static char bin[] = AV_BINARY_DIR "/anvil";
  char *argv[] = {bin, "validate", "--offline", rec, exp, "--out", dir, (char *)extra, NULL};
  const int rc = av_test_spawn(NULL, argv, so, se);
  char *err = av_test_read_file(se);
  ck_assert_msg(rc == 0, "anvil validate --offline %s: exit %d: %s", record, rc, err);
  free(err);
  char path[600];
  snprintf(path, sizeof path, "%s/validation.json", dir);
  json_error_t je;
  json_t *doc = json_load_file(path, 0, &je);
  ck_assert_msg(doc != NULL, "%s: %s", path, je.text);
  return doc;
}

static json_t *load_record(const char *record) {
  char path[512];
  snprintf(path, sizeof path, "%s/data/offline/%s", AV_TEST_DIR, record);
  json_error_t je;
  json_t *doc = json_load_file(path, 0, &je);
  ck_assert_msg(doc != NULL, "%s: %s", path, je.text);
  return doc;
}

/* Every row's prediction in `got` equals the one in `want` (same order, same pairs). */
static void same_predictions(const json_t *want, const json_t *got) {
  const json_t *a = json_object_get(want, "rows"), *b = json_object_get(got, "rows");
  ck_assert_uint_eq(json_array_size(a), json_array_size(b));
  for (size_t i = 0; i < json_array_size(a); i++) {
    const json_t *ra = json_array_get(a, i), *rb = json_array_get(b, i);
    ck_assert_str_eq(json_string_value(json_object_get(ra, "batch")),
                     json_string_value(json_object_get(rb, "batch")));
    ck_assert_str_eq(json_string_value(json_object_get(ra, "scheduler")),
                     json_string_value(json_object_get(rb, "scheduler")));
    ck_assert_double_eq(json_real_value(json_object_get(ra, "predicted_us")),
                        json_real_value(json_object_get(rb, "predicted_us")));
  }
}

static int uncalibrated(const json_t *report) {
  const char *spec = json_string_value(json_object_get(report, "spec"));
  return spec && strstr(spec, "(uncalibrated)") != NULL;
}

START_TEST(calibrated_record_reproduces) {
  json_t *rec = load_record("calibrated.json");
  json_t *got = offline("calibrated.json", NULL, "cal");
  ck_assert(!uncalibrated(got));
  same_predictions(rec, got);
  json_decref(got);
  json_decref(rec);
}
END_TEST

START_TEST(uncalibrated_record_keeps_its_mode) {
  json_t *rec = load_record("uncalibrated.json");
  json_t *got = offline("uncalibrated.json", NULL, "uncal");
  ck_assert_msg(uncalibrated(got), "an uncalibrated record was re-predicted with calibration");
  same_predictions(rec, got);
  /* The modes differ in what they predict, so the test above can tell them apart. */
  json_t *cal = load_record("calibrated.json");
  const json_t *r0 = json_array_get(json_object_get(rec, "rows"), 0);
  const json_t *c0 = json_array_get(json_object_get(cal, "rows"), 0);
  ck_assert(json_real_value(json_object_get(r0, "predicted_us")) !=
            json_real_value(json_object_get(c0, "predicted_us")));
  json_decref(cal);
  json_decref(got);
  json_decref(rec);
}
END_TEST

START_TEST(explicit_calibration_overrides_the_record) {
  json_t *cal = load_record("calibrated.json");
  char spec[512];
  snprintf(spec, sizeof spec, "--spec=%s/../profiles/H100-SXM.spec.json", AV_TEST_DIR);
  json_t *got = offline("uncalibrated.json", spec, "forced");
  ck_assert(!uncalibrated(got));
  same_predictions(cal, got);
  json_decref(got);
  json_decref(cal);
}
END_TEST

/* validate's table shows each auto row's choice and predicted margin, and validation.json
 * and .csv carry them, as auto's verdict in the row's parameters says (set 2's remeasured
 * thoughts-583363: one batch, auto among 11 schedulers). */
START_TEST(auto_rows_show_their_choice) {
  char rec[512], exp[512], dir[512], so[512], se[512];
  snprintf(rec, sizeof rec, "%s/../results/h100/validation/heldout2/remeasured/run1.json",
           AV_TEST_DIR);
  snprintf(exp, sizeof exp, "%s/../results/h100/validation/heldout2/remeasured/experiment.json",
           AV_TEST_DIR);
  snprintf(dir, sizeof dir, "%s/auto", g_tmp);
  snprintf(so, sizeof so, "%s/auto.stdout", g_tmp);
  snprintf(se, sizeof se, "%s/auto.stderr", g_tmp);
  static char bin[] = AV_BINARY_DIR "/anvil";
  char *argv[] = {bin, "validate", "--offline", rec, exp, "--out", dir, NULL};
  ck_assert_int_eq(av_test_spawn(NULL, argv, so, se), 0);
  char path[600];
  snprintf(path, sizeof path, "%s/validation.json", dir);
  json_t *doc = json_load_file(path, 0, NULL);
  ck_assert_ptr_nonnull(doc);
  int autos = 0;
  char *out = av_test_read_file(so);
  snprintf(path, sizeof path, "%s/validation.csv", dir);
  char *csv = av_test_read_file(path);
  ck_assert_msg(strstr(csv, ",ctas,floor_datasheet_us,auto_chose,auto_margin\n"), "header: %.300s",
                csv);
  const json_t *rows = json_object_get(doc, "rows");
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *r = json_array_get(rows, i);
    const char *params = json_string_value(json_object_get(r, "params"));
    const char *chose = json_string_value(json_object_get(r, "auto_chose"));
    if (strcmp(json_string_value(json_object_get(r, "scheduler")), "auto") != 0) {
      ck_assert_ptr_null(chose);
      continue;
    }
    autos++;
    char want[300];
    const char *c = strstr(params, "chose="), *m = strstr(params, ",margin=");
    ck_assert_msg(c && m && chose, "params %s", params);
    snprintf(want, sizeof want, "%.*s", (int)(m - c - 6), c + 6);
    ck_assert_str_eq(chose, want);
    const double margin = json_number_value(json_object_get(r, "auto_margin"));
    ck_assert_double_eq_tol(margin, atof(m + 8), 1e-12);
    snprintf(want, sizeof want, "auto\u2192%s (%+.1f %%)\n", chose, 100 * margin);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    snprintf(want, sizeof want, ",%s,%.4f\n", chose, margin);
    ck_assert_msg(strstr(csv, want), "no '%s' in:\n%s", want, csv);
  }
  ck_assert_int_eq(autos, 1);
  free(csv);
  free(out);
  json_decref(doc);
}
END_TEST

int main(void) {
  Suite *s = suite_create("offline");
  TCase *tc = tcase_create("modes");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, calibrated_record_reproduces);
  tcase_add_test(tc, uncalibrated_record_keeps_its_mode);
  tcase_add_test(tc, explicit_calibration_overrides_the_record);
  tcase_add_test(tc, auto_rows_show_their_choice);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
