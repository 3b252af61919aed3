/* The report of `anvil validate`: one row per (batch, scheduler) with the prediction, the
 * measurement and their error, the experiment's statistics (pipeline/compare.h) overall and
 * per scheduler, and with --trace the replayed makespan that splits the error into dispatch
 * and cost-model parts. Written as validation.json and validation.csv, both or neither. */
#ifndef AV_CLI_VALIDATE_REPORT_H
#define AV_CLI_VALIDATE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "pipeline/compare.h"
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
/* What a validation says as it goes, one line each: progress (a batch done, or taken from
 * the journal; a plan measured once for two schedulers), notes and warnings. */
enum { AV_VNOTE_PROGRESS = 0, AV_VNOTE_NOTE = 1, AV_VNOTE_WARNING = 2 };
typedef void (*av_vnote_fn)(int kind, const char *text, void *user);
/* Formats the line and passes it to fn (nothing when fn is NULL). */
void av_vnote(av_vnote_fn fn, void *user, int kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The statistics the report is read by (pipeline/compare.h): per scheduler, overall, and
 * with --trace the dispatch and cost-model parts of the error. */
typedef struct av_vsched_stat {
  int sched;                    /* experiment scheduler index */
  int pairs;
  double mape, worst_ape, spearman;
} av_vsched_stat_t;
typedef struct av_vsummary {
  int any;                      /* 0: the report has no rows, nothing below holds */
  int n_sched_stats;
  av_vsched_stat_t *sched_stats; /* the schedulers with statistics, in order; owned */
  int overall;                  /* 1: s, worst_batch and worst_sched hold */
  av_cmp_summary_t s;
  int worst_batch, worst_sched; /* the pair of the worst error */
  int dispatch_pairs, cost_pairs; /* traced pairs (0: no statistic) */
  double dispatch_mape, cost_mape;
} av_vsummary_t;
/* Fills *out (free with av_vsummary_free). */
int av_vreport_summarize(const av_vreport_t *r, av_vsummary_t *out, av_error_t *err);
void av_vsummary_free(av_vsummary_t *s);


#endif
