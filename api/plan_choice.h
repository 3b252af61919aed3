/* The planner's fresh plans under a scheduler that simulates the others (`auto`): the race
 * runs when the batch is built from the table, and every AV__CHOICE_REPLANS-th drift
 * replan; the other replans plan the kept forest with the candidate the race chose last
 * (docs/schedulers.md#per-step-planning), at the cost of one scheduler run. */
#ifndef AV_PLAN_CHOICE_H
#define AV_PLAN_CHOICE_H

#include "api/api_internal.h"
#include "schedulers/scheduler.h"

/* Drift replans that reuse the last choice before the race runs again. */
#define AV__CHOICE_REPLANS 8

typedef struct av__choice {
  av_sched_memo_t memo;            /* the race's predictions, for the choice it made */
  const av_scheduler_ops_t *ops;   /* the chosen candidate, NULL before a race */
  av_params_t params;
  char verdict[256];               /* the race's verdict, the plans' params */
  int left;                        /* replans before the race runs again */
  int64_t races;                   /* races run */
} av__choice_t;

void av__choice_free(av__choice_t *c);
/* A fresh plan of w with ops and its parameters sp. For a scheduler that simulates the
 * others, the last choice unless `race` (or none was made): then the race, whose choice is
 * kept. *out is the caller's. */
int av__choice_plan(av__choice_t *c, anvil_target_t *t, const av_workload_t *w,
                    const av_scheduler_ops_t *ops, const av_params_t *sp, int race,
                    av_plan_t **out, av_error_t *e);

#endif
