/* Results of `anvil run`: one row per (GPU, batch, scheduler), printed as a table and
 * written as results.json and results.csv. A row that could not be planned, checked or
 * simulated is kept as a failed row (status "failed" and its message); the output directory
 * is written as one unit by pipeline/results_dir.h. */
#ifndef AV_CLI_RESULTS_H
#define AV_CLI_RESULTS_H

#include <jansson.h>
#include <stdint.h>

#include "pipeline/experiment.h"
#include "core/error.h"
#include "core/plan.h"
#include "sim/sim.h"

typedef struct av_result_row {
  int64_t index;                     /* row number: (gpu x n_batches + batch) x n_scheds + sched */
  int gpu, batch, sched;             /* indices into the experiment */
  int status;                        /* AV_OK, or the error code of a failed row */
  char error[400];                   /* a failed row's message ("" when it succeeded) */
  av_workload_stats_t ws;
  av_plan_stats_t ps;
  av_floor_t floor;                  /* roofline floor: bytes, FLOPs, the larger */
  double predicted_us, partial_us, merge_us;
  double hbm_bytes, l2_bytes, achieved_bw_GBps, bubble_frac;
  char params[256];                  /* the scheduler's parameters as planned */
} av_result_row_t;

typedef struct av_results {
  int n, cap;
  av_result_row_t *rows;
} av_results_t;

/* Appends a zeroed row; NULL when out of memory. */
av_result_row_t *av_results_add(av_results_t *r);
void av_results_free(av_results_t *r);
/* Rows of the experiment: GPUs x batches x schedulers. */
int64_t av_results_row_count(const av_experiment_t *e);
/* Sets a row's index and experiment indices from its row number. */
void av_results_row_locate(const av_experiment_t *e, int64_t index, av_result_row_t *row);
/* Failed rows in r. */
int av_results_failed(const av_results_t *r);

/* The results document: experiment, model settings and every row. Caller owns. */
json_t *av_results_to_json(const av_experiment_t *e, const av_results_t *r);
/* CSV text, one header line then one line per row. Caller frees. */
char *av_results_to_csv(const av_experiment_t *e, const av_results_t *r);
/* Writes DIR/results.json and DIR/results.csv into an existing directory (the staging
 * directory of pipeline/results_dir.h, which makes the set atomic). */
int av_results_write(const av_experiment_t *e, const av_results_t *r, const char *dir,
                     av_error_t *err);
#endif
