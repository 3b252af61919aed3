/* Public simulation: a plan's predicted time and bytes on the target's GPU, and the CTA
 * timeline as events or as the Chrome Trace file `anvil run --timeline` writes. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "sim/sim.h"

struct anvil_timeline {
  av_timeline_t tl;
};

_Static_assert(sizeof(anvil_cta_event_t) == sizeof(av_cta_event_t) &&
                   offsetof(anvil_cta_event_t, start_us) == offsetof(av_cta_event_t, start_us),
               "public CTA events are the simulator's");

int anvil_simulate(anvil_target_t *t, const anvil_plan_t *p, const char *model,
                   anvil_sim_result_t *out, anvil_timeline_t **timeline, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  memset(out, 0, sizeof *out);
  if (timeline) *timeline = NULL;
  const av_workload_t *w = p->w->w;
  av_sim_config_t cfg = {.record_timeline = timeline != NULL};
  av_costmodel_t *cost = NULL;
  anvil_timeline_t *tl = timeline ? calloc(1, sizeof *tl) : NULL;
  int rc = timeline && !tl ? av_error_set(&e, AV_ERR_NOMEM, NULL, NULL, "out of memory") : 0;
  if (!rc) rc = av_sim_model_lookup(model ? model : "engine", "simulate", "model", &cfg.model, &e);
  if (!rc) rc = av__api_target_cost(t, &w->heads, &cost, &e);
  av_sim_result_t r;
  memset(&r, 0, sizeof r);
  if (!rc)
    rc = av_sim_run(&cfg, &(av_sim_input_t){p->p, w, &t->gpu, t->vs, cost}, &r, tl ? &tl->tl : NULL,
                    &e);
  if (!rc) {
    av_floor_t f;
    av_workload_floor(w, &t->gpu, &f);
    *out = (anvil_sim_result_t){
        .predicted_us = r.makespan_us, .partial_us = r.partial_us, .merge_us = r.merge_us,
        .floor_us = f.us, .hbm_bytes = r.hbm_bytes, .l2_bytes = r.l2_bytes,
        .achieved_bw_GBps = r.achieved_bw_GBps, .bubble_frac = r.bubble_frac,
        .floor_mem_us = f.mem_us, .floor_compute_us = f.compute_us};
    if (timeline) *timeline = tl;
  } else {
    anvil_timeline_destroy(tl);
  }
  av_sim_result_free(&r);
  return av__api_error(err, &e, rc);
}

int32_t anvil_timeline_size(const anvil_timeline_t *tl) { return tl->tl.n; }

const anvil_cta_event_t *anvil_timeline_events(const anvil_timeline_t *tl) {
  return (const anvil_cta_event_t *)tl->tl.ev;
}

int anvil_timeline_write(const anvil_timeline_t *tl, const anvil_plan_t *p, const char *path,
                         anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  return av__api_error(err, &e, av_timeline_write_chrome(&tl->tl, p->p, path, &e));
}

void anvil_timeline_destroy(anvil_timeline_t *tl) {
  if (!tl) return;
  av_timeline_free(&tl->tl);
  free(tl);
}
