/* The measuring loop of `anvil validate EXP.json`: every (batch, scheduler) of an experiment
 * on this GPU (e->gpus[0], the device's spec) is planned, proved exact, predicted by the
 * simulator and measured by the GPU executor (unless an earlier scheduler of the batch made
 * the same plan). With a journal, finished batches are recorded as they complete and, when
 * the journal already holds them (--resume), taken from it instead of measured again. */
#ifndef AV_PIPELINE_VALIDATE_H
#define AV_PIPELINE_VALIDATE_H

#include "core/error.h"
#include "core/variants.h"
#include "pipeline/experiment.h"
#include "pipeline/validate_journal.h"
#include "pipeline/validate_report.h"

typedef struct av_validate_opts {
  int trace;                 /* record per-CTA timelines, replay them (dispatch vs cost) */
  const char *trace_of;      /* batch whose timelines are written; NULL: the first */
  int repeats;               /* timed runs per plan (median) */
  const char *dir;           /* output directory (traces/ goes there) */
  av_vjournal_t *journal;    /* may be NULL */
  int shard, shards;         /* shards > 1: measure only the batches av_validate_shard_assign
                                gives this shard (the others are left out of the report and
                                the journal) */
  av_vnote_fn note;          /* may be NULL: progress lines */
  void *note_user;
} av_validate_opts_t;

/* Which of `shards` shards measures each batch (shard_of: e->n_batches entries): the largest
 * batches first (the bytes the executor moves), each to the shard with the least so far, so
 * that shards of a mixed experiment finish together. A pure function of the experiment. */
int av_validate_shard_assign(const av_experiment_t *e, int shards, int *shard_of);

/* Appends one report row per (batch, scheduler) to rep, in order. */
int av_validate_run(const av_experiment_t *e, const av_variants_t *vs,
                    const av_validate_opts_t *o, av_vreport_t *rep, av_error_t *err);

#endif
