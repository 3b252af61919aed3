/* `anvil validate --offline VALIDATION.json`: re-predicts the (batch, scheduler) pairs of a
 * recorded validation report with the current simulator and recomputes every statistic
 * against the recorded measurements. No GPU: plans are re-planned deterministically from the
 * experiment the report names. */
#ifndef AV_CLI_VALIDATE_OFFLINE_H
#define AV_CLI_VALIDATE_OFFLINE_H

#include "core/error.h"
#include "pipeline/validate_report.h"

/* A finished validation, handed over once its files are written. */
typedef struct av_vdone {
  const av_vreport_t *rep;
  const char *dir;           /* where validation.json and .csv went; NULL: not written */
  int offline;               /* 1: re-predicted from `record` */
  const char *record;
  int changed_plans;         /* offline: plans that differ from the recorded ones */
  int auto_switched;         /* offline: batches on which auto chose another plan */
} av_vdone_t;
/* A non-zero return fails the call with that status (err filled). */
typedef int (*av_vdone_fn)(const av_vdone_t *d, void *user, av_error_t *err);

/* Options of the offline path (pipeline/validate_files.c fills them). */
typedef struct av_voffline_opts {
  const char *record;   /* the recorded validation.json */
  const char *exp;      /* experiment file; NULL = the report's "file" */
  const char *out;      /* output directory; NULL = print only */
  const char *spec;     /* calibrated spec; NULL = profiles/<gpu>.spec.json when present */
  int no_cal;           /* predict with gpus/<gpu>.json */
  const char *command;  /* the command line, for the report */
  av_vnote_fn note;     /* may be NULL: warnings as plans are re-made */
  av_vdone_fn done;     /* may be NULL: the report, once written */
  void *user;           /* of note and done */
} av_voffline_opts_t;

/* Runs it, then hands the report to o->done; AV_OK or the first error (in err). */
int av_validate_offline(const av_voffline_opts_t *o, av_error_t *err);

#endif
