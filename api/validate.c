/* anvil_validate: validation with its files (pipeline/validate_files.h) behind the public
 * API; the report handed over as public rows and statistics. */
#include "anvil/validate.h"

#include <stdio.h>
#include <stdlib.h>

#include "api/api_internal.h"
#include "pipeline/validate_files.h"
#include "selectors/auto.h"

typedef struct validate_cb {
  const anvil_validate_options_t *o;
  anvil_validate_row_fn row;
  void *user;
} validate_cb_t;

static void on_note(int kind, const char *text, void *user) {
  const validate_cb_t *cb = user;
  cb->o->on_note(kind, text, cb->user);
}

/* The public hook's error as the library's: its one line, already formatted. */
static int run_shards(const char *dir, int *n_shards, void *user, av_error_t *err) {
  const validate_cb_t *cb = user;
  anvil_error_t e = {0};
  int rc = cb->o->run_shards(dir, n_shards, cb->user, &e);
  if (!rc) return AV_OK;
  return av_error_set(err, e.code ? e.code : rc, NULL, NULL, "%s", e.message);
}

static int hand_rows(const av_vreport_t *r, const validate_cb_t *cb, av_error_t *err) {
  const av_experiment_t *e = r->e;
  for (int i = 0; cb->row && i < r->n; i++) {
    const av_vrow_t *x = &r->rows[i];
    const av_heads_t *h = &e->batches[x->batch].w->heads;
    char shown[512];
    const char *label = e->scheds[x->sched].label;
    if (e->scheds[x->sched].ops->flags & AV_SCHED_SIMULATES_OTHERS)
      av_auto_verdict_text(label, x->params, shown, sizeof shown);  /* auto→its choice */
    else
      snprintf(shown, sizeof shown, "%s", label);
    anvil_validate_row_t row = {
        .batch = e->batches[x->batch].name, .scheduler = label, .shown = shown,
        .q_heads = h->hq, .kv_heads = h->hkv, .floor_us = x->floor.us,
        .predicted_us = x->predicted_us, .measured_us = x->measured_us,
        .measured_min_us = x->min_us, .measured_max_us = x->max_us,
        .replayed_us = x->replayed_us, .max_rel_err = x->max_rel_err,
        .deterministic = x->deterministic, .ctas = x->ctas, .params = x->params,
        .same_as = x->same_as >= 0 ? e->scheds[x->same_as].label : NULL};
    if (cb->row(&row, cb->user))
      return av_error_set(err, AV_ERR_USAGE, "validate", NULL,
                          "stopped by the row callback at row %d", i);
  }
  return AV_OK;
}

static void fill_overall(const av_vsummary_t *v, const av_experiment_t *e,
                         anvil_validate_summary_t *s) {
  s->overall = v->overall;
  if (!v->overall) return;
  s->pairs = v->s.n;
  s->mape = v->s.mape;
  s->worst_ape = v->s.worst_ape;
  s->worst_batch = e->batches[v->worst_batch].name;
  s->worst_scheduler = e->scheds[v->worst_sched].label;
  s->spearman = v->s.spearman;
  s->kendall = v->s.kendall;
  s->best_agree = v->s.agree;
  s->n_batches = v->s.n_batches;
  s->regret_mean = v->s.regret_mean;
  s->regret_max = v->s.regret_max;
  s->auto_batches = v->s.focus_batches;
  s->auto_within = v->s.focus_within;
  s->auto_within_frac = v->s.focus_frac;
}

static int on_done(const av_vdone_t *d, void *user, av_error_t *err) {
  const validate_cb_t *cb = user;
  int rc = hand_rows(d->rep, cb, err);
  if (rc || !cb->o->on_summary) return rc;
  const av_experiment_t *e = d->rep->e;
  av_vsummary_t v;
  if ((rc = av_vreport_summarize(d->rep, &v, err))) return rc;
  anvil_validate_scheduler_t *ks = calloc((size_t)v.n_sched_stats + 1, sizeof *ks);
  if (!ks) {
    av_vsummary_free(&v);
    return av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  }
  for (int k = 0; k < v.n_sched_stats; k++)
    ks[k] = (anvil_validate_scheduler_t){
        .scheduler = e->scheds[v.sched_stats[k].sched].label, .pairs = v.sched_stats[k].pairs,
        .mape = v.sched_stats[k].mape, .worst_ape = v.sched_stats[k].worst_ape,
        .spearman = v.sched_stats[k].spearman};
  anvil_validate_summary_t s = {
      .experiment = e->name, .device = d->rep->device, .spec = d->rep->spec, .dir = d->dir,
      .offline = d->offline, .record = d->record, .changed_plans = d->changed_plans,
      .auto_switched = d->auto_switched, .rows = v.any ? d->rep->n : 0,
      .n_schedulers = v.n_sched_stats, .schedulers = ks,
      .dispatch_pairs = v.dispatch_pairs, .cost_pairs = v.cost_pairs,
      .dispatch_mape = v.dispatch_mape, .cost_mape = v.cost_mape};
  fill_overall(&v, e, &s);
  cb->o->on_summary(&s, cb->user);
  free(ks);
  av_vsummary_free(&v);
  return AV_OK;
}

int anvil_validate(const anvil_validate_options_t *o, anvil_validate_row_fn fn, void *user,
                   anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  validate_cb_t cb = {o, fn, user};
  av_validate_files_opts_t v = {
      .experiment = o->experiment, .offline = o->offline, .out = o->out_dir,
      .trace_of = o->trace_of, .gpu_spec = o->gpu_spec, .spec = o->spec, .trace = o->trace,
      .no_cal = o->no_calibration, .resume = o->resume,
      .repeats = o->repeats > 0 ? o->repeats : 20,
      .shard = o->shard_count ? o->shard_index : 0,
      .shards = o->shard_count ? o->shard_count : 1, .command = o->command,
      .run_shards = o->run_shards ? run_shards : NULL, .note = o->on_note ? on_note : NULL,
      .done = on_done};
  int rc = av_validate_files(&v, &cb, &e);
  return av__api_error(err, &e, rc);
}
