/* `anvil validate --offline VALIDATION.json`: re-predicts the (batch, scheduler) pairs of a
 * recorded validation report with the current simulator and recomputes every statistic
 * against the recorded measurements. No GPU: plans are re-planned deterministically from the
 * experiment the report names. */
#ifndef AV_CLI_VALIDATE_OFFLINE_H
#define AV_CLI_VALIDATE_OFFLINE_H

/* Options of the offline path (parsed by cli/cmd_validate.c). */
typedef struct av_voffline_opts {
  const char *record;   /* the recorded validation.json */
  const char *exp;      /* experiment file; NULL = the report's "file" */
  const char *out;      /* output directory; NULL = print only */
  const char *spec;     /* calibrated spec; NULL = profiles/<gpu>.spec.json when present */
  int no_cal;           /* predict with gpus/<gpu>.json */
  const char *command;  /* the command line, for the report */
} av_voffline_opts_t;

/* Runs it, printing the report to stdout; AV_OK or the first error (in err). */
int av_validate_offline(const av_voffline_opts_t *o, av_error_t *err);

#endif
