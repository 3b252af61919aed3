/* Checking a plan file (`anvil check PLAN.json`): the checker proves every (request, token)
 * covered exactly once and every merge complete, every launch's tile must be a compiled
 * kernel variant, and the fp64 CPU reference (partial attention + log-sum-exp merge) must
 * match direct attention per request within a tolerance. */
#ifndef ANVIL_CHECK_H
#define ANVIL_CHECK_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plan proved exact; borrowed for the callback's call only. */
typedef struct anvil_check_exact {
  const char *scheduler;
  int32_t items, launches, requests, nodes;
} anvil_check_exact_t;

/* The reference's comparison with direct attention. */
typedef struct anvil_check_reference {
  double max_rel_err;
  int32_t checked;                /* (request, query head) pairs compared */
  int32_t worst_request;
} anvil_check_reference_t;

typedef struct anvil_check_options {
  const char *path;               /* the plan file (required) */
  uint64_t seed;                  /* the reference's Q/K/V are a function of it */
  int32_t max_requests;           /* compare at most this many requests; 0: all */
  int dim;                        /* head dim to compute with; 0: the workload's */
  double tolerance;               /* the largest relative error that passes */
  int no_reference;               /* prove only */
  /* Each may be NULL; both get anvil_check's user pointer. on_reference comes before the
   * result is held to the tolerance. */
  void (*on_exact)(const anvil_check_exact_t *x, void *user);
  void (*on_reference)(const anvil_check_reference_t *r, void *user);
} anvil_check_options_t;

/* The defaults of `anvil check`: seed 1, tolerance 1e-9, every request, the workload's head
 * dim, the reference on. */
void anvil_check_options_default(anvil_check_options_t *o);

/* Checks. A plan that is not exact, a tile no kernel has, or a reference off by more than
 * the tolerance is ANVIL_ERR_PLAN (or the loader's error), naming the file, as `anvil check`
 * prints it. */
int anvil_check(const anvil_check_options_t *o, void *user, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
