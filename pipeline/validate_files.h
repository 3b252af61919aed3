/* `anvil validate` as a library call: every batch x scheduler of an experiment run on this
 * GPU and compared with the simulator's prediction (pipeline/validate.h), or, offline, a
 * recorded report re-predicted (pipeline/validate_offline.h); the report written as
 * DIR/validation.json and DIR/validation.csv and handed over; nothing is printed. The device
 * must be the GPU the experiment names (executor/device_id.h); predictions use the
 * calibrated spec the profiler wrote (profiles/<gpu>.spec.json) when there is one. Each
 * finished batch is journaled (DIR/validation.journal.jsonl), so a validation stopped
 * part-way continues with `resume`. */
#ifndef AV_PIPELINE_VALIDATE_FILES_H
#define AV_PIPELINE_VALIDATE_FILES_H

#include "core/error.h"
#include "pipeline/validate_offline.h"
#include "pipeline/validate_report.h"

#define AV_VALIDATE_MAX_SHARDS 64

typedef struct av_validate_files_opts {
  const char *experiment;    /* required unless offline */
  const char *offline;       /* a recorded validation.json: re-predict it, no GPU */
  const char *out;           /* NULL: out/<experiment name>/validation (offline: no files) */
  const char *trace_of;      /* batch whose timelines are written (with trace) */
  const char *gpu_spec;      /* GPU spec of this device when it is not recognised */
  const char *spec;          /* calibrated spec; NULL: profiles/<gpu>.spec.json if present */
  int trace, no_cal, resume, repeats;
  int shard, shards;         /* shards > 1: measure this shard's batches only */
  const char *command;       /* the command line, recorded in the report */
  /* May be NULL. Measures the batches in shard processes of their own (`--devices`) once
   * the checks pass, each writing DIR/shards/k/validation.journal.jsonl, k < *n_shards;
   * their journals then become this validation's. */
  int (*run_shards)(const char *dir, int *n_shards, void *user, av_error_t *err);
  av_vnote_fn note;          /* may be NULL: progress, notes and warnings */
  av_vdone_fn done;          /* may be NULL: the report, once written */
} av_validate_files_opts_t;

/* Validates; callbacks get `user`. Messages name "validate" and the option a user gave, as
 * the `anvil` program prints them. */
int av_validate_files(const av_validate_files_opts_t *o, void *user, av_error_t *err);

#endif
