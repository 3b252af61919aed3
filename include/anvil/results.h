/* Experiments with their files (`anvil run`, `anvil merge`): the rows planned, proved and
 * predicted (or merged from shards), the results directory written as one unit
 * (results.json, results.csv, journal.jsonl), then each row handed to a callback: the
 * columns of the table `anvil run` prints. */
#ifndef ANVIL_RESULTS_H
#define ANVIL_RESULTS_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the rows belong to; borrowed for the callback's call only. */
typedef struct anvil_results_head {
  const char *name, *path;       /* the experiment's name and file */
  const char *sim, *cost_model;  /* its simulator model and cost model */
  const char *launch;            /* its launch model; NULL for the default (streams) */
  int n_gpus, n_batches;
  const char *dir;               /* the results directory written */
  const char *timeline;          /* the timeline file written, or NULL */
  int rows, failed;              /* rows handed over, and how many of them failed */
} anvil_results_head_t;
typedef void (*anvil_results_head_fn)(const anvil_results_head_t *h, void *user);

/* One row (GPU, batch, scheduler); borrowed for the callback's call only. */
typedef struct anvil_result_row {
  int64_t index;                 /* (gpu x n_batches + batch) x n_schedulers + scheduler */
  const char *gpu, *batch, *scheduler;  /* scheduler: the experiment's label for it */
  const char *shown;             /* the scheduler as the table shows it: an `auto` row adds
                                    the candidate it chose and its predicted margin over the
                                    runner-up ("auto→profit_pack (+3.1 %)") */
  int q_heads, kv_heads;
  int status;                    /* ANVIL_OK, or the code of a row that failed alone */
  const char *error;             /* its message ("" when it succeeded) */
  int32_t items;
  double unique_kv_bytes, query_centric_kv_bytes, sharing_ratio;
  double floor_us, predicted_us;
} anvil_result_row_t;
/* Returns 0 to go on; any other value stops, and the call returns ANVIL_ERR_USAGE. */
typedef int (*anvil_result_row_fn)(const anvil_result_row_t *row, void *user);

/* Where a run stands (anvil_run_options_t.progress). */
typedef struct anvil_run_progress {
  int64_t done, total, resumed, failed;  /* rows: finished, of this run, from the journal */
  double elapsed_s;
} anvil_run_progress_t;

typedef struct anvil_run_options {
  const char *experiment;        /* the experiment file (required; docs/experiments.md) */
  const char *out_dir;           /* NULL: out/<experiment name> */
  const char *timeline;          /* NULL, or where one row's CTA timeline is written */
  const char *timeline_of;       /* "[GPU/]WORKLOAD[/LABEL]": that row (NULL: the first) */
  int jobs;                      /* worker threads; 0 or 1: the calling thread */
  int shard_index, shard_count;  /* every shard_count-th batch from shard_index; 0, 0: all */
  int resume;                    /* continue a killed run from its journal */
  /* May be NULL; called from worker threads, one call at a time, with anvil_run_files's user. */
  void (*progress)(const anvil_run_progress_t *p, void *user);
  anvil_results_head_fn on_head; /* may be NULL; once, before the rows */
} anvil_run_options_t;

/* Runs the experiment and writes its results directory, then calls on_head and on_row
 * (both may be NULL) for its rows. A row that fails alone is handed over failed and does not
 * fail the call. Under mpirun only rank 0 writes and hands over: *root (may be NULL) says
 * whether this process is it. Errors are those `anvil run` prints. */
int anvil_run_files(const anvil_run_options_t *o, anvil_result_row_fn on_row, void *user,
                    int *root, anvil_error_t *err);
/* A shard "I/N" (0 <= I < N, N >= 1) given as option `opt`: ANVIL_ERR_USAGE naming the
 * option and the value otherwise. */
int anvil_shard_parse(const char *text, const char *opt, int *index, int *count,
                      anvil_error_t *err);
/* 1 on MPI rank 0 and whenever MPI is not in use (starts MPI under mpirun). */
int anvil_run_is_root(void);
/* Ends MPI when a run started it; returns rank 0's `status` on every rank. Without MPI it
 * returns status. */
int anvil_run_finish(int status);

typedef struct anvil_merge_options {
  const char *const *dirs;       /* the shards' result directories */
  int n_dirs;
  const char *out;               /* the merged results directory (required) */
  const char *experiment;        /* NULL: the file the shards' journals name */
  anvil_results_head_fn on_head; /* may be NULL; once, before the rows */
} anvil_merge_options_t;

/* Merges the shards' directories into one result set, byte-identical to a single run, then
 * hands its rows over. Errors are those `anvil merge` prints. */
int anvil_merge(const anvil_merge_options_t *o, anvil_result_row_fn on_row, void *user,
                anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
