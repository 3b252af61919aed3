/* Public plans: a scheduler run on a target, the checker and fp64 reference, the plan file's
 * JSON both ways, and the plan's arrays copied out for callers that hold them as columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "core/json_util.h"
#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "selectors/selectors.h"

anvil_plan_t *av__api_plan_wrap(av_plan_t *p, const anvil_workload_t *w) {
  anvil_plan_t *h = p ? malloc(sizeof *h) : NULL;
  if (!h) {
    av_plan_destroy(p);
    return NULL;
  }
  h->p = p;
  h->w = av__api_workload_ref(w);
  h->source[0] = '\0';
  h->hash_stale = 0;
  return h;
}

const av_plan_t *av__api_plan_settled(const anvil_plan_t *p) {
  if (p->hash_stale) {
    anvil_plan_t *m = (anvil_plan_t *)p;  /* a cache of a pure function of the workload */
    m->p->workload_hash = av_workload_hash(p->w->w);
    m->hash_stale = 0;
  }
  return p->p;
}

void anvil_plan_destroy(anvil_plan_t *p) {
  if (!p) return;
  av_plan_destroy(p->p);
  anvil_workload_destroy(p->w);
  free(p);
}

int av__api_plan_make(anvil_target_t *t, const av_workload_t *w,
                      const av_scheduler_ops_t *ops, const av_params_t *params,
                      av_plan_t **out, av_error_t *e) {
  av_costmodel_t *cost;
  int rc = av__api_target_cost(t, &w->heads, &cost, e);
  if (rc) return rc;
  av_sched_ctx_t ctx = {.workload = w, .gpu = &t->gpu, .variants = t->vs, .cost = cost,
                        .launch_model = t->launch};
  return av_scheduler_plan(ops, params, &ctx, out, e);
}

int av__api_scheduler(const char *scheduler, const char *const *params, int n_params,
                      const av_scheduler_ops_t **ops, av_params_t *p, av_error_t *e) {
  int rc = av_selectors_register(e);
  if (!rc) rc = av_scheduler_lookup(scheduler, "plan", "scheduler", ops, e);
  if (!rc) rc = av__api_params(p, (*ops)->params, params, n_params, "params", e);
  return rc;
}

int anvil_plan(anvil_target_t *t, const anvil_workload_t *w, const char *scheduler,
               const char *const *params, int n_params, anvil_plan_t **out,
               anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  const av_scheduler_ops_t *ops;
  av_params_t sp;
  av_plan_t *p = NULL;
  int rc = av__api_scheduler(scheduler, params, n_params, &ops, &sp, &e);
  if (!rc) rc = av__api_plan_make(t, w->w, ops, &sp, &p, &e);
  if (!rc && !(*out = av__api_plan_wrap(p, w)))
    rc = av_error_set(&e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  return av__api_error(err, &e, rc);
}

const char *anvil_scheduler_name(int i) {
  int n;
  av_selectors_register(NULL);  /* fails only if a selector's name is taken: then it is left out */
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  return i >= 0 && i < n ? all[i]->name : NULL;
}

const char *anvil_cost_model_name(int i) {
  int n;
  const av_costmodel_ops_t *const *all = av_costmodel_all(&n);
  return i >= 0 && i < n ? all[i]->name : NULL;
}

const anvil_workload_t *anvil_plan_workload(const anvil_plan_t *p) { return p->w; }
const char *anvil_plan_scheduler(const anvil_plan_t *p) { return p->p->scheduler; }
const char *anvil_plan_params(const anvil_plan_t *p) { return p->p->params; }
const char *anvil_plan_launch(const anvil_plan_t *p) {
  return av_launch_model_name(p->p->launch_model);
}

int anvil_plan_check(const anvil_plan_t *p, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  const av_plan_t *plan = av__api_plan_settled(p);
  int rc = av_plan_check(plan, p->w->w, &e);
  if (!rc) {
    /* exact, and runnable: every tile is one a compiled variant provides (anvil check's
     * rule; a copy of anvil without the variant table has no tiles to hold it to) */
    av_variants_t *vs = NULL;
    rc = av__api_load_variants(&vs, &e);
    if (!rc && vs) rc = av_plan_check_tiles(plan, vs, &e);
    av_variants_destroy(vs);
  }
  if (rc && !e.source[0] && p->source[0]) snprintf(e.source, sizeof e.source, "%s", p->source);
  return av__api_error(err, &e, rc);
}

int anvil_plan_reference(const anvil_plan_t *p, uint64_t seed, int dim, int32_t max_requests,
                         double *max_rel_err, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_reference_opts_t o = {.seed = seed, .dim = dim, .max_requests = max_requests};
  av_reference_result_t r;
  int rc = av_reference_run(av__api_plan_settled(p), p->w->w, &o, &r, &e);
  if (!rc && max_rel_err) *max_rel_err = r.max_rel_err;
  return av__api_error(err, &e, rc);
}

char *anvil_plan_to_json(const anvil_plan_t *p) {
  json_t *doc = av_plan_to_json(av__api_plan_settled(p), p->w->w);
  char *text = doc ? av_json_dump_text(doc) : NULL;
  json_decref(doc);
  return text;
}

/* A loaded plan and its embedded workload as a handle. */
static int wrap_loaded(av_plan_t *p, av_workload_t *w, const char *source, anvil_plan_t **out,
                       av_error_t *e) {
  anvil_workload_t *wh = av__api_workload_wrap(w);
  *out = wh ? av__api_plan_wrap(p, wh) : NULL;
  if (!wh) av_plan_destroy(p);
  anvil_workload_destroy(wh);
  if (*out) snprintf((*out)->source, sizeof (*out)->source, "%s", source);
  return *out ? AV_OK : av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
}

int anvil_plan_from_json(const char *json_text, const char *source, anvil_plan_t **out,
                         anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  if (!source) source = "plan";
  json_t *doc = NULL;
  int rc = av_json_load_string(json_text, source, &doc, &e);
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  if (!rc) {
    av_jctx_t c = {.source = source, .err = &e};
    rc = av_plan_from_doc(doc, &c, &p, &w);
  }
  json_decref(doc);
  if (!rc) rc = wrap_loaded(p, w, source, out, &e);
  return av__api_error(err, &e, rc);
}

int anvil_plan_load(const char *path, anvil_plan_t **out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  int rc = av_plan_load(path, &p, &w, &e);
  if (!rc) rc = wrap_loaded(p, w, path, out, &e);
  return av__api_error(err, &e, rc);
}

void anvil_plan_counts(const anvil_plan_t *p, anvil_plan_counts_t *out) {
  out->launches = p->p->n_launches;
  out->items = p->p->n_items;
  out->item_queries = p->p->n_item_queries;
  out->segments = p->p->n_segments;
  out->slots = p->p->n_slots;
  out->requests = p->p->n_requests;
}

void anvil_plan_launches(const anvil_plan_t *p, anvil_launch_t *out) {
  for (int32_t i = 0; i < p->p->n_launches; i++) {
    const av_launch_t *l = &p->p->launches[i];
    out[i] = (anvil_launch_t){l->stream, (int32_t)l->tile.kind, l->tile.m_rows,
                              l->tile.n_tokens, l->tile.warps, l->persistent_ctas, l->n_items};
  }
}

void anvil_plan_items(const anvil_plan_t *p, anvil_item_t *out) {
  for (int32_t i = 0; i < p->p->n_items; i++) {
    const av_item_t *x = &p->p->items[i];
    out[i] = (anvil_item_t){x->launch, x->q_begin, x->n_q, x->seg_begin, x->n_seg,
                            x->output == AV_OUT_PARTIAL, x->slot_begin, x->cta, x->order};
  }
}

void anvil_plan_item_queries(const anvil_plan_t *p, int32_t *out) {
  memcpy(out, p->p->item_queries, (size_t)p->p->n_item_queries * sizeof *out);
}

void anvil_plan_segments(const anvil_plan_t *p, anvil_segment_t *out) {
  for (int32_t i = 0; i < p->p->n_segments; i++) {
    const av_segment_t *s = &p->p->segments[i];
    out[i] = (anvil_segment_t){.node = s->node, .begin = s->begin, .end = s->end};
  }
}

void anvil_plan_merges(const anvil_plan_t *p, int32_t *offsets, int32_t *slots) {
  memcpy(offsets, p->p->merge_offsets, (size_t)(p->p->n_requests + 1) * sizeof *offsets);
  memcpy(slots, p->p->merge_slots, (size_t)p->p->n_slots * sizeof *slots);
}
