/* Running an experiment: every row (GPU, batch, scheduler) is planned, proved exact by the
 * plan checker and predicted by the simulator. Rows are numbered
 *     index = (gpu x n_batches + batch) x n_schedulers + scheduler
 * and results come back in that order whatever the number of worker threads, so results
 * are byte-identical for any --jobs, for a resumed run and for merged shards. A row that
 * fails is recorded as failed with its message; the other rows still run.
 *
 * Typical use (what `anvil run` does):
 *     av_run_opts_t o;
 *     av_run_opts_default(&o);
 *     o.jobs = 4;
 *     av_results_t r = {0};
 *     if (av_run_experiment(e, &o, &r, &err)) ...   // the run itself failed
 *     av_results_failed(&r)                          // rows that failed alone
 */
#ifndef AV_PIPELINE_RUN_H
#define AV_PIPELINE_RUN_H

#include <stdint.h>

#include "core/error.h"
#include "core/plan.h"
#include "pipeline/experiment.h"
#include "pipeline/results.h"
#include "pipeline/results_journal.h"
#include "sim/sim.h"

/* Where a run stands, for a progress display. */
typedef struct av_run_progress {
  int64_t done;            /* rows finished, resumed ones included */
  int64_t total;           /* rows this run covers (its shard) */
  int64_t resumed;         /* rows taken from the journal */
  int64_t failed;          /* rows that failed so far */
  double elapsed_s;        /* since the run started */
} av_run_progress_t;

/* Called from the worker threads, one call at a time, at most every ~0.2 s and once at the
 * end. */
typedef void (*av_run_progress_fn)(const av_run_progress_t *p, void *user);

typedef struct av_run_opts {
  int jobs;                      /* worker threads; <= 1 runs on the calling thread */
  int shard_index, shard_count;  /* this run covers the batches (GPU, batch groups of rows)
                                    with group % count == index, every row of each */
  av_journal_t *journal;         /* finished rows are appended; rows it already holds (a
                                    resumed run) are taken from it, not run; may be NULL */
  int64_t timeline_row;          /* row whose CTA timeline is recorded; -1: none */
  av_timeline_t *timeline;       /* receives it (with timeline_row >= 0) */
  av_plan_t **timeline_plan;     /* receives its plan; caller owns */
  av_run_progress_fn progress;   /* may be NULL */
  void *progress_user;
} av_run_opts_t;

/* One thread, all rows, no journal, no timeline, no progress. */
void av_run_opts_default(av_run_opts_t *o);

/* Parses a shard "I/N" (0 <= I < N, N >= 1) given as option `opt`; AV_ERR_USAGE naming the
 * option and the value otherwise. */
int av_run_shard_parse(const char *text, const char *opt, int *index, int *count,
                       av_error_t *err);

/* Rows of e that a run with these shard settings covers. */
int64_t av_run_row_total(const av_experiment_t *e, const av_run_opts_t *o);
/* Shards split by batch: row `index` belongs to the shard of its group (index / n_scheds,
 * a GPU and a batch), so that the rows of one batch, which share their predictions, run
 * together. Whether this run covers the row, and its position among the rows it covers. */
int av_run_in_shard(const av_experiment_t *e, const av_run_opts_t *o, int64_t index);
int64_t av_run_row_slot(const av_experiment_t *e, const av_run_opts_t *o, int64_t index);

/* Runs the experiment's rows (this shard's) into *out, in row order (out must be empty;
 * caller frees with av_results_free). Returns non-zero only when the run as a whole cannot
 * go on (the kernel variant table is missing, memory runs out, the journal cannot be
 * written); a row's own failure is recorded in its row. */
int av_run_experiment(const av_experiment_t *e, const av_run_opts_t *o, av_results_t *out,
                      av_error_t *err);

/* Loads the kernel variant table (kernels/variants.json) the simulator needs, with a hint
 * when it is missing. Caller owns *out. */
int av_run_load_variants(av_variants_t **out, av_error_t *err);

#endif
