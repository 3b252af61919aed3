/* anvil_trace: the trace pipeline (pipeline/trace_run.h) behind the public API. */
#include "anvil/trace.h"

#include <string.h>

#include "api/api_internal.h"
#include "pipeline/trace_run.h"

void anvil_trace_options_default(anvil_trace_options_t *o) {
  av_trace_opts_t d;
  av_trace_opts_default(&d);
  memset(o, 0, sizeof *o);
  o->gpu = d.gpu;
  o->sim = d.sim;
  o->cost_model = d.models.cost;
  o->heads = (anvil_heads_t){.q_heads = d.heads.hq, .kv_heads = d.heads.hkv,
                             .head_dim = d.heads.head_dim, .dtype = ANVIL_DTYPE_FP16};
}

typedef struct trace_cb {
  anvil_trace_start_fn start;
  anvil_trace_row_fn fn;
  void *user;
} trace_cb_t;

static void on_start(const av_trace_start_t *s, void *user) {
  const trace_cb_t *cb = user;
  anvil_trace_start_t st = {.steps = s->steps, .scheduler = s->scheduler,
                            .cost_model = s->cost_model, .sim = s->sim, .gpu = s->gpu};
  cb->start(&st, cb->user);
}

static int on_row(const av_trace_row_t *r, void *user, av_error_t *err) {
  const trace_cb_t *cb = user;
  anvil_trace_row_t row = {.step = r->step, .steps = r->steps, .requests = r->requests,
                           .nodes = r->nodes, .items = r->items, .reused = r->reused,
                           .predicted_us = r->predicted_us, .hbm_bytes = r->hbm_bytes,
                           .bubble_frac = r->bubble_frac};
  if (cb->fn && cb->fn(&row, cb->user))
    return av_error_set(err, AV_ERR_USAGE, "trace", NULL, "stopped by the row callback at "
                        "step %d", r->step);
  return AV_OK;
}

int anvil_trace(const anvil_trace_options_t *o, anvil_trace_row_fn fn, void *user,
                anvil_trace_summary_t *out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_trace_opts_t t = {.path = o->path, .gpu = o->gpu, .sim = o->sim,
                       .models = {.sched = o->scheduler, .cost = o->cost_model,
                                  .sp = o->scheduler_params, .n_sp = o->n_scheduler_params,
                                  .cp = o->cost_params, .n_cp = o->n_cost_params},
                       .heads = av__api_heads(&o->heads), .no_limits = o->no_limits,
                       .on_start = o->on_start ? on_start : NULL};
  trace_cb_t cb = {o->on_start, fn, user};
  av_trace_summary_t s;
  int rc = av_trace_run(&t, on_row, &cb, &s, &e);
  if (!rc && out)
    *out = (anvil_trace_summary_t){.steps = s.steps, .plans = s.plans, .reused = s.reused,
                                   .total_us = s.total_us};
  return av__api_error(err, &e, rc);
}
