/* The journal of a run (DIR/journal.jsonl): a header line naming the experiment (with a hash
 * of everything that decides its rows) and the shard, then one line per finished row, in the
 * order rows finish. A run killed part-way is resumed from it (`anvil run --resume`); the
 * journals of the shards of a study are merged into one result set (`anvil merge`). Rows
 * are stored exactly (reals with 17 significant digits), so results rebuilt from a journal
 * are byte-identical to results computed in one go. */
#ifndef AV_PIPELINE_RESULTS_JOURNAL_H
#define AV_PIPELINE_RESULTS_JOURNAL_H

#include <stdint.h>

#include "core/error.h"
#include "pipeline/experiment.h"
#include "pipeline/results.h"

/* Hash of the experiment as built: its settings, GPU specs, schedulers with their parameters,
 * cost model, and every batch's tree and heads (so an edited collection file counts too).
 * Not the file's path: the same experiment run from another directory has the same hash. */
uint64_t av_experiment_hash(const av_experiment_t *e);

/* What a journal's header says. */
typedef struct av_journal_info {
  uint64_t hash;
  char experiment[128];    /* the experiment's name */
  char source[512];        /* the experiment file as the run named it */
  int shard_index, shard_count; /* 0/1 for a whole run */
  int64_t rows;            /* rows of the whole experiment */
} av_journal_info_t;

typedef struct av_journal av_journal_t;

/* Opens path for a run of e's shard (index/count; 0/1 for all rows). Without `resume`, or
 * when path does not exist, it starts empty. With `resume` an existing journal must be of
 * the same experiment and shard (AV_ERR_MISMATCH naming the file otherwise); its complete
 * rows are kept (a line cut short by a kill is dropped) and the file rewritten with them.
 * Caller owns *out (av_journal_close). */
int av_journal_open(const char *path, const av_experiment_t *e, int shard_index,
                    int shard_count, int resume, av_journal_t **out, av_error_t *err);
/* Rows the journal held when opened. */
int64_t av_journal_resumed(const av_journal_t *j);
/* Copies the journaled row `index` into *row and returns 1; 0 when it is not journaled. */
int av_journal_get(const av_journal_t *j, int64_t index, av_result_row_t *row);
/* Appends a finished row and flushes it to the file. Safe to call from several threads. */
int av_journal_append(av_journal_t *j, const av_result_row_t *row, av_error_t *err);
/* Rewrites the journal as header + rows in row order (the form a finished run keeps), so the
 * whole output directory is the same whatever order rows finished in. */
int av_journal_finish(av_journal_t *j, const av_results_t *r, av_error_t *err);
void av_journal_close(av_journal_t *j);

/* Reads a journal file without an experiment (anvil merge): its header into *info and its
 * rows appended to *rows (indices as stored). */
int av_journal_read(const char *path, av_journal_info_t *info, av_results_t *rows,
                    av_error_t *err);

#endif
