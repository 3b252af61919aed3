/* PAT §5.1 lazy update: when may the plan of one decode step serve the next? While the
 * batch's tree keeps its structure (nodes, parent links, each request's last node, heads,
 * block size) and the only change is leaves growing within the last KV block of each of
 * their requests. The reused plan then grows with them: its segments that ended at a leaf's
 * old end now end at the new one, so every new token is covered exactly once. `anvil trace`
 * and anvil_planner apply this one rule. */
#ifndef AV_PLAN_REUSE_H
#define AV_PLAN_REUSE_H

#include "core/plan.h"
#include "core/workload.h"

/* 1 when a plan made for `prev` may serve `next` after av_plan_regrow, else 0. */
int av_plan_reusable(const av_workload_t *prev, const av_workload_t *next);
/* Makes p, a plan for `prev`, the plan for `next` (av_plan_reusable(prev, next) must hold):
 * its segments grow with the leaves. The caller sets p->workload_hash to next's hash, now or
 * (a planner, per step) when the plan is next checked or written. */
void av_plan_regrow(av_plan_t *p, const av_workload_t *prev, const av_workload_t *next);
/* The rule and the growth in one step, in place, for a batch whose only change is its
 * requests' KV lengths (a planner's step over an unchanged block table): request r now has
 * tokens[r] tokens. When the rule holds (as av_plan_reusable of w and w so grown), grows w's
 * leaves and p's segments and returns 1; else returns 0 with nothing changed. `scratch`
 * holds w->n_nodes entries. The caller brings p->workload_hash up to date. */
int av_plan_grow_to(av_plan_t *p, av_workload_t *w, const int32_t *tokens, int64_t *scratch);

#endif
