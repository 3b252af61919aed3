/* The replay pipeline (pipeline/replay_run.h): the plan and its measured trace loaded and
 * checked, the replay, the optional timeline, then the cost model's CTA durations compared
 * with the measured ones. */
#include "pipeline/replay_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"
#include "pipeline/models.h"
#include "pipeline/results_dir.h"
#include "proofs/proofs.h"
#include "sim/replay.h"

typedef struct replay_in {
  av_gpu_t gpu;
  av_plan_t *p;
  av_workload_t *w;
  av_variants_t *vs;
  av_replay_trace_t t;
} replay_in_t;

static void report(const av_replay_opts_t *o, const replay_in_t *in, const av_replay_result_t *r,
                   int32_t timeline_ctas, void *user) {
  if (!o->on_report) return;
  av_replay_report_t rep = {
      .plan_items = in->p->n_items, .plan_launches = in->p->n_launches,
      .kv_heads = in->p->heads.hkv, .cta_records = in->t.n,
      .merge_records = in->t.merge_records, .trace_gpu = in->t.gpu,
      .n_launches = r->sim.n_launches, .launches = r->sim.launches,
      .sm_busy_frac = r->sim.sm_busy_frac, .bubble_frac = r->sim.bubble_frac,
      .measured_us = r->measured_us, .replayed_us = r->replayed_us, .rel_err = r->rel_err,
      .timeline_ctas = timeline_ctas};
  o->on_report(&rep, user);
}

static int hand_rows(const av_plan_t *p, const av_replay_cta_cmp_t *c, int32_t n,
                     double makespan_us, av_replay_row_fn on_row, void *user, av_error_t *err) {
  for (int32_t i = 0; on_row && i < n; i++) {
    av_replay_row_t row = {.launch = c[i].launch, .ctas = c[i].ctas,
                           .pred_median_us = c[i].pred_median_us,
                           .meas_median_us = c[i].meas_median_us,
                           .ratio_median = c[i].ratio_median, .pred_p90_us = c[i].pred_p90_us,
                           .meas_p90_us = c[i].meas_p90_us,
                           .predicted_makespan_us = makespan_us};
    if (c[i].launch >= 0) {
      const av_tile_t *t = &p->launches[c[i].launch].tile;
      row.m_rows = t->m_rows;
      row.n_tokens = t->n_tokens;
      row.warps = t->warps;
    }
    int rc = on_row(&row, user, err);
    if (rc) return rc;
  }
  return AV_OK;
}

/* Predicts the plan with cost model `ops` (looked up before any work) and compares its CTAs
 * with the trace. */
static int compare_ctas(const av_replay_opts_t *o, const av_costmodel_ops_t *ops,
                        const replay_in_t *in, av_replay_row_fn on_row, void *user,
                        av_replay_summary_t *out, av_error_t *err) {
  av_costmodel_t *cost = NULL;
  av_sim_result_t sim;
  av_timeline_t tl = {0, 0, NULL};
  av_replay_cta_cmp_t *c = NULL;
  int32_t n = 0;
  memset(&sim, 0, sizeof sim);
  int rc = av_models_cost_create(ops, NULL, &in->gpu, &in->p->heads, in->vs, &cost, err);
  if (rc && !o->cost) {  /* the default model needs a profile this GPU may not have */
    snprintf(out->not_compared, sizeof out->not_compared, "%s", err->message);
    av_error_clear(err);
    return AV_OK;
  }
  if (!rc) {
    av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
    rc = av_sim_run(&cfg, &(av_sim_input_t){in->p, in->w, &in->gpu, in->vs, cost}, &sim, &tl, err);
  }
  if (!rc) rc = av_replay_compare(&in->t, in->p, &tl, &c, &n, err);
  if (!rc) {
    out->compared = 1;
    out->predicted_us = sim.makespan_us;
    rc = hand_rows(in->p, c, n, sim.makespan_us, on_row, user, err);
  }
  free(c);
  av_timeline_free(&tl);
  av_sim_result_free(&sim);
  av_costmodel_destroy(cost);
  return rc;
}

int av_replay_measured(const av_replay_opts_t *o, av_replay_row_fn on_row, void *user,
                       av_replay_summary_t *out, av_error_t *err) {
  replay_in_t in;
  memset(&in, 0, sizeof in);
  av_replay_result_t r;
  av_timeline_t tl = {0, 0, NULL};
  memset(&r, 0, sizeof r);
  av_replay_summary_t sum;
  memset(&sum, 0, sizeof sum);
  int rc = AV_OK;
  if (!o->plan) rc = av_error_set(err, AV_ERR_USAGE, "replay", "--plan", "missing");
  else if (!o->trace) rc = av_error_set(err, AV_ERR_USAGE, "replay", "--trace", "missing");
  if (!rc && o->timeline) rc = av_path_check_writable("replay", o->timeline, "--timeline", err);
  const av_costmodel_ops_t *cops = NULL;  /* a misspelt model fails before any work */
  if (!rc)
    rc = av_costmodel_lookup(o->cost ? o->cost : "profile", "replay", "--cost-model", &cops,
                             err);
  if (!rc) rc = av_models_load_gpu("replay", o->gpu ? o->gpu : "H200-SXM", &in.gpu, err);
  if (!rc) rc = av_plan_load(o->plan, &in.p, &in.w, err);
  if (!rc) rc = av_plan_check(in.p, in.w, err);
  if (!rc) rc = av_models_load_variants(0, &in.vs, err);
  if (!rc) rc = av_replay_load(o->trace, in.p, &in.t, err);
  if (!rc) rc = av_replay_run(&in.t, in.p, in.w, &in.gpu, in.vs, &r, o->timeline ? &tl : NULL, err);
  if (!rc && o->timeline) rc = av_timeline_write_chrome(&tl, in.p, o->timeline, err);
  if (!rc) {
    report(o, &in, &r, o->timeline ? tl.n : 0, user);
    rc = compare_ctas(o, cops, &in, on_row, user, &sum, err);
  }
  if (out) *out = sum;
  av_timeline_free(&tl);
  av_replay_result_free(&r);
  av_replay_trace_free(&in.t);
  av_variants_destroy(in.vs);
  av_plan_destroy(in.p);
  av_workload_destroy(in.w);
  return rc;
}
