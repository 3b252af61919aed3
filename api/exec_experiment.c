/* anvil_exec_experiment: `anvil exec` (pipeline/exec_experiment.h) behind the public API. */
#include "anvil/exec.h"

#include <string.h>

#include "api/api_internal.h"
#include "executor/executor.h"
#include "pipeline/exec_experiment.h"

_Static_assert((int)ANVIL_L2_FLUSH_NONE == (int)AV_FLUSH_NONE &&
                   (int)ANVIL_L2_FLUSH_WRITE == (int)AV_FLUSH_WRITE &&
                   (int)ANVIL_L2_FLUSH_READ == (int)AV_FLUSH_READ &&
                   (int)ANVIL_KV_COPY_TMA == (int)AV_KV_COPY_TMA &&
                   (int)ANVIL_KV_COPY_CP_ASYNC == (int)AV_KV_COPY_CP_ASYNC,
               "the public modes are the executor's");
_Static_assert(ANVIL_AUTOTUNE_MAX_K == AV_AUTOTUNE_MAX_K, "one autotune bound");

int anvil_l2_flush_from_name(const char *name) {
  int mode = -1;
  return av_exec_flush_parse(name, &mode) == 0 ? mode : -1;
}

int anvil_kv_copy_from_name(const char *name) {
  av_kv_copy_t c;
  return av_kv_copy_from_name(name, &c) == 0 ? (int)c : -1;
}

void anvil_exec_options_default(anvil_exec_options_t *o) {
  av_exec_opts_t eo;
  av_exec_opts_default(&eo);
  memset(o, 0, sizeof *o);
  o->kv_copy = ANVIL_KV_COPY_EXPERIMENT;
  o->warmup = eo.warmup;
  o->repeats = eo.repeats;
  o->verify = eo.verify;
  o->l2_flush = eo.flush_l2;
}

typedef struct exec_cb {
  const anvil_exec_options_t *o;
  anvil_exec_row_fn row;
  void *user;
} exec_cb_t;

static void on_note(const char *text, void *user) {
  const exec_cb_t *cb = user;
  cb->o->on_note(text, cb->user);
}

static void on_device(const char *device, const char *spec, void *user) {
  const exec_cb_t *cb = user;
  cb->o->on_device(device, spec, cb->user);
}

static void on_copy_bw(double copy_GBps, double read_GBps, void *user) {
  const exec_cb_t *cb = user;
  cb->o->on_copy_bw(copy_GBps, read_GBps, cb->user);
}

static void on_start(void *user) {
  const exec_cb_t *cb = user;
  cb->o->on_start(cb->user);
}

static int on_row(const av_exec_row_t *x, void *user, av_error_t *err) {
  const exec_cb_t *cb = user;
  if (!cb->row) return AV_OK;
  anvil_exec_candidate_t cand[AV_AUTOTUNE_MAX_K];
  const av_autotune_result_t *t = x->tune;
  for (int i = 0; t && i < t->k; i++)
    cand[i] = (anvil_exec_candidate_t){.name = t->cand[i].name,
                                       .predicted_us = t->cand[i].predicted_us,
                                       .measured_us = t->measured_us[i]};
  anvil_exec_row_t row = {
      .batch = x->batch, .scheduler = x->sched, .q_heads = x->heads.hq,
      .kv_heads = x->heads.hkv, .dtype = av_dtype_name(x->heads.dtype),
      .error = x->r ? NULL : x->error, .floor_fraction = x->floor_frac, .pass = x->pass,
      .tuned = t != NULL, .tune_from_cache = t && t->from_cache, .n_tune = t ? t->k : 0,
      .tune = cand, .tune_chose = t ? t->chose : NULL};
  if (x->r) {
    row.ctas = x->r->ctas;
    row.median_us = x->r->median_us;
    row.min_us = x->r->min_us;
    row.max_us = x->r->max_us;
    row.verified = x->r->verified;
    row.max_rel_err = x->r->max_rel_err;
    row.unwritten = x->r->unwritten;
    row.deterministic = x->r->deterministic;
  }
  if (cb->row(&row, cb->user))
    return av_error_set(err, AV_ERR_USAGE, "exec", NULL, "stopped by the row callback");
  return AV_OK;
}

int anvil_exec_experiment(const anvil_exec_options_t *o, anvil_exec_row_fn fn, void *user,
                          anvil_exec_summary_t *out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  exec_cb_t cb = {o, fn, user};
  av_exec_experiment_opts_t x = {
      .experiment = o->experiment, .plan = o->plan, .out = o->out, .csv = o->csv,
      .trace_dir = o->trace_dir, .only = o->only, .gpu_spec = o->gpu_spec,
      .autotune_cache = o->autotune_cache, .all_schedulers = o->all_schedulers,
      .copy_bw = o->copy_bw, .check_requests = o->check_requests, .autotune = o->autotune,
      .kv_copy = o->kv_copy,
      .eo = {.warmup = o->warmup, .repeats = o->repeats, .verify = o->verify,
             .flush_l2 = o->l2_flush},
      .hooks = {.note = o->on_note ? on_note : NULL, .device = o->on_device ? on_device : NULL,
                .copy_bw = o->on_copy_bw ? on_copy_bw : NULL,
                .start = o->on_start ? on_start : NULL, .row = on_row}};
  av_exec_summary_t s;
  int rc = av_exec_experiment(&x, &cb, &s, &e);
  if (out) *out = (anvil_exec_summary_t){.run = s.run, .failed = s.failed, .not_run = s.not_run};
  return av__api_error(err, &e, rc);
}
