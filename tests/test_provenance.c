/* Provenance (pipeline/provenance.h): SHA-256 against the FIPS 180-4 examples, the object
 * results.json and validation.json carry, and `anvil --version`. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/experiment.h"
#include "pipeline/provenance.h"
#include "tests/support.h"

static void sha_of(const char *text, size_t n, char hex[65]) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/anvil_sha_%ld", (long)getpid());
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i += strlen(text)) fputs(text, f);
  fclose(f);
  ck_assert_int_eq(av_sha256_file(path, hex), 0);
  remove(path);
}

START_TEST(sha256_known_answers) {
  char hex[65];
  sha_of("", 0, hex);
  ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  sha_of("abc", 3, hex);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* 56 bytes: the padding spills into a second block. */
  sha_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
  ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* One million 'a's, written in 1000-byte pieces: many blocks. */
  char thousand[1001];
  memset(thousand, 'a', 1000);
  thousand[1000] = '\0';
  sha_of(thousand, 1000000, hex);
  ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  ck_assert_int_ne(av_sha256_file("/nonexistent-anvil-file", hex), 0);
  ck_assert_str_eq(hex, "");
}
END_TEST

START_TEST(provenance_names_inputs) {
  av_error_t err;
  av_error_clear(&err);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_load("experiments/quickstart.json", &e, &err), &err);
  json_t *p = av_provenance_json(e);
  ck_assert_str_eq(json_string_value(json_object_get(p, "anvil_version")), av_version());
  const char *commit = json_string_value(json_object_get(p, "git_commit"));
  ck_assert(strcmp(commit, "unknown") == 0 || strlen(commit) >= 40);
  ck_assert_ptr_nonnull(json_string_value(json_object_get(p, "host")));
  json_t *spec = json_array_get(json_object_get(p, "gpu_specs"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(spec, "name")), "H200-SXM");
  char hex[65];
  ck_assert_int_eq(av_sha256_file(e->gpus[0].path, hex), 0);
  ck_assert_str_eq(json_string_value(json_object_get(spec, "sha256")), hex);
  ck_assert_uint_eq(strlen(json_string_value(json_object_get(p, "experiment_sha256"))), 64);
  ck_assert_ptr_null(json_object_get(p, "profiles")); /* roofline reads no profile */
  ck_assert_str_eq(json_string_value(json_object_get(p, "kv_copy")), "tma"); /* the default */
  json_decref(p);
  av_experiment_destroy(e);
}
END_TEST

/* How the kernels copy KV changes predictions (tests/test_boxes.c): an experiment's
 * "kv_copy" is carried to the run and recorded in its provenance. */
START_TEST(provenance_records_kv_copy) {
  av_error_t err;
  av_error_clear(&err);
  json_error_t je;
  json_t *doc = json_loads("{\"name\": \"copy\", \"gpu\": \"H200-SXM\", \"kv_copy\": "
                           "\"cp_async\", \"workloads\": [{\"kind\": \"levels\", "
                           "\"B\": [1, 4], \"L\": [128, 32]}], \"schedulers\": "
                           "[{\"name\": \"query_centric\"}]}",
                           JSON_REJECT_DUPLICATES, &je);
  ck_assert_msg(doc != NULL, "%s", je.text);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_from_json(doc, "copy.json", &e, &err), &err);
  ck_assert_int_eq(e->kv_copy, AV_KV_COPY_CP_ASYNC);
  json_t *p = av_provenance_json(e);
  ck_assert_str_eq(json_string_value(json_object_get(p, "kv_copy")), "cp_async");
  json_decref(p);
  av_experiment_destroy(e);
  json_decref(doc);
}
END_TEST

/* `anvil validate --offline` re-predicts recorded measurements with the profile cost model:
 * its validation.json names the spec file and the profile it read, with their hashes. */
START_TEST(validation_records_profile) {
  char dir[64], file[96];
  snprintf(dir, sizeof dir, "/tmp/anvil_prov_%ld", (long)getpid());
  snprintf(file, sizeof file, "%s/validation.json", dir);
  static char bin[] = AV_BINARY_DIR "/anvil", cmd[] = "validate", off[] = "--offline",
              rec[] = "results/h200/repro/across_gpus/validation.json", out[] = "--out";
  char *argv[] = {bin, cmd, off, rec, out, dir, NULL};
  ck_assert_int_eq(av_test_spawn(NULL, argv, NULL, NULL), 0);
  json_error_t je;
  json_t *doc = json_load_file(file, 0, &je);
  ck_assert_msg(doc != NULL, "%s: %s", file, je.text);
  json_t *p = json_object_get(doc, "provenance");
  ck_assert_str_eq(json_string_value(json_object_get(p, "anvil_version")), av_version());
  json_t *prof = json_array_get(json_object_get(p, "profiles"), 0);
  char hex[65];
  ck_assert_int_eq(av_sha256_file(json_string_value(json_object_get(prof, "path")), hex), 0);
  ck_assert_str_eq(json_string_value(json_object_get(prof, "sha256")), hex);
  json_t *spec = json_array_get(json_object_get(p, "gpu_specs"), 0);
  ck_assert_int_eq(av_sha256_file(json_string_value(json_object_get(spec, "path")), hex), 0);
  ck_assert_str_eq(json_string_value(json_object_get(spec, "sha256")), hex);
  json_decref(doc);
  char csv[96];
  snprintf(csv, sizeof csv, "%s/validation.csv", dir);
  remove(csv);
  remove(file);
  rmdir(dir);
}
END_TEST

START_TEST(version_option) {
  char out[64];
  snprintf(out, sizeof out, "/tmp/anvil_version_%ld", (long)getpid());
  static char bin[] = AV_BINARY_DIR "/anvil", opt[] = "--version";
  char *argv[] = {bin, opt, NULL};
  ck_assert_int_eq(av_test_spawn(NULL, argv, out, NULL), 0);
  char *text = av_test_read_file(out);
  remove(out);
  char want[128];
  snprintf(want, sizeof want, "anvil %s (git %s)\n", av_version(), av_git_commit());
  ck_assert_str_eq(text, want);
  free(text);
}
END_TEST

int main(void) {
  Suite *s = suite_create("provenance");
  TCase *tc = tcase_create("provenance");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, sha256_known_answers);
  tcase_add_test(tc, provenance_names_inputs);
  tcase_add_test(tc, provenance_records_kv_copy);
  tcase_add_test(tc, validation_records_profile);
  tcase_add_test(tc, version_option);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
