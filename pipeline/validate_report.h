/* The report of `anvil validate`: one row per (batch, scheduler) with the prediction, the
 * measurement and their error, the experiment's statistics (pipeline/compare.h) overall and
 * per scheduler, and with --trace the replayed makespan that splits the error into dispatch
 * and cost-model parts. Written as validation.json and validation.csv, both or neither. */
#ifndef AV_CLI_VALIDATE_REPORT_H
#define AV_CLI_VALIDATE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "pipeline/experiment.h"
#include "core/error.h"
#include "core/plan.h"

typedef struct av_vrow {
  int batch, sched;
  av_floor_t floor;             /* roofline floor: bytes, FLOPs, the larger */
  double predicted_us;          /* simulator */
  double measured_us, min_us, max_us; /* executor: median, min, max of the timed runs */
  double replayed_us;           /* --trace: measured CTA durations through the dispatch
                                   model; NaN without */
  double max_rel_err;           /* executor's check against fp64 attention */
  int64_t unwritten;
  int deterministic;
  int32_t ctas;
  char params[256];
  int same_as;                  /* scheduler index of an earlier row of the batch with the
                                   identical plan, whose measurement this row shares; -1 */
} av_vrow_t;

typedef struct av_vreport {
  const av_experiment_t *e;
  char device[256];             /* the CUDA device, as identified */
  char spec[512];               /* which GPU spec predicted (file) */
  char command[1024];
  int repeats;
  int n, cap;
  av_vrow_t *rows;
} av_vreport_t;

av_vrow_t *av_vreport_add(av_vreport_t *r);

/* One batch's distinct plans so far and the report row that measured each: a scheduler whose
 * plan is structurally equal to an earlier one's shares that measurement (online: it is not
 * timed again; offline: the recorded row of the first is used), so the GPU's run-to-run
 * spread between two timings of one plan never reads as a difference between schedulers. */
typedef struct av_vseen {
  av_plan_t **plan;
  int *row;
  int n, cap;
} av_vseen_t;
int av_vseen_init(av_vseen_t *s, int cap, av_error_t *err);
void av_vseen_free(av_vseen_t *s);   /* destroys the kept plans */
/* Index (into s) of a kept plan equal to p, or -1. */
int av_vseen_find(const av_vseen_t *s, const av_plan_t *p);
/* Keeps p (s takes ownership) measured by report row `row`; at most cap plans. */
void av_vseen_keep(av_vseen_t *s, av_plan_t *p, int row);
/* Copies the measurement of `from` into `row` and marks it as from's plan. */
void av_vrow_share(av_vrow_t *row, const av_vrow_t *from);
void av_vreport_free(av_vreport_t *r);

/* Writes DIR/validation.json and DIR/validation.csv (creating DIR). */
int av_vreport_write(const av_vreport_t *r, const char *dir, av_error_t *err);
/* Per-scheduler table and the headline numbers. */
void av_vreport_print(FILE *f, const av_vreport_t *r);

#endif
