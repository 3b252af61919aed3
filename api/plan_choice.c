/* Fresh plans for the planner, `auto`'s choice kept between races (plan_choice.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/plan_choice.h"
#include "selectors/auto.h"

void av__choice_free(av__choice_t *c) { free(c->memo.entries); }

/* Keeps the candidate the race chose: its scheduler and parameters (the memo entry's
 * "k=v,..." text read back), and the verdict the plan carries. */
static void keep_choice(av__choice_t *c, const av_plan_t *p) {
  c->ops = NULL;
  if (c->memo.chosen < 0 || c->memo.chosen >= c->memo.n) return;
  const av_sched_memo_entry_t *me = &c->memo.entries[c->memo.chosen];
  av_error_t e;
  if (av_params_init(&c->params, me->ops->params, &e)) return;
  char buf[sizeof me->params];
  snprintf(buf, sizeof buf, "%s", me->params);
  for (char *save = NULL, *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save))
    if (av_params_set_text(&c->params, a, me->ops->name, &e)) return;
  snprintf(c->verdict, sizeof c->verdict, "%s", p->params);
  c->ops = me->ops;
  c->left = AV__CHOICE_REPLANS;
}

int av__choice_plan(av__choice_t *c, anvil_target_t *t, const av_workload_t *w,
                    const av_scheduler_ops_t *ops, const av_params_t *sp, int race,
                    av_plan_t **out, av_error_t *e) {
  av_costmodel_t *cost;
  int rc = av__api_target_cost(t, &w->heads, &cost, e);
  if (rc) return rc;
  av_sched_ctx_t ctx = {.workload = w, .gpu = &t->gpu, .variants = t->vs, .cost = cost,
                        .launch_model = t->launch};
  if (!(ops->flags & AV_SCHED_SIMULATES_OTHERS)) return av_scheduler_plan(ops, sp, &ctx, out, e);
  if (c->ops && !race && c->left > 0) {
    c->left--;
    rc = av_scheduler_plan(c->ops, &c->params, &ctx, out, e);
    if (rc) return rc;
    snprintf((*out)->scheduler, sizeof (*out)->scheduler, "%s", ops->name);
    snprintf((*out)->params, sizeof (*out)->params, "%s", c->verdict);
    return AV_OK;
  }
  if (!c->memo.entries) {
    c->memo.entries = calloc(AV_AUTO_MAX_CANDIDATES, sizeof *c->memo.entries);
    if (!c->memo.entries) return av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
    c->memo.cap = AV_AUTO_MAX_CANDIDATES;
  }
  c->memo.n = 0; /* the predictions were of another batch */
  c->memo.chosen = -1;
  ctx.memo = &c->memo;
  c->races++;
  rc = av_scheduler_plan(ops, sp, &ctx, out, e);
  if (!rc) keep_choice(c, *out);
  return rc;
}
