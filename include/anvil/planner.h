/* Per-step planning for a serving loop (docs/schedulers.md#per-step-planning). A planner
 * keeps its target, scheduler, batch, plan and every buffer between decode steps, and a step
 * changes only what the block table changed:
 *   reused     the requests' tokens grew inside their last KV blocks (PAT §5.1 lazy update):
 *              the plan's segments grow with them;
 *   patched    requests took new KV blocks, arrived or finished: the forest and the plan are
 *              patched in place (a grown leaf's segments extend; an arrival joins the items
 *              that read its parent's path, or copies of them, and gets an item for its own
 *              blocks; a finished request's queries, items and merge slots go);
 *   replanned  the drift rule: the patched plan's estimated time exceeds (1 + drift) times
 *              the fresh plan's, as estimated when that plan was made and scaled with the
 *              batch's unique KV tokens: the kept forest is planned anew (under `auto`, with
 *              the candidate it chose last; its race runs again every 8th such replan);
 *   planned    a change patching does not handle (a shared prefix that splits or merges, a
 *              block id seen elsewhere in the batch, a request that is not alone on its leaf):
 *              the forest is built from the table and planned anew.
 * The estimate is the drift rule's cheap one: per CTA (an item, or a persistent CTA's queue)
 * the cost model's time, and the plan's the larger of the longest CTA and the sum over the
 * GPU's SMs. Reused and patched steps allocate nothing once the batch has reached its size. */
#ifndef ANVIL_PLANNER_H
#define ANVIL_PLANNER_H

#include <stdint.h>

#include "anvil/error.h"
#include "anvil/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_planner anvil_planner_t;

/* The drift bound of a new planner: a patched plan may be estimated 10 % slower than a fresh
 * one before the planner plans anew. */
#define ANVIL_PLANNER_DRIFT 0.10

typedef enum { ANVIL_STEP_PLANNED = 0, ANVIL_STEP_REPLANNED, ANVIL_STEP_PATCHED,
               ANVIL_STEP_REUSED } anvil_step_kind_t;
typedef struct anvil_planner_stats {
  int64_t planned, replanned, patched, reused; /* steps of each kind since creation */
  int32_t last;                                /* the latest step's anvil_step_kind_t */
  double last_estimate_us;                     /* the drift rule's estimate of the latest
                                                  patched or reused plan */
  int64_t races;                               /* fresh plans of `auto` that simulated its
                                                  candidates (the others planned with the
                                                  candidate it chose last) */
} anvil_planner_stats_t;

/* Plans with `scheduler` and "key=value" params on target t (borrowed: it must outlive the
 * planner) for batches of the given block size and heads (NULL: the defaults). */
int anvil_planner_create(anvil_target_t *t, const char *scheduler, const char *const *params,
                         int n_params, int block_size, const anvil_heads_t *heads,
                         anvil_planner_t **out, anvil_error_t *err);
void anvil_planner_destroy(anvil_planner_t *pl);

/* One step: the block table as in anvil_workload_from_block_table (rows are requests; a
 * request keeps its blocks from step to step, arrivals and finishes insert and remove rows).
 * *reused (may be NULL) is 1 when the previous plan was kept (reused or patched), 0 when the
 * step planned anew. After an error the planner plans the next step anew. */
int anvil_planner_step(anvil_planner_t *pl, const int32_t *table, int64_t row_stride,
                       const int32_t *kv_tokens, int32_t n_requests, int *reused,
                       anvil_error_t *err);
/* The plan of the latest step (NULL before the first). Borrowed: valid until the next step
 * or anvil_planner_destroy; it changes in place when a step reuses it. */
const anvil_plan_t *anvil_planner_plan(const anvil_planner_t *pl);
/* Steps planned anew (planned + replanned) and steps that kept the plan (reused + patched). */
void anvil_planner_counts(const anvil_planner_t *pl, int64_t *planned, int64_t *reused);
void anvil_planner_stats(const anvil_planner_t *pl, anvil_planner_stats_t *out);
/* The drift bound (ANVIL_PLANNER_DRIFT when not set; 0 plans anew whenever a patch makes the
 * plan's estimate worse per unique KV token). */
int anvil_planner_set_drift(anvil_planner_t *pl, double bound, anvil_error_t *err);
/* The drift rule's estimate (us) of the current plan, -1 before the first step. */
double anvil_planner_estimate_us(anvil_planner_t *pl);

#ifdef __cplusplus
}
#endif
#endif
