/* The proofs: the plan checker (proofs/plan_check.c) proves a plan exact for its workload,
 * and the CPU reference (proofs/reference.c) runs it in fp64 and compares with plain
 * attention per request. Every scheduler's every plan passes both (docs/design.md#proofs-proofs). */
#ifndef AV_PROOFS_H
#define AV_PROOFS_H

#include <stdint.h>

#include "core/error.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"

/* --- checker ---------------------------------------------------------------------- */
/* Proves the plan exact for w: for every request and every token of its KV path exactly one
 * item covers the pair; every item's queries all contain its segments on their paths; items
 * fit their tile (n_q x group <= m_rows); FINAL items cover their queries' whole paths;
 * every partial slot is merged exactly once, into its own request; every request gets an
 * output; launches, streams and persistent queues are consistent. On failure the message
 * names the first offending item/request/token. */
int av_plan_check(const av_plan_t *p, const av_workload_t *w, av_error_t *err);
/* Every launch's tile is a compiled kernel variant for the plan's head dim and dtype on some
 * architecture (av_variants_require, the rule the simulator applies for its GPU): a plan
 * edited by hand to a tile no kernel has is refused at its launch, naming the tile. */
int av_plan_check_tiles(const av_plan_t *p, const av_variants_t *vs, av_error_t *err);

/* --- CPU reference -------------------------------------------------------------- */
typedef struct av_reference_result {
  double max_rel_err;          /* over all checked (request, head) outputs */
  int32_t worst_request;
  int32_t checked;             /* (request, q-head) pairs compared */
} av_reference_result_t;
typedef struct av_reference_opts {
  uint64_t seed;               /* Q/K/V are a pure function of (seed, position) */
  int dim;                     /* head dim to compute with; 0 = the workload's. Property tests
                                  use a small one: the composition math does not depend on d */
  int32_t max_requests;        /* compare at most this many requests (spread evenly); 0 = all */
} av_reference_opts_t;
/* Runs the plan in fp64 on seeded random Q/K/V for one KV head and its GQA group of query
 * heads: partial attention per item, log-sum-exp merge in the plan's order, compared with
 * direct attention per request. */
int av_reference_run(const av_plan_t *p, const av_workload_t *w,
                     const av_reference_opts_t *opts, av_reference_result_t *out,
                     av_error_t *err);

#endif
