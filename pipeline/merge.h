/* `anvil merge` as a library call: the result directories of the shards of one experiment
 * (`anvil run --shard I/N`) become one result set, byte-identical to a single run. The rows
 * come from each directory's journal.jsonl; the experiment is loaded again (from the path the
 * journals name, or the one given) and must have the journals' hash. The merged rows are
 * handed over as pipeline/results_hand.h describes; nothing is printed. */
#ifndef AV_PIPELINE_MERGE_H
#define AV_PIPELINE_MERGE_H

#include "core/error.h"
#include "pipeline/results_hand.h"

typedef struct av_merge_opts {
  const char *const *dirs;   /* the shards' result directories */
  int n_dirs;
  const char *out;           /* the merged results directory */
  const char *experiment;    /* NULL: the path the journals name */
} av_merge_opts_t;

/* Merges and writes, then hands the rows over. Messages name "merge" and the option a user
 * gave, as the `anvil` program prints them. */
int av_merge_shards(const av_merge_opts_t *o, av_results_head_fn on_head,
                    av_results_row_fn on_row, void *user, av_error_t *err);

#endif
