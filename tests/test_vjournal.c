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
#include "pipeline/files.h"
#include "pipeline/validate.h"
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

/* Rows of batch b for both schedulers, with values no two batches share. */
static void add_batch(av_vreport_t *rep, int b) {
  for (int s = 0; s < 2; s++) {
    av_vrow_t *x = av_vreport_add(rep);
    x->batch = b, x->sched = s, x->predicted_us = 10.0 / 3 + s + b, x->measured_us = 4.25 + b;
    x->min_us = 4, x->max_us = 5 + b, x->max_rel_err = 1e-7, x->ctas = 12 + b;
    snprintf(x->params, sizeof x->params, "splits=%d", s + 2);
  }
}

static char *slurp(const char *path) {
  av_error_t err;
  av_error_clear(&err);
  char *t = av_file_read(path, &err);
  ck_assert_msg(t != NULL, "%s", err.message);
  return t;
}

/* `anvil validate --devices`: the journals of shards 0/2 and 1/2 merge into the journal one
 * process writes of the same rows, byte for byte, so the report made from it is the same; a
 * batch in two shards and a shard of another device are refused, and a batch in no shard
 * is counted. */
START_TEST(shard_journals_merge_into_one) {
  av_experiment_t *e = experiment("v");
  char one[] = "/tmp/anvil_vjournal_one_XXXXXX", s0[] = "/tmp/anvil_vjournal_s0_XXXXXX",
       s1[] = "/tmp/anvil_vjournal_s1_XXXXXX", merged[] = "/tmp/anvil_vjournal_m_XXXXXX";
  char *paths[] = {one, s0, s1, merged};
  for (int i = 0; i < 4; i++) close(mkstemp(paths[i]));
  av_error_t err;
  av_error_clear(&err);
  av_vjournal_t *j = NULL;
  /* one process: both batches */
  av_vreport_t rep;
  report(&rep, e, "NVIDIA H200");
  AV_CK_OK(av_vjournal_open(one, &rep, 0, &j, &err), &err);
  for (int b = 0; b < 2; b++) {
    int first = rep.n;
    add_batch(&rep, b);
    AV_CK_OK(av_vjournal_append(j, b, &rep, first, &err), &err);
  }
  av_vjournal_close(j);
  /* two shards, each its batch; merged in the order the shards are given */
  for (int k = 0; k < 2; k++) {
    av_vreport_t part;
    report(&part, e, "NVIDIA H200");
    AV_CK_OK(av_vjournal_open(k ? s1 : s0, &part, 0, &j, &err), &err);
    add_batch(&part, k);
    AV_CK_OK(av_vjournal_append(j, k, &part, 0, &err), &err);
    av_vjournal_close(j);
    av_vreport_free(&part);
  }
  const char *shards[] = {s1, s0};
  int missing = -1;
  AV_CK_OK(av_vjournal_merge(shards, 2, merged, &rep, &missing, &err), &err);
  ck_assert_int_eq(missing, 0);
  char *a = slurp(one), *b = slurp(merged);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  /* one shard alone: the other batch is missing */
  AV_CK_OK(av_vjournal_merge(shards, 1, merged, &rep, &missing, &err), &err);
  ck_assert_int_eq(missing, 1);
  /* the same batch twice */
  const char *twice[] = {s0, one};
  ck_assert_int_eq(av_vjournal_merge(twice, 2, merged, &rep, &missing, &err), AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "batch 0 is also in"));
  /* a shard of another device */
  av_vreport_t other;
  report(&other, e, "NVIDIA A100");
  av_error_clear(&err);
  ck_assert_int_eq(av_vjournal_merge(shards, 2, merged, &other, &missing, &err),
                   AV_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(err.message, "another validation"));
  av_vreport_free(&rep);
  av_experiment_destroy(e);
  for (int i = 0; i < 4; i++) remove(paths[i]);
}
END_TEST

/* --devices' shards: every batch in exactly one shard, the shards' bytes within 25 % of each
 * other on an experiment whose heads alternate light and heavy (every other batch to each
 * shard would give one shard 40 of every 56 KV heads), and the same split every time. */
START_TEST(shards_share_the_bytes) {
  const char *text =
      "{\"name\": \"mixed\", \"heads\": [[32, 32], [16, 8], [32, 8], [64, 8]], "
      "\"workloads\": [{\"kind\": \"levels\", \"B\": [1, 4], \"L\": [4096, 512]}, "
      "{\"kind\": \"levels\", \"B\": [1, 8], \"L\": [2048, 256]}, "
      "{\"kind\": \"levels\", \"B\": [1, 2], \"L\": [1024, 64]}], "
      "\"schedulers\": [\"query_centric\"]}";
  json_t *root = json_loads(text, 0, NULL);
  av_error_t err;
  av_error_clear(&err);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_from_json(root, "mixed.json", &e, &err), &err);
  json_decref(root);
  ck_assert_int_eq(e->n_batches, 12);
  int a[12], again[12];
  ck_assert_int_eq(av_validate_shard_assign(e, 2, a), AV_OK);
  ck_assert_int_eq(av_validate_shard_assign(e, 2, again), AV_OK);
  double load[2] = {0, 0};
  for (int b = 0; b < 12; b++) {
    ck_assert(a[b] == 0 || a[b] == 1);
    ck_assert_int_eq(a[b], again[b]);
    const av_workload_t *w = e->batches[b].w;
    double tokens = 0;
    for (int32_t u = 0; u < w->n_nodes; u++) tokens += (double)w->nodes[u].kv_len_tokens;
    load[a[b]] += tokens * w->heads.hkv;
  }
  const double hi = load[0] > load[1] ? load[0] : load[1], lo = load[0] + load[1] - hi;
  ck_assert_msg(hi <= 1.25 * lo, "shards' KV %.0f and %.0f", load[0], load[1]);
  av_experiment_destroy(e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("vjournal");
  TCase *tc = tcase_create("vjournal");
  tcase_add_test(tc, resume_takes_finished_batches);
  tcase_add_test(tc, shard_journals_merge_into_one);
  tcase_add_test(tc, shards_share_the_bytes);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
