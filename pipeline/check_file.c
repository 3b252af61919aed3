/* `anvil check` (pipeline/check_file.h): the checker, the compiled tiles and the fp64
 * reference, in that order. */
#include "pipeline/check_file.h"

#include <stdio.h>

#include "core/plan.h"
#include "pipeline/models.h"

int av_check_file(const av_check_file_opts_t *o, void *user, av_error_t *err) {
  if (!o->path)
    return av_error_set(err, AV_ERR_USAGE, "check", NULL,
                        "missing the plan file (usage: anvil check PLAN.json)");
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  av_reference_result_t res = {0};
  av_variants_t *vs = NULL;
  int rc = av_plan_load(o->path, &p, &w, err);
  if (!rc) rc = av_plan_check(p, w, err);
  if (!rc) rc = av_models_load_variants(0, &vs, err);
  if (!rc) rc = av_plan_check_tiles(p, vs, err);
  if (!rc && o->exact) {
    av_plan_stats_t ps;
    av_plan_stats(p, &ps);
    av_check_exact_t x = {.scheduler = p->scheduler, .items = ps.items,
                          .launches = ps.launches, .requests = w->n_requests,
                          .nodes = w->n_nodes};
    o->exact(&x, user);
  }
  if (!rc && !o->no_reference) rc = av_reference_run(p, w, &o->ref, &res, err);
  if (!rc && !o->no_reference && o->reference) o->reference(&res, user);
  if (!rc && !o->no_reference && !(res.max_rel_err <= o->tolerance))
    rc = av_error_set(err, AV_ERR_PLAN, o->path, NULL,
                      "the CPU reference differs from direct attention by %.3e (request "
                      "%d), more than the tolerance %.1e",
                      res.max_rel_err, res.worst_request, o->tolerance);
  /* The checker and reference do not know the file; the user needs it in the message. */
  if (rc && !err->source[0]) snprintf(err->source, sizeof err->source, "%s", o->path);
  av_variants_destroy(vs);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}
