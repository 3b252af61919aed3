/* `anvil exec` as a library call: an experiment's plans (or one saved plan) run on the GPU.
 * Every batch's paged KV cache is built once on the device; each scheduler's plan is
 * checked, verified against fp64 attention (outputs poisoned, fully written, merge
 * deterministic), optionally traced per CTA, and timed (median of repeats, L2 flushed between
 * them). Each row is handed over as it finishes; the results file (JSON) and CSV are written
 * once everything ran; nothing is printed. The device is identified first
 * (executor/device_id.h) and plans are made for its GPU spec, which the experiment must list:
 * a plan for one GPU is never run and reported as another's (docs/validation.md). */
#ifndef AV_PIPELINE_EXEC_EXPERIMENT_H
#define AV_PIPELINE_EXEC_EXPERIMENT_H

#include "core/error.h"
#include "core/plan.h"
#include "executor/executor.h"
#include "pipeline/autotune.h"

/* One plan run, or refused (error set: e.g. a tile that is not compiled); borrowed for the
 * callback's call only. */
typedef struct av_exec_row {
  const char *batch, *sched;
  const char *error;         /* "" when it ran */
  av_heads_t heads;
  const av_exec_result_t *r; /* NULL when refused */
  double floor_frac;         /* unique KV bytes at the read-stream bandwidth / median (0: none) */
  int pass;                  /* verified within tolerance (1 when verification is off) */
  const av_autotune_result_t *tune;  /* auto's plan chosen by autotune, else NULL */
} av_exec_row_t;

typedef struct av_exec_hooks {
  void (*note)(const char *text, void *user);
  /* The device identified and its spec picked. */
  void (*device)(const char *device, const char *spec, void *user);
  /* The device's copy and read-stream bandwidths measured (with copy_bw). */
  void (*copy_bw)(double copy_GBps, double read_GBps, void *user);
  /* Everything loaded, before the first plan runs. */
  void (*start)(void *user);
  /* A non-zero return stops the run with that status (err filled by the hook). */
  int (*row)(const av_exec_row_t *row, void *user, av_error_t *err);
} av_exec_hooks_t;

typedef struct av_exec_experiment_opts {
  const char *experiment, *plan;  /* exactly one */
  const char *out, *csv;          /* results JSON and CSV (written when every row ran) */
  const char *trace_dir;          /* each row's per-CTA timeline */
  const char *only;               /* only batches whose name contains it */
  const char *gpu_spec;           /* this device's spec when it is not recognised */
  const char *autotune_cache;
  int all_schedulers, copy_bw, check_requests;
  int autotune;                   /* K; 0 = off */
  int kv_copy;                    /* av_kv_copy_t; -1: the experiment's */
  av_exec_opts_t eo;              /* warm-up, repeats, verification, L2 flush (trace: set
                                     from trace_dir) */
  av_exec_hooks_t hooks;          /* each may be NULL */
} av_exec_experiment_opts_t;

typedef struct av_exec_summary {
  int run, failed, not_run;       /* plans run, failing verification, refused */
} av_exec_summary_t;

/* Runs; hooks get `user`. Messages name "exec" and the option a user gave, as the `anvil`
 * program prints them. */
int av_exec_experiment(const av_exec_experiment_opts_t *o, void *user, av_exec_summary_t *out,
                       av_error_t *err);

#endif
