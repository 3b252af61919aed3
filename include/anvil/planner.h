/* Per-step planning for a serving loop: a planner keeps its target, scheduler and buffers
 * between decode steps and reuses its plan while the batch's tree keeps its structure and
 * only the last KV block of each request fills up (PAT §5.1 lazy update, the rule
 * `anvil trace` uses too); the reused plan's last segments grow with the requests. */
#ifndef ANVIL_PLANNER_H
#define ANVIL_PLANNER_H

#include <stdint.h>

#include "anvil/error.h"
#include "anvil/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_planner anvil_planner_t;

/* Plans with `scheduler` and "key=value" params on target t (borrowed: it must outlive the
 * planner) for batches of the given block size and heads (NULL: the defaults). */
int anvil_planner_create(anvil_target_t *t, const char *scheduler, const char *const *params,
                         int n_params, int block_size, const anvil_heads_t *heads,
                         anvil_planner_t **out, anvil_error_t *err);
void anvil_planner_destroy(anvil_planner_t *pl);

/* One step: the block table as in anvil_workload_from_block_table. *reused (may be NULL) is
 * 1 when the previous plan was kept (grown), 0 when the step planned anew. */
int anvil_planner_step(anvil_planner_t *pl, const int32_t *table, int64_t row_stride,
                       const int32_t *kv_tokens, int32_t n_requests, int *reused,
                       anvil_error_t *err);
/* The plan of the latest step (NULL before the first). Borrowed: valid until the next step
 * or anvil_planner_destroy; it changes in place when a step reuses it. */
const anvil_plan_t *anvil_planner_plan(const anvil_planner_t *pl);
/* Steps planned anew and steps that reused the plan, since creation. */
void anvil_planner_counts(const anvil_planner_t *pl, int64_t *planned, int64_t *reused);

#ifdef __cplusplus
}
#endif
#endif
