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

/* Reads the verdict an `auto` plan records in its parameters ("...,chose=NAME,margin=M,..."):
 * the candidate chosen into chose (n bytes; NAME as the verdict writes it, brackets and all)
 * and the runner-up's predicted excess over it (M, a fraction: 0.031 is 3.1 % slower) into
 * *margin, NAN when the verdict has none (an `--autotune` verdict, or no runner-up). Returns
 * 1 when params holds a verdict, else 0 with chose "" and *margin NAN. */
int av_auto_verdict_parse(const char *params, char *chose, size_t n, double *margin);
/* A table's cell for an `auto` row labelled label: "label→CHOSEN (+3.1 %)" (the runner-up
 * predicted 3.1 % slower), "label→CHOSEN" without a margin, label alone without a verdict. */
void av_auto_verdict_text(const char *label, const char *params, char *out, size_t n);

#endif
