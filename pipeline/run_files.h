/* `anvil run` as a library call: an experiment's rows run (pipeline/run.h) with their files
 * written as one unit (pipeline/results_dir.h: results.json, results.csv, journal.jsonl and,
 * when asked, one row's CTA timeline), then handed over row by row
 * (pipeline/results_hand.h); nothing is printed. Options and paths are checked before any
 * row runs; a killed run resumes from its journal; shards and MPI ranks split the rows. */
#ifndef AV_PIPELINE_RUN_FILES_H
#define AV_PIPELINE_RUN_FILES_H

#include "core/error.h"
#include "pipeline/results_hand.h"
#include "pipeline/run.h"

typedef struct av_run_files_opts {
  const char *experiment;    /* the experiment file (required) */
  const char *out_dir;       /* NULL: out/<experiment name> */
  const char *timeline;      /* NULL, or where one row's CTA timeline is written */
  const char *timeline_of;   /* "[GPU/]WORKLOAD[/LABEL]": that row (NULL: the first) */
  int jobs;                  /* worker threads */
  int shard_index, shard_count;
  int resume;                /* continue a killed run from its journal */
  av_run_progress_fn progress;  /* may be NULL */
  void *progress_user;
} av_run_files_opts_t;

/* Runs, writes, hands the rows over. Under mpirun every rank runs rows and only rank 0
 * writes and hands over: *root (may be NULL) says which this is. Messages name "run" and
 * the option a user gave, as the `anvil` program prints them. */
int av_run_files(const av_run_files_opts_t *o, av_results_head_fn on_head,
                 av_results_row_fn on_row, void *user, int *root, av_error_t *err);

#endif
