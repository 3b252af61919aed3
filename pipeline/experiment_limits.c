/* The experiment's "limits" object and the check of every built batch against the limits
 * (core/limits.h), run by the loader after the batches are built and before anything is
 * planned: a file that asks for more work than the limits allow fails at once. */
#include <stdio.h>

#include "core/limits.h"
#include "pipeline/experiment_internal.h"

int av__experiment_parse_limits(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  av_limits_default(&e->limits);
  const json_t *v = json_object_get(root, "limits");
  if (!v) return AV_OK;
  if (av_json_expect_object(c, v, "limits") ||
      av_json_check_keys(c, v, "limits", av_limits_keys))
    return c->err && c->err->code ? c->err->code : AV_ERR_SCHEMA;
  for (int i = 0; av_limits_keys[i]; i++) {
    int64_t *f = av_limits_field(&e->limits, av_limits_keys[i]);
    if (av_json_get_int(c, v, (av_json_field_t){"limits", av_limits_keys[i], 0}, *f, 1,
                        INT64_MAX / 4, f))
      return c->err && c->err->code ? c->err->code : AV_ERR_SCHEMA;
  }
  return AV_OK;
}

/* Plan size, work and memory of each scheduler on one batch, from what the scheduler can
 * tell before planning (av_scheduler_ops_t.min_items and .pieces). */
static int check_plans(const av_jctx_t *c, const av_experiment_t *e, const av_exp_batch_t *b) {
  const av_limits_t *l = &e->limits;
  for (int s = 0; s < e->n_scheds; s++) {
    const av_exp_sched_t *sc = &e->scheds[s];
    const int64_t items = sc->ops->min_items ? sc->ops->min_items(b->w, &sc->params) : 0;
    char path[96];
    snprintf(path, sizeof path, "schedulers[%d].params", sc->entry);
    if (items > l->plan_items)
      return av_error_set(c->err, AV_ERR_RANGE, c->source, path,
                          "%s plans at least %lld work items for batch '%s', over the limit "
                          "of %lld (limits.plan_items); raise it with \"limits\": "
                          "{\"plan_items\": N} if you mean it",
                          sc->label, (long long)items, b->name, (long long)l->plan_items);
    const int64_t pieces = av_scheduler_pieces(sc->ops, &sc->params, b->w);
    char what[160];
    snprintf(what, sizeof what, "batch '%s'", b->name);
    int rc = av_limits_check_work(l, av_limits_work_units(b->w, pieces), sc->label, what,
                                  c->source, path, NULL, c->err);
    if (rc) return rc;
    const int64_t bytes =
        av_limits_workload_bytes(b->w) + av_limits_plan_bytes(b->w, items, pieces);
    if (bytes > l->memory_bytes)
      return av_error_set(c->err, AV_ERR_RANGE, c->source, path,
                          "%s on batch '%s' needs about %lld bytes, over the limit of %lld "
                          "(limits.memory_bytes); raise it with \"limits\": "
                          "{\"memory_bytes\": N} if you mean it",
                          sc->label, b->name, (long long)bytes, (long long)l->memory_bytes);
  }
  return AV_OK;
}

int av__experiment_check_limits(const av_jctx_t *c, const av_experiment_t *e) {
  for (int i = 0; i < e->n_batches; i++) {
    const av_exp_batch_t *b = &e->batches[i];
    char path[64];
    av_jpath_index(path, sizeof path, "workloads", (size_t)b->spec_index);
    int rc = av_limits_check_workload(&e->limits, b->w, b->name, c->source, path, NULL,
                                      c->err);
    if (!rc) rc = check_plans(c, e, b);
    if (rc) return rc;
  }
  return AV_OK;
}
