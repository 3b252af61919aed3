/* Handing an experiment's results over to a caller, row by row, after `run` or `merge` has
 * written them: the experiment they belong to first, then each row in row order. The
 * `anvil` program prints its table from them; the public API passes them on. */
#ifndef AV_PIPELINE_RESULTS_HAND_H
#define AV_PIPELINE_RESULTS_HAND_H

#include "pipeline/experiment.h"
#include "pipeline/results.h"

/* What the rows belong to; borrowed for the call only. */
typedef struct av_results_head {
  const av_experiment_t *e;
  const char *dir;           /* the results directory written */
  const char *timeline;      /* the timeline file written, or NULL */
  int rows, failed;          /* rows handed over, and how many of them failed */
} av_results_head_t;
typedef void (*av_results_head_fn)(const av_results_head_t *h, void *user);
/* One row; a non-zero return stops the handing over with that status (err filled). */
typedef int (*av_results_row_fn)(const av_experiment_t *e, const av_result_row_t *x,
                                 void *user, av_error_t *err);

/* Calls on_head (may be NULL) once, then on_row (may be NULL) for every row of r. */
int av_results_hand(const av_results_head_t *h, const av_results_t *r, av_results_head_fn on_head,
                    av_results_row_fn on_row, void *user, av_error_t *err);

#endif
