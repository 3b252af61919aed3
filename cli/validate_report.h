/* The report of `anvil validate`: one row per (batch, scheduler) with the prediction, the
 * measurement and their error, the experiment's statistics (validation/compare.h) overall and
 * per scheduler, and with --trace the replayed makespan that splits the error into dispatch
 * and cost-model parts. Written as validation.json and validation.csv, both or neither. */
#ifndef AV_CLI_VALIDATE_REPORT_H
#define AV_CLI_VALIDATE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "cli/experiment.h"
#include "sim/error.h"

typedef struct av_vrow {
  int batch, sched;
  double floor_us;
  double predicted_us;          /* simulator */
  double measured_us, min_us, max_us; /* executor: median, min, max of the timed runs */
  double replayed_us;           /* --trace: measured CTA durations through the dispatch
                                   model; NaN without */
  double max_rel_err;           /* executor's check against fp64 attention */
  int64_t unwritten;
  int deterministic;
  int32_t ctas;
  char params[256];
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
void av_vreport_free(av_vreport_t *r);

/* Writes DIR/validation.json and DIR/validation.csv (creating DIR). */
int av_vreport_write(const av_vreport_t *r, const char *dir, av_error_t *err);
/* Per-scheduler table and the headline numbers. */
void av_vreport_print(FILE *f, const av_vreport_t *r);

#endif
