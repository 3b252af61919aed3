/* What `auto` ranks (selectors/auto.c), for callers that choose among its best candidates
 * by measuring them (`anvil exec --autotune`, pipeline/autotune.h). */
#ifndef AV_SELECTORS_AUTO_H
#define AV_SELECTORS_AUTO_H

#include "schedulers/scheduler.h"

#define AV_AUTO_MAX_CANDIDATES 64  /* the registered schedulers and their alternatives */

typedef struct av_auto_candidate {
  const av_scheduler_ops_t *ops;
  const char *alt;                 /* its policy alternative ("cost=compute"), or NULL */
  char name[96];                   /* "profit_pack[cost=compute]", as auto's verdict names it */
  double predicted_us;
} av_auto_candidate_t;

/* Every candidate auto races on ctx's batch (with auto's parameters `params`; NULL: the
 * defaults), predicted fastest first, ties in auto's order, so out[0] is auto's choice. At
 * most cap of them; *n is how many. Candidates that cannot run here are left out. */
int av_auto_rank(const av_sched_ctx_t *ctx, const av_params_t *params, av_auto_candidate_t *out,
                 int cap, int *n, av_error_t *err);
/* Plans candidate c for ctx's batch as auto's plan: scheduler "auto", its parameters the
 * verdict text (why it was chosen). */
int av_auto_plan_candidate(const av_sched_ctx_t *ctx, const av_auto_candidate_t *c,
                           const char *verdict, av_plan_t **out, av_error_t *err);

#endif
