/* Offline re-validation (docs/validation.md#re-predicting-offline): the measured times of a
 * recorded `anvil validate` report stay as they are; every plan is made again from the
 * experiment (schedulers are deterministic, and none of them looks at the simulator except
 * `auto`), simulated with the current engine and spec, and the statistics are recomputed.
 * `auto` ranks its candidates with the simulator, so a changed simulator may change its
 * choice; its measured time is then the recorded measurement of the scheduler it now picks
 * (the same plan: auto plans each candidate with default parameters, as the experiment's
 * first row of that scheduler does). This is what lets the simulator be recalibrated
 * without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proofs/proofs.h"
#include "pipeline/experiment.h"
#include "pipeline/validate_offline.h"
#include "pipeline/validate_report.h"
#include "core/escape.h"
#include "core/json_util.h"
#include "profiler/profile.h"
#include "selectors/auto.h"

typedef struct octx {
  const av_voffline_opts_t *o;
  json_t *rec;
  const json_t *rows;
  av_experiment_t *e;
  av_variants_t *vs;
  av_vreport_t rep;
  int changed_plans, auto_switched;
} octx_t;

static const char *jstr(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The candidate auto's plan parameters name as chosen ("" when none). */
static void auto_choice(const char *params, char *out, size_t n) {
  double margin;
  av_auto_verdict_parse(params, out, n, &margin);
}

static int load(octx_t *c, av_error_t *err) {
  int rc = av_json_load_file(c->o->record, &c->rec, err);
  if (rc) return rc;
  c->rows = json_object_get(c->rec, "rows");
  if (!json_is_array(c->rows))
    return av_error_set(err, AV_ERR_SCHEMA, c->o->record, "rows",
                        "expected the array of (batch, scheduler) rows of anvil validate");
  const char *exp = c->o->exp ? c->o->exp : jstr(c->rec, "file");
  char path[1024];
  snprintf(path, sizeof path, "%s", exp);
  if (!c->o->exp && access(path, R_OK) != 0)
    snprintf(path, sizeof path, "%s/%s", av_data_dir(), exp);
  if ((rc = av_experiment_load(path, &c->e, err))) return rc;
  size_t want = (size_t)c->e->n_batches * (size_t)c->e->n_scheds;
  if (json_array_size(c->rows) != want)
    return av_error_set(err, AV_ERR_MISMATCH, c->o->record, "rows",
                        "%zu rows, but %s has %d batches x %d schedulers = %zu",
                        json_array_size(c->rows), path, c->e->n_batches, c->e->n_scheds, want);
  c->rep.e = c->e;
  snprintf(c->rep.device, sizeof c->rep.device, "%.200s (recorded)", jstr(c->rec, "device"));
  snprintf(c->rep.command, sizeof c->rep.command, "%s", c->o->command);
  c->rep.repeats = (int)jnum(c->rec, "repeats");
  /* An experiment listing several GPUs was validated on one of them: the GPU its spec names
   * (as `anvil validate` keeps only the device's). */
  const char *sp_rec = jstr(c->rec, "spec"), *base = strrchr(sp_rec, '/');
  base = base ? base + 1 : sp_rec;
  const size_t blen = strcspn(base, ". ");
  for (int j = 1; j < c->e->n_gpus; j++)
    if (strlen(c->e->gpus[j].name) == blen && strncmp(c->e->gpus[j].name, base, blen) == 0) {
      c->e->gpus[0] = c->e->gpus[j];
      c->e->n_gpus = 1;
    }
  av_gpu_t *g = &c->e->gpus[0];
  /* The record's own calibration mode unless told otherwise: a record predicted with the
   * datasheet spec is re-predicted with it, even where a calibrated spec exists now. */
  const int rec_uncal = strstr(jstr(c->rec, "spec"), "(uncalibrated)") != NULL;
  if (c->o->no_cal || (rec_uncal && !c->o->spec)) {
    snprintf(c->rep.spec, sizeof c->rep.spec, "gpus/%s.json (uncalibrated)", g->name);
  } else {
    char sp[1024];
    if (c->o->spec) snprintf(sp, sizeof sp, "%s", c->o->spec);
    else snprintf(sp, sizeof sp, "%s/profiles/%s.spec.json", av_data_dir(), g->name);
    if (c->o->spec || access(sp, R_OK) == 0) {
      av_gpu_t cal;
      if ((rc = av_profile_load_spec(sp, &cal, err))) return rc;
      if (strcmp(cal.name, g->name) != 0 || cal.sm_count != g->sm_count)
        return av_error_set(err, AV_ERR_MISMATCH, sp, NULL,
                            "calibrated spec is for '%s', the experiment for '%s'", cal.name,
                            g->name);
      *g = cal;
      snprintf(c->rep.spec, sizeof c->rep.spec, "%.500s", sp);
    } else {
      snprintf(c->rep.spec, sizeof c->rep.spec, "gpus/%s.json (uncalibrated)", g->name);
    }
  }
  c->vs = av_variants_load(NULL, err);
  return c->vs ? AV_OK : (err->code ? err->code : AV_ERR_INTERNAL);
}

/* The recorded row of (bi, si), after checking it is that pair. */
static int recorded(const octx_t *c, int bi, int si, const json_t **row, av_error_t *err) {
  *row = json_array_get(c->rows, (size_t)bi * (size_t)c->e->n_scheds + (size_t)si);
  if (strcmp(jstr(*row, "batch"), c->e->batches[bi].name) != 0 ||
      strcmp(jstr(*row, "scheduler"), c->e->scheds[si].label) != 0)
    return av_error_set(err, AV_ERR_MISMATCH, c->o->record, "rows",
                        "row %d is %s x %s, the experiment's pair is %s x %s",
                        bi * c->e->n_scheds + si, jstr(*row, "batch"), jstr(*row, "scheduler"),
                        c->e->batches[bi].name, c->e->scheds[si].label);
  return AV_OK;
}

/* auto picked `chose`: the recorded row of the first scheduler of that name in the batch. */
static int auto_measured(const octx_t *c, int bi, const char *chose, const json_t **row,
                         av_error_t *err) {
  for (int sj = 0; sj < c->e->n_scheds; sj++)
    if (strcmp(c->e->scheds[sj].ops->name, chose) == 0) return recorded(c, bi, sj, row, err);
  return av_error_set(err, AV_ERR_MISMATCH, c->o->record, c->e->batches[bi].name,
                      "auto now picks '%s', which the experiment did not measure", chose);
}

static int pair(octx_t *c, int bi, int si, const av_costmodel_t *cost, av_vseen_t *sp,
                av_error_t *err) {
  const av_exp_batch_t *b = &c->e->batches[bi];
  const av_exp_sched_t *s = &c->e->scheds[si];
  av_sched_ctx_t ctx = {.workload = b->w, .gpu = &c->e->gpus[0], .variants = c->vs,
                        .cost = cost, .max_items = c->e->limits.plan_items,
                        .launch_model = c->e->launch, .kv_copy = c->e->kv_copy};
  av_sim_config_t cfg = {.model = c->e->sim, .kv_copy = c->e->kv_copy};
  av_plan_t *plan = NULL;
  av_sim_result_t res;
  memset(&res, 0, sizeof res);
  const json_t *row = NULL, *meas = NULL;
  av_vrow_t *x = av_vreport_add(&c->rep);
  int rc = x ? recorded(c, bi, si, &row, err)
             : av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  if (!rc) rc = av_scheduler_plan(s->ops, &s->params, &ctx, &plan, err);
  if (!rc) rc = av_plan_check(plan, b->w, err);
  if (!rc)
    rc = av_sim_run(&cfg, &(av_sim_input_t){plan, b->w, &c->e->gpus[0], c->vs, cost}, &res, NULL,
                    err);
  const int twin = rc ? -1 : av_vseen_find(sp, plan);
  if (!rc) {
    meas = row;
    if (s->ops->flags & AV_SCHED_SIMULATES_OTHERS) {
      char now[96], was[96];
      auto_choice(plan->params, now, sizeof now);
      auto_choice(jstr(row, "params"), was, sizeof was);
      if (strcmp(now, was) != 0) {
        c->auto_switched++;
        /* a plan another row made (any parameters) shares that row's measurement below */
        if (twin < 0) rc = auto_measured(c, bi, now, &meas, err);
      }
    } else if (strcmp(plan->params, jstr(row, "params")) != 0) {
      c->changed_plans++;
      char b1[AV_ESCAPE_NAME_SIZE], b2[AV_ESCAPE_NAME_SIZE], b3[AV_ESCAPE_NAME_SIZE];
      av_vnote(c->o->note, c->o->user, AV_VNOTE_WARNING,
               "%s x %s planned with '%s', recorded '%s'", av_escape_text(b->name, b1, sizeof b1), av_escape_text(s->label, b2, sizeof b2),
               plan->params, av_escape_text(jstr(row, "params"), b3, sizeof b3));
    }
  }
  if (!rc && twin >= 0) {
    /* the same plan as an earlier row's: its measurement, as validate on the GPU does */
    x->batch = bi;
    x->sched = si;
    av_workload_floor(b->w, &c->e->gpus[0], &x->floor);
    x->predicted_us = res.makespan_us;
    av_vrow_share(x, &c->rep.rows[sp->row[twin]]);
    snprintf(x->params, sizeof x->params, "%s", plan->params);
  } else if (!rc) {
    x->batch = bi;
    x->sched = si;
    av_workload_floor(b->w, &c->e->gpus[0], &x->floor);
    x->predicted_us = res.makespan_us;
    x->measured_us = jnum(meas, "measured_us");
    x->min_us = jnum(meas, "measured_min_us");
    x->max_us = jnum(meas, "measured_max_us");
    x->replayed_us = jnum(meas, "replayed_us");
    x->max_rel_err = jnum(meas, "max_rel_err");
    x->unwritten = (int64_t)jnum(meas, "unwritten");
    x->deterministic = json_is_true(json_object_get(meas, "deterministic"));
    x->ctas = (int32_t)jnum(meas, "ctas");
    snprintf(x->params, sizeof x->params, "%s", plan->params);
  }
  if (rc && err->code && !err->path[0])
    snprintf(err->path, sizeof err->path, "%.100s x %.60s", b->name, s->label);
  av_sim_result_free(&res);
  if (!rc && twin < 0)
    av_vseen_keep(sp, plan, (int)(x - c->rep.rows));
  else
    av_plan_destroy(plan);
  return rc;
}

static int run_all(octx_t *c, av_error_t *err) {
  int rc = AV_OK;
  for (int bi = 0; bi < c->e->n_batches && !rc; bi++) {
    const av_exp_batch_t *b = &c->e->batches[bi];
    av_cost_env_t env = {.gpu = &c->e->gpus[0], .heads = &b->w->heads, .variants = c->vs};
    av_costmodel_t *cost = av_costmodel_create(c->e->cost_ops, &c->e->cost_params, &env, err);
    if (!cost) rc = err->code ? err->code : AV_ERR_INTERNAL;
    av_vseen_t sp = {0};
    if (!rc) rc = av_vseen_init(&sp, c->e->n_scheds, err);
    for (int si = 0; si < c->e->n_scheds && !rc; si++) rc = pair(c, bi, si, cost, &sp, err);
    av_vseen_free(&sp);
    av_costmodel_destroy(cost);
  }
  return rc;
}

int av_validate_offline(const av_voffline_opts_t *o, av_error_t *err) {
  octx_t c;
  memset(&c, 0, sizeof c);
  c.o = o;
  int rc = load(&c, err);
  if (!rc) rc = run_all(&c, err);
  if (!rc && o->out) rc = av_vreport_write(&c.rep, o->out, err);
  if (!rc && o->done) {
    av_vdone_t d = {.rep = &c.rep, .dir = o->out, .offline = 1, .record = o->record,
                    .changed_plans = c.changed_plans, .auto_switched = c.auto_switched};
    rc = o->done(&d, o->user, err);
  }
  av_vreport_free(&c.rep);
  av_variants_destroy(c.vs);
  av_experiment_destroy(c.e);
  json_decref(c.rec);
  return rc;
}
