/* The journal of `anvil validate` (pipeline/validate_journal.h), without a GPU: a finished
 * batch's rows come back exactly (a missing replay stays NaN), a batch not journaled is not
 * taken, a line cut short by a kill is dropped, and a journal of another device or
 * experiment is refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/experiment.h"
#include "pipeline/validate_journal.h"
#include "tests/support.h"

static av_experiment_t *experiment(const char *name) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"name\": \"%s\", \"workloads\": [{\"kind\": \"levels\", \"B\": [1, 4], \"L\": "
           "[128, 32]}, {\"kind\": \"levels\", \"B\": [1, 2], \"L\": [64, 16]}], "
           "\"schedulers\": [\"query_centric\", \"node_naive\"]}",
           name);
  json_t *root = json_loads(text, 0, NULL);
  av_error_t err;
  av_error_clear(&err);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_from_json(root, "test.json", &e, &err), &err);
  json_decref(root);
  return e;
}

static void report(av_vreport_t *rep, const av_experiment_t *e, const char *device) {
  memset(rep, 0, sizeof *rep);
  rep->e = e;
  rep->repeats = 20;
  snprintf(rep->device, sizeof rep->device, "%s", device);
  snprintf(rep->spec, sizeof rep->spec, "gpus/H200-SXM.json (uncalibrated)");
}

START_TEST(resume_takes_finished_batches) {
  char path[] = "/tmp/anvil_vjournal_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  av_experiment_t *e = experiment("v");
  av_vreport_t rep;
  report(&rep, e, "NVIDIA H200");
  av_error_t err;
  av_error_clear(&err);
  av_vjournal_t *j = NULL;
  AV_CK_OK(av_vjournal_open(path, &rep, 0, &j, &err), &err);
  for (int s = 0; s < 2; s++) {
    av_vrow_t *x = av_vreport_add(&rep);
    x->batch = 0, x->sched = s, x->predicted_us = 10.0 / 3 + s, x->measured_us = 4.25;
    x->min_us = 4, x->max_us = 5, x->max_rel_err = 1e-7, x->ctas = 12, x->same_as = s ? 0 : -1;
    snprintf(x->params, sizeof x->params, "split=fixed,splits=%d", s + 2);
  }
  AV_CK_OK(av_vjournal_append(j, 0, &rep, 0, &err), &err);
  av_vjournal_close(j);
  /* a kill in the middle of the next batch's line */
  FILE *f = fopen(path, "a");
  fputs("{\"batch\": 1, \"rows\": [{\"batch\"", f);
  fclose(f);

  av_vreport_t again;
  report(&again, e, "NVIDIA H200");
  AV_CK_OK(av_vjournal_open(path, &again, 1, &j, &err), &err);
  ck_assert_int_eq(av_vjournal_take(j, 1, &again), 0);
  ck_assert_int_eq(av_vjournal_take(j, 0, &again), 1);
  ck_assert_int_eq(again.n, 2);
  for (int s = 0; s < 2; s++) {
    const av_vrow_t *x = &rep.rows[s], *y = &again.rows[s];
    ck_assert(x->predicted_us == y->predicted_us && x->measured_us == y->measured_us &&
              x->max_rel_err == y->max_rel_err && x->ctas == y->ctas &&
              x->same_as == y->same_as && isnan(y->replayed_us) &&
              strcmp(x->params, y->params) == 0);
  }
  av_vjournal_close(j);

  /* another device: refused, naming the file */
  av_vreport_t other;
  report(&other, e, "NVIDIA A100");
  ck_assert_int_eq(av_vjournal_open(path, &other, 1, &j, &err), AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.source, "anvil_vjournal_"));
  ck_assert_ptr_nonnull(strstr(err.message, "another validation"));
  /* another experiment: refused too */
  av_experiment_t *e2 = experiment("w");
  report(&other, e2, "NVIDIA H200");
  av_error_clear(&err);
  ck_assert_int_eq(av_vjournal_open(path, &other, 1, &j, &err), AV_ERR_MISMATCH);
  av_vreport_free(&rep);
  av_vreport_free(&again);
  av_experiment_destroy(e2);
  av_experiment_destroy(e);
  remove(path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("vjournal");
  TCase *tc = tcase_create("vjournal");
  tcase_add_test(tc, resume_takes_finished_batches);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
