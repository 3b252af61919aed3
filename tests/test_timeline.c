/* Timelines (sim/timeline.c): every scheduler's plan of the quickstart's deepest trees is
 * simulated and written as Chrome Trace JSON, which must nest: on one (process, thread) no two
 * events partly overlap (trace viewers stack a thread's events and misdraw the rest), and
 * every CTA keeps its SM and times. Co-resident CTAs of an SM must land on different slots. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_util.h"
#include "pipeline/experiment.h"
#include "proofs/proofs.h"
#include "tests/support.h"

typedef struct ev {
  long long pid, tid, sm;
  double ts, end;
} ev_t;

static int cmp_ev(const void *a, const void *b) {
  const ev_t *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Checks the written file; returns how many of its threads share an SM with another thread
 * of their launch (co-residency the slots separated). */
static int check_file(const char *path, const av_timeline_t *tl, const char *what) {
  json_error_t je;
  json_t *doc = json_load_file(path, 0, &je);
  ck_assert_msg(doc != NULL, "%s: %s", path, je.text);
  json_t *all = json_object_get(doc, "traceEvents");
  ev_t *ev = calloc(json_array_size(all) + 1, sizeof *ev);
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(all); i++) {
    json_t *e = json_array_get(all, i);
    if (strcmp(json_string_value(json_object_get(e, "ph")), "X") != 0) continue;
    ev_t *x = &ev[n++];
    x->pid = json_integer_value(json_object_get(e, "pid"));
    x->tid = json_integer_value(json_object_get(e, "tid"));
    x->sm = json_integer_value(json_object_get(json_object_get(e, "args"), "sm"));
    x->ts = json_number_value(json_object_get(e, "ts"));
    x->end = x->ts + json_number_value(json_object_get(e, "dur"));
  }
  ck_assert_uint_eq(n, (size_t)tl->n);
  qsort(ev, n, sizeof *ev, cmp_ev);
  int shared = 0;
  for (size_t i = 1; i < n; i++) {
    const ev_t *a = &ev[i - 1], *b = &ev[i];
    if (a->pid != b->pid || a->tid != b->tid) {
      shared += a->pid == b->pid && a->sm == b->sm;
      continue;
    }
    ck_assert_int_eq(a->sm, b->sm);
    ck_assert_msg(b->ts >= a->end - 1e-9, "%s: launch %lld thread %lld: [%.4f, %.4f] and "
                  "[%.4f, %.4f] partly overlap", what, a->pid, a->tid, a->ts, a->end, b->ts,
                  b->end);
  }
  free(ev);
  json_decref(doc);
  return shared;
}

START_TEST(timelines_nest) {
  av_error_t err;
  av_error_clear(&err);
  av_experiment_t *e = NULL;
  AV_CK_OK(av_experiment_load("experiments/quickstart.json", &e, &err), &err);
  av_variants_t *vs = av_test_variants(&e->gpus[0], &e->heads[0]);
  char path[64];
  snprintf(path, sizeof path, "/tmp/anvil_timeline_%ld.json", (long)getpid());
  int shared = 0;
  for (int bi = 0; bi < e->n_batches; bi += 4) {
    const av_exp_batch_t *b = &e->batches[bi];
    av_costmodel_t *cost = NULL;
    AV_CK_OK(av_cli_cost_create(e->cost_ops, &e->cost_params, &e->gpus[0], &b->w->heads, vs,
                                &cost, &err), &err);
    for (int si = 0; si < e->n_scheds; si++) {
      av_sched_ctx_t ctx = {.workload = b->w, .gpu = &e->gpus[0], .variants = vs, .cost = cost};
      av_plan_t *plan = NULL;
      av_sim_result_t res;
      memset(&res, 0, sizeof res);
      av_timeline_t tl = {0};
      av_sim_config_t cfg = {.model = e->sim, .record_timeline = 1};
      AV_CK_OK(av_scheduler_plan(e->scheds[si].ops, &e->scheds[si].params, &ctx, &plan, &err),
               &err);
      AV_CK_OK(
          av_sim_run(&cfg, &(av_sim_input_t){plan, b->w, &e->gpus[0], vs, cost}, &res, &tl, &err),
          &err);
      AV_CK_OK(av_timeline_write_chrome(&tl, plan, path, &err), &err);
      char what[256];
      snprintf(what, sizeof what, "%s/%s", b->name, e->scheds[si].label);
      shared += check_file(path, &tl, what);
      av_timeline_free(&tl);
      av_sim_result_free(&res);
      av_plan_destroy(plan);
    }
    av_costmodel_destroy(cost);
  }
  remove(path);
  /* The plans do run co-resident CTAs, so the slots were needed. */
  ck_assert_int_gt(shared, 0);
  av_variants_destroy(vs);
  av_experiment_destroy(e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("timeline");
  TCase *tc = tcase_create("chrome");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, timelines_nest);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
