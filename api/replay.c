/* anvil_replay: the replay pipeline (pipeline/replay_run.h) behind the public API. */
#include "anvil/replay.h"

#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "pipeline/replay_run.h"

typedef struct replay_cb {
  anvil_replay_report_fn report;
  anvil_replay_row_fn row;
  void *user;
} replay_cb_t;

static void on_report(const av_replay_report_t *r, void *user) {
  const replay_cb_t *cb = user;
  anvil_replay_launch_t *l = calloc((size_t)(r->n_launches > 0 ? r->n_launches : 1), sizeof *l);
  if (!l) return;  /* out of memory: the report is left out, the run goes on */
  for (int32_t i = 0; i < r->n_launches; i++)
    l[i] = (anvil_replay_launch_t){.ctas = r->launches[i].ctas,
                                   .ctas_per_sm = r->launches[i].ctas_per_sm,
                                   .waves = r->launches[i].waves,
                                   .start_us = r->launches[i].start_us,
                                   .end_us = r->launches[i].end_us};
  anvil_replay_report_t rep = {
      .plan_items = r->plan_items, .plan_launches = r->plan_launches, .kv_heads = r->kv_heads,
      .cta_records = r->cta_records, .merge_records = r->merge_records,
      .trace_gpu = r->trace_gpu, .n_launches = r->n_launches, .launches = l,
      .sm_busy_frac = r->sm_busy_frac, .bubble_frac = r->bubble_frac,
      .measured_us = r->measured_us, .replayed_us = r->replayed_us, .rel_err = r->rel_err,
      .timeline_ctas = r->timeline_ctas};
  cb->report(&rep, cb->user);
  free(l);
}

static int on_row(const av_replay_row_t *r, void *user, av_error_t *err) {
  const replay_cb_t *cb = user;
  anvil_replay_row_t row = {.launch = r->launch, .m_rows = r->m_rows, .n_tokens = r->n_tokens,
                            .warps = r->warps, .ctas = r->ctas,
                            .pred_median_us = r->pred_median_us,
                            .meas_median_us = r->meas_median_us,
                            .ratio_median = r->ratio_median, .pred_p90_us = r->pred_p90_us,
                            .meas_p90_us = r->meas_p90_us,
                            .predicted_makespan_us = r->predicted_makespan_us};
  if (cb->row && cb->row(&row, cb->user))
    return av_error_set(err, AV_ERR_USAGE, "replay", NULL,
                        "stopped by the row callback at launch %d", r->launch);
  return AV_OK;
}

int anvil_replay(const anvil_replay_options_t *o, anvil_replay_row_fn fn, void *user,
                 anvil_replay_summary_t *out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_replay_opts_t r = {.plan = o->plan, .trace = o->trace, .gpu = o->gpu,
                        .timeline = o->timeline, .cost = o->cost_model,
                        .on_report = o->on_report ? on_report : NULL};
  replay_cb_t cb = {o->on_report, fn, user};
  av_replay_summary_t s;
  int rc = av_replay_measured(&r, on_row, &cb, &s, &e);
  if (out) {
    memset(out, 0, sizeof *out);
    out->compared = s.compared;
    memcpy(out->not_compared, s.not_compared, sizeof out->not_compared);
    out->predicted_us = s.predicted_us;
  }
  return av__api_error(err, &e, rc);
}
