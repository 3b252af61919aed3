/* The trace pipeline (pipeline/trace_run.h): the per-step loop of `anvil trace`, each step
 * planned or its previous plan reused, proved exact, and simulated. */
#include "pipeline/trace_run.h"

#include <stdio.h>
#include <string.h>

#include "core/limits.h"
#include "pipeline/plan_reuse.h"
#include "proofs/proofs.h"
#include "sim/sim.h"

void av_trace_opts_default(av_trace_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->gpu = "H200-SXM";
  o->sim = "engine";
  o->models.cost = "roofline";
  o->heads = (av_heads_t){.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
}

typedef struct trace_run {
  av_models_t m;
  av_sim_config_t cfg;
  av_gpu_t gpu;
  av_variants_t *vs;
  av_costmodel_t *cost;
  av_heads_t cost_heads;
  av_plan_t *plan;
  const av_workload_t *planned;   /* the step the current plan was made for */
  int32_t plans, reused;
  double total_us;
  int64_t max_items;              /* limits.plan_items; 0 with no_limits */
} trace_run_t;

/* Every step within the default limits (core/limits.h) before any is planned, its work
 * estimated for the trace's scheduler (every step is simulated, reused plan or not), and
 * the steps' work in all held to the same limit; plans are held to limits.plan_items. */
static int check_limits(const av_trace_t *tr, const char *path, trace_run_t *s,
                        av_error_t *err) {
  static const char raise[] = "run with --no-limits if you mean it";
  av_limits_t l;
  av_limits_default(&l);
  s->max_items = l.plan_items;
  int64_t total = 0;
  for (int32_t i = 0; i < av_trace_steps(tr); i++) {
    const av_workload_t *w = av_trace_step(tr, i);
    char name[32];
    snprintf(name, sizeof name, "step %d", i);
    int rc = av_limits_check_workload(&l, w, name, path, NULL, raise, err);
    const int64_t units =
        av_limits_work_units(w, av_scheduler_pieces(s->m.sops, &s->m.sp, w));
    char what[48];
    snprintf(what, sizeof what, "batch '%s'", name);
    if (!rc) rc = av_limits_check_work(&l, units, s->m.sops->name, what, path, NULL, raise, err);
    if (rc) return rc;
    total = units > INT64_MAX - total ? INT64_MAX : total + units;
  }
  char all[48];
  snprintf(all, sizeof all, "all %d steps", av_trace_steps(tr));
  return av_limits_check_work(&l, total, s->m.sops->name, all, path, NULL, raise, err);
}

/* The plan for step w: the previous one grown (*reuse set), or a new one, proved exact. */
static int plan_step(trace_run_t *s, const av_workload_t *w, int *reuse, av_error_t *err) {
  *reuse = s->plan && av_plan_reusable(s->planned, w);
  if (*reuse) {
    av_plan_regrow(s->plan, s->planned, w);
    s->plan->workload_hash = av_workload_hash(w);
    s->planned = w;
    s->reused++;
    return AV_OK;
  }
  int rc = AV_OK;
  if (!s->cost || memcmp(&s->cost_heads, &w->heads, sizeof w->heads) != 0) {
    av_costmodel_destroy(s->cost);
    rc = av_models_cost_create(s->m.cops, &s->m.cp, &s->gpu, &w->heads, s->vs, &s->cost, err);
    if (rc) return rc;
    s->cost_heads = w->heads;
  }
  av_plan_destroy(s->plan);
  s->plan = NULL;
  av_sched_ctx_t ctx = {.workload = w, .gpu = &s->gpu, .variants = s->vs, .cost = s->cost,
                        .max_items = s->max_items};
  rc = av_scheduler_plan(s->m.sops, &s->m.sp, &ctx, &s->plan, err);
  if (!rc) rc = av_plan_check(s->plan, w, err);
  if (rc) return rc;
  s->planned = w;
  s->plans++;
  return AV_OK;
}

/* One step: plan (or reuse the previous plan), simulate, hand the row over. */
static int run_step(trace_run_t *s, const av_trace_t *tr, int32_t i, av_trace_row_fn on_row,
                    void *user, av_error_t *err) {
  const av_workload_t *w = av_trace_step(tr, i);
  int reuse;
  int rc = plan_step(s, w, &reuse, err);
  if (rc) return rc;
  av_sim_result_t r;
  rc = av_sim_run(&s->cfg, &(av_sim_input_t){s->plan, w, &s->gpu, s->vs, s->cost}, &r, NULL, err);
  if (rc) return rc;
  av_workload_stats_t ws;
  av_workload_stats(w, &ws);
  av_trace_row_t row = {.step = i, .steps = av_trace_steps(tr), .requests = ws.requests,
                        .nodes = ws.nodes, .items = s->plan->n_items, .reused = reuse,
                        .predicted_us = r.makespan_us, .hbm_bytes = r.hbm_bytes,
                        .bubble_frac = r.bubble_frac};
  s->total_us += r.makespan_us;
  av_sim_result_free(&r);
  return on_row ? on_row(&row, user, err) : AV_OK;
}

int av_trace_run(const av_trace_opts_t *o, av_trace_row_fn on_row, void *user,
                 av_trace_summary_t *out, av_error_t *err) {
  trace_run_t s;
  memset(&s, 0, sizeof s);
  av_trace_t *tr = NULL;
  int rc = AV_OK;
  if (!o->path)
    rc = av_error_set(err, AV_ERR_USAGE, "trace", "TRACE.jsonl", "missing; name the trace");
  else if (!o->models.sched)
    rc = av_error_set(err, AV_ERR_USAGE, "trace", "--scheduler",
                      "missing; name the scheduler (anvil list shows them)");
  if (!rc) rc = av_models_load("trace", &o->models, &s.m, err);
  if (!rc) rc = av_sim_model_lookup(o->sim, "trace", "--sim", &s.cfg.model, err);
  if (!rc) rc = av_models_load_gpu("trace", o->gpu, &s.gpu, err);
  if (!rc) rc = av_models_load_variants(0, &s.vs, err);
  if (!rc) {
    tr = av_trace_load(o->path, &o->heads, err);
    if (!tr) rc = err->code ? err->code : AV_ERR_INTERNAL;
  }
  if (!rc && !o->no_limits) rc = check_limits(tr, o->path, &s, err);
  if (!rc && o->on_start) {
    av_trace_start_t st = {.steps = av_trace_steps(tr), .scheduler = s.m.sops->name,
                           .cost_model = s.m.cops->name, .sim = o->sim, .gpu = s.gpu.name};
    o->on_start(&st, user);
  }
  for (int32_t i = 0; !rc && i < av_trace_steps(tr); i++)
    rc = run_step(&s, tr, i, on_row, user, err);
  if (!rc && out)
    *out = (av_trace_summary_t){.steps = av_trace_steps(tr), .plans = s.plans,
                                .reused = s.reused, .total_us = s.total_us};
  av_plan_destroy(s.plan);
  av_costmodel_destroy(s.cost);
  av_trace_destroy(tr);
  av_variants_destroy(s.vs);
  return rc;
}
