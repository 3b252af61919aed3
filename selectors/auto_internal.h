/* Internals of `auto` (selectors/auto.c) shared with its bound (selectors/auto_bound.c) and
 * the tests. Not a public API. */
#ifndef AV_SELECTORS_AUTO_INTERNAL_H
#define AV_SELECTORS_AUTO_INTERNAL_H

#include "schedulers/scheduler.h"

/* The bound is lowered by this fraction: the engine merges events closer than its tolerance,
 * so its times may fall short of its exact model by far less. */
#define AV__AUTO_BOUND_SLACK 1e-6

/* A lower bound of the engine's makespan (av_sim_run, model engine) for plan p of ctx's
 * batch on ctx's GPU under cost, p checked exact: *bound_us <= the engine's prediction.
 * 0 when no bound can be given (a launch without a runnable variant, whose fate the engine
 * decides). AV_ERR_NOMEM is the only error. */
int av__auto_bound(const av_sched_ctx_t *ctx, const av_costmodel_t *cost, const av_plan_t *p,
                   double *bound_us, av_error_t *err);

#endif
