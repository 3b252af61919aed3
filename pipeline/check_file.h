/* `anvil check PLAN.json` as a library call: the plan checker (every (request, token)
 * covered exactly once, merges complete), every launch's tile a compiled kernel variant, and
 * the fp64 CPU reference (partial attention + log-sum-exp merge vs direct attention per
 * request) within a tolerance. Nothing is printed. */
#ifndef AV_PIPELINE_CHECK_FILE_H
#define AV_PIPELINE_CHECK_FILE_H

#include <stdint.h>

#include "core/error.h"
#include "proofs/proofs.h"

/* The plan proved exact; borrowed for the callback's call only. */
typedef struct av_check_exact {
  const char *scheduler;
  int32_t items, launches, requests, nodes;
} av_check_exact_t;

typedef struct av_check_file_opts {
  const char *path;              /* the plan (with its workload) */
  av_reference_opts_t ref;       /* the CPU reference's seed, head dim and requests */
  double tolerance;              /* its largest relative error that passes */
  int no_reference;              /* prove only */
  void (*exact)(const av_check_exact_t *x, void *user);  /* may be NULL */
  /* May be NULL: the reference's result, before it is held to the tolerance. */
  void (*reference)(const av_reference_result_t *r, void *user);
} av_check_file_opts_t;

/* Proves, then runs the reference (unless no_reference). A plan that is not exact, or a
 * reference off by more than the tolerance, is AV_ERR_PLAN naming the file. */
int av_check_file(const av_check_file_opts_t *o, void *user, av_error_t *err);

#endif
