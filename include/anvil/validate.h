/* Validation (`anvil validate`): every batch x scheduler of an experiment run on this GPU by
 * the executor and compared with the simulator's prediction, or, offline (no GPU), a
 * recorded report's measurements compared with predictions made again; the report written
 * (DIR/validation.json, DIR/validation.csv), then handed over: one row per pair and the
 * statistics it is read by (docs/validation.md). */
#ifndef ANVIL_VALIDATE_H
#define ANVIL_VALIDATE_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One (batch, scheduler) pair; borrowed for the callback's call only. */
typedef struct anvil_validate_row {
  const char *batch, *scheduler;    /* scheduler: the experiment's label for it */
  const char *shown;                /* the scheduler as the tables show it: an `auto` row adds
                                       the candidate it chose and its predicted margin over
                                       the runner-up ("auto→greedy_division (+3.1 %)") */
  int q_heads, kv_heads;
  double floor_us, predicted_us;
  double measured_us, measured_min_us, measured_max_us;  /* median, min, max of timed runs */
  double replayed_us;               /* with trace: measured CTAs replayed; NaN without */
  double max_rel_err;               /* the executor's check against fp64 attention */
  int deterministic;
  int32_t ctas;
  const char *params;               /* the scheduler's parameters as planned */
  const char *same_as;              /* the scheduler whose identical plan's measurement this
                                       row shares, or NULL */
} anvil_validate_row_t;
/* Returns 0 to go on; any other value stops, and the call returns ANVIL_ERR_USAGE. */
typedef int (*anvil_validate_row_fn)(const anvil_validate_row_t *row, void *user);

typedef struct anvil_validate_scheduler {
  const char *scheduler;
  int pairs;
  double mape, worst_ape, spearman;
} anvil_validate_scheduler_t;

/* The report's statistics; borrowed for the callback's call only. */
typedef struct anvil_validate_summary {
  const char *experiment, *device, *spec;
  const char *dir;                  /* where the report went; NULL: not written */
  int offline;                      /* 1: re-predicted from `record` */
  const char *record;
  int changed_plans, auto_switched; /* offline: plans unlike the recorded ones; batches on
                                       which auto chose another plan */
  int rows;                         /* 0: nothing below holds */
  int n_schedulers;                 /* the schedulers with statistics, in order */
  const anvil_validate_scheduler_t *schedulers;
  int overall;                      /* 1: the fields up to auto_within_frac hold */
  int pairs;
  double mape, worst_ape;
  const char *worst_batch, *worst_scheduler;
  double spearman, kendall;
  int best_agree, n_batches;        /* batches whose predicted best plan is the measured best */
  double regret_mean, regret_max;
  int auto_batches, auto_within;    /* batches auto ran on, and those within 5% of the best */
  double auto_within_frac;
  int dispatch_pairs, cost_pairs;   /* with trace: traced pairs (0: no statistic) */
  double dispatch_mape, cost_mape;
} anvil_validate_summary_t;

/* What a validation says as it goes (on_note). */
enum { ANVIL_NOTE_PROGRESS = 0, ANVIL_NOTE_NOTE = 1, ANVIL_NOTE_WARNING = 2 };

typedef struct anvil_validate_options {
  const char *experiment;           /* required unless offline */
  const char *offline;              /* a recorded validation.json: re-predict it, no GPU */
  const char *out_dir;              /* NULL: out/<experiment name>/validation (offline: none) */
  const char *trace_of;             /* batch whose timelines are written (with trace) */
  const char *gpu_spec;             /* this device's GPU spec when it is not recognised */
  const char *spec;                 /* calibrated spec; NULL: profiles/<gpu>.spec.json if any */
  int trace;                        /* record per-CTA timelines and replay them */
  int no_calibration;               /* predict with gpus/<gpu>.json as is */
  int resume;                       /* take the batches a stopped validation finished */
  int repeats;                      /* timed runs per plan; 0: 20 */
  int shard_index, shard_count;     /* measure shard I of N of the batches; 0, 0: all */
  const char *command;              /* recorded in the report; NULL: none */
  /* May be NULL: measures the batches in processes of their own once the checks pass, each
   * writing DIR/shards/k/validation.journal.jsonl for k < *n_shards (`anvil validate
   * --devices`); their journals become this validation's. */
  int (*run_shards)(const char *dir, int *n_shards, void *user, anvil_error_t *err);
  void (*on_note)(int kind, const char *text, void *user);   /* may be NULL */
  void (*on_summary)(const anvil_validate_summary_t *s, void *user);  /* may be NULL */
} anvil_validate_options_t;

/* Validates, then calls on_row (may be NULL) for each pair and on_summary once; all
 * callbacks get `user`. Errors are those `anvil validate` prints. */
int anvil_validate(const anvil_validate_options_t *o, anvil_validate_row_fn on_row, void *user,
                   anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
