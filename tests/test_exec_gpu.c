/* `anvil exec` plans for the experiment entry of the device's GPU spec (pipeline/exec_gpu.c), and
 * stops with a message naming the file, the key, the device, the listed specs and what to
 * do when the experiment has no such entry (docs/validation.md). Also the same rule through a
 * real experiment file's GPU list, and the `anvil exec` binary's checks that come before the
 * device (here: no GPU). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/exec_gpu.h"
#include "pipeline/experiment.h"
#include "core/json_util.h"
#include "tests/support.h"

static const char *const k_dev = "NVIDIA H200 (132 SMs, sm_90, 60 MiB L2, 140 GiB)";

static void set_names(av_gpu_t *g, int n, const char *const *names) {
  memset(g, 0, (size_t)n * sizeof *g);
  for (int i = 0; i < n; ++i) snprintf(g[i].name, sizeof g[i].name, "%s", names[i]);
}

START_TEST(test_index_found) {
  av_gpu_t g[3];
  const char *const names[] = {"A100-80GB-SXM", "H100-SXM", "H200-SXM"};
  set_names(g, 3, names);
  av_error_t err;
  av_error_clear(&err);
  /* every entry is found at its own index, not gpus[0] */
  for (int i = 0; i < 3; ++i) {
    int idx = -1;
    AV_CK_OK(av_exec_gpu_index(g, 3, "e.json", names[i], k_dev, &idx, &err), &err);
    ck_assert_int_eq(idx, i);
  }
  /* a single-GPU experiment of the device's GPU */
  int idx = -1;
  AV_CK_OK(av_exec_gpu_index(&g[2], 1, "e.json", "H200-SXM", k_dev, &idx, &err), &err);
  ck_assert_int_eq(idx, 0);
  /* before the device (only --gpu-spec known) */
  AV_CK_OK(av_exec_gpu_index(g, 3, "e.json", "H100-SXM", NULL, &idx, &err), &err);
  ck_assert_int_eq(idx, 1);
}
END_TEST

START_TEST(test_index_missing_one_gpu) {
  av_gpu_t g[1];
  const char *const names[] = {"A100-80GB-SXM"};
  set_names(g, 1, names);
  av_error_t err;
  av_error_clear(&err);
  int idx = 7;
  ck_assert_int_eq(av_exec_gpu_index(g, 1, "exp/a100.json", "H200-SXM", k_dev, &idx, &err),
                   AV_ERR_MISMATCH);
  ck_assert_int_eq(idx, 7); /* untouched */
  ck_assert_str_eq(err.source, "exp/a100.json");
  ck_assert_str_eq(err.path, "gpu");
  ck_assert_ptr_nonnull(strstr(err.message, k_dev));
  ck_assert_ptr_nonnull(strstr(err.message, "'H200-SXM'"));
  ck_assert_ptr_nonnull(strstr(err.message, "'A100-80GB-SXM'"));
  ck_assert_ptr_nonnull(strstr(err.message, "add \"H200-SXM\""));
  ck_assert_ptr_nonnull(strstr(err.message, "--gpu-spec"));
  ck_assert_int_eq(av_error_exit_class(err.code), 1); /* the user's input, exit 1 */
}
END_TEST

START_TEST(test_index_missing_several) {
  av_gpu_t g[2];
  const char *const names[] = {"A100-40GB-PCIe", "RTX-4090"};
  set_names(g, 2, names);
  av_error_t err;
  av_error_clear(&err);
  int idx;
  /* a name that is a prefix of a listed one is not that one */
  ck_assert_int_eq(av_exec_gpu_index(g, 2, "x.json", "RTX", k_dev, &idx, &err),
                   AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "gpus");
  ck_assert_ptr_nonnull(strstr(err.message, "'A100-40GB-PCIe', 'RTX-4090'"));
  /* before the device: the message is about --gpu-spec, with no device */
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_gpu_index(g, 2, "x.json", "H100-SXM", NULL, &idx, &err),
                   AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "--gpu-spec 'H100-SXM' is not a GPU of this"));
  ck_assert_ptr_null(strstr(err.message, "device is"));
  /* no spec at all is a caller's bug, not the user's */
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_gpu_index(g, 2, "x.json", "", k_dev, &idx, &err), AV_ERR_INTERNAL);
  /* an empty list (the loader never makes one, but no out-of-bounds read either) */
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_gpu_index(g, 0, "x.json", "H200-SXM", k_dev, &idx, &err),
                   AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "(none)"));
}
END_TEST

/* The rule on an experiment as the loader builds it (real gpus/ specs). */
START_TEST(test_index_from_experiment) {
  const char *text =
      "{\"name\": \"t\", \"gpus\": [\"A100-80GB-SXM\", \"H200-SXM\"],"
      " \"workloads\": [{\"kind\": \"levels\", \"B\": [1, 2], \"L\": [64, 16]}],"
      " \"schedulers\": [{\"name\": \"query_centric\"}]}";
  av_error_t err;
  av_error_clear(&err);
  json_t *root = NULL;
  AV_CK_OK(av_json_load_string(text, "t.json", &root, &err), &err);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_from_json(root, "t.json", &e, &err), &err);
  int idx = -1;
  AV_CK_OK(av_exec_gpu_index(e->gpus, e->n_gpus, e->path, "H200-SXM", k_dev, &idx, &err), &err);
  ck_assert_int_eq(idx, 1);
  ck_assert_int_eq(e->gpus[idx].sm_count, 132);
  ck_assert_int_eq(av_exec_gpu_index(e->gpus, e->n_gpus, e->path, "H100-SXM", k_dev, &idx, &err),
                   AV_ERR_MISMATCH);
  ck_assert_str_eq(err.source, "t.json");
  av_experiment_destroy(e);
  json_decref(root);
}
END_TEST

/* The `anvil exec` binary: --gpu-spec is checked before the device (so also here, without a
 * GPU), and a good command line reaches the device check. */
static int run_exec(char *const *args, char *err_text, size_t size) {
  char anvil[] = AV_BINARY_DIR "/anvil", err_path[] = "/tmp/anvil_exec_gpu_XXXXXX";
  int fd = mkstemp(err_path);
  if (fd < 0) return -2;
  close(fd);
  char *argv[16] = {anvil};
  int n = 1;
  while (args[n - 1] && n < 15) {
    argv[n] = args[n - 1];
    n++;
  }
  argv[n] = NULL;
  int rc = av_test_spawn(AV_TEST_DIR "/..", argv, NULL, err_path);
  char *s = av_test_read_file(err_path);
  snprintf(err_text, size, "%s", s ? s : "");
  free(s);
  remove(err_path);
  return rc;
}

START_TEST(test_exec_binary_checks) {
  char err[2048];
  char a0[] = "exec", a1[] = "experiments/quickstart.json", a2[] = "--gpu-spec",
       a3[] = "A100-80GB-SXM", a4[] = "H300";
  /* a known spec the experiment (H200-SXM) does not list */
  char *bad_list[] = {a0, a1, a2, a3, NULL};
  ck_assert_int_eq(run_exec(bad_list, err, sizeof err), 1);
  ck_assert_msg(strstr(err, "experiments/quickstart.json: gpu: --gpu-spec 'A100-80GB-SXM'"),
                "%s", err);
  /* an unknown spec lists the valid ones */
  char *bad_name[] = {a0, a1, a2, a4, NULL};
  ck_assert_int_eq(run_exec(bad_name, err, sizeof err), 1);
  ck_assert_msg(strstr(err, "exec: --gpu-spec: unknown GPU 'H300'; expected one of:"), "%s", err);
  ck_assert_msg(strstr(err, "H200-SXM"), "%s", err);
  /* good input reaches the device: without a GPU exit 1 saying so; with the H200 it is
   * identified and nothing runs (no batch is selected) */
  char a5[] = "--only", a6[] = "no-such-batch";
  char *good[] = {a0, a1, a5, a6, NULL};
  int rc = run_exec(good, err, sizeof err);
  ck_assert_msg(rc == 0 || rc == 1, "exit %d: %s", rc, err);
  if (rc == 1) ck_assert_msg(strstr(err, "CUDA"), "%s", err);
}
END_TEST

int main(void) {
  Suite *s = suite_create("exec_gpu");
  TCase *tc = tcase_create("pick");
  tcase_add_test(tc, test_index_found);
  tcase_add_test(tc, test_index_missing_one_gpu);
  tcase_add_test(tc, test_index_missing_several);
  tcase_add_test(tc, test_index_from_experiment);
  tcase_add_test(tc, test_exec_binary_checks);
  tcase_set_timeout(tc, 20);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
