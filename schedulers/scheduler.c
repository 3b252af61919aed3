/* Running a scheduler: plan, record who planned with what parameters, finalize. */
#include <stdio.h>
#include <string.h>

#include "core/limits.h"
#include "schedulers/scheduler.h"

/* On success *out is a finalized plan the caller owns (av_plan_destroy); on failure *out is
 * NULL and err holds the first error. */
int av_scheduler_plan(const av_scheduler_ops_t *ops, const av_params_t *params,
                      const av_sched_ctx_t *ctx, av_plan_t **out, av_error_t *err) {
  *out = NULL;
  av_params_t defaults;
  if (!params) {
    int rc = av_params_init(&defaults, ops->params, err);
    if (rc) return rc;
    params = &defaults;
  }
  if (!ctx || !ctx->workload || !ctx->gpu)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL,
                        "scheduler '%s' needs a workload and a GPU spec", ops->name);
  av_plan_t *p = NULL;
  int rc = ops->plan(ctx, params, &p, err);
  if (rc == AV_OK && !p)
    rc = av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "scheduler '%s' returned no plan",
                      ops->name);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  snprintf(p->scheduler, sizeof p->scheduler, "%s", ops->name);
  p->launch_model = ctx->launch_model;
  /* The record is the parameters as planned, followed by whatever the scheduler itself
   * noted (auto writes which candidate it chose and by how much). */
  char noted[sizeof p->params];
  snprintf(noted, sizeof noted, "%s", p->params);
  av_params_format(params, p->params, sizeof p->params);
  if (noted[0]) {
    size_t used = strlen(p->params);
    snprintf(p->params + used, sizeof p->params - used, "%s%s", used ? "," : "", noted);
  }
  if ((rc = av_plan_finalize(p, err))) {
    av_plan_destroy(p);
    return rc;
  }
  *out = p;
  return AV_OK;
}

int av_sched_memo_find(const av_sched_memo_t *m, const av_scheduler_ops_t *ops,
                       const av_params_t *params, int sim_model) {
  if (!m || m->n <= 0) return -1;
  char text[sizeof m->entries[0].params];
  av_params_format(params, text, sizeof text);
  for (int i = 0; i < m->n; i++) {
    const av_sched_memo_entry_t *e = &m->entries[i];
    if (e->ops == ops && e->sim_model == sim_model && strcmp(e->params, text) == 0) return i;
  }
  return -1;
}

int64_t av_scheduler_pieces(const av_scheduler_ops_t *ops, const av_params_t *params,
                            const av_workload_t *w) {
  av_params_t defaults;
  if (!params) {
    if (av_params_init(&defaults, ops->params, NULL)) return 0;
    params = &defaults;
  }
  const int64_t pairs = av_limits_path_pairs(w);
  const int64_t own = ops->pieces ? ops->pieces(w, params) : 0;
  return own > pairs ? own : pairs;
}
