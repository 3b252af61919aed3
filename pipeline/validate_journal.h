/* The journal of `anvil validate` (DIR/validation.journal.jsonl): a header naming the
 * experiment (its hash, pipeline/results_journal.h), the device, the spec and the repeats,
 * then one line per finished batch with its report rows. A validation stopped part-way (a
 * time limit, a lost node) continues with `--resume`: finished batches are taken from the
 * journal, not measured again. */
#ifndef AV_PIPELINE_VALIDATE_JOURNAL_H
#define AV_PIPELINE_VALIDATE_JOURNAL_H

#include "core/error.h"
#include "pipeline/validate_report.h"

typedef struct av_vjournal av_vjournal_t;

/* Opens path for rep's validation (rep->e, device, spec and repeats must be set). Without
 * `resume` it starts empty; with it, an existing journal must be of the same experiment,
 * device, spec and repeats (AV_ERR_MISMATCH naming the file otherwise), and its finished
 * batches are kept. Caller owns *out. */
int av_vjournal_open(const char *path, const av_vreport_t *rep, int resume,
                     av_vjournal_t **out, av_error_t *err);
/* Appends batch b's journaled rows to rep and returns 1; 0 when b is not journaled (or j is
 * NULL); -1 when out of memory. */
int av_vjournal_take(const av_vjournal_t *j, int b, av_vreport_t *rep);
/* Journals batch b: rep's rows [first, rep->n). */
int av_vjournal_append(av_vjournal_t *j, int b, const av_vreport_t *rep, int first,
                       av_error_t *err);
void av_vjournal_close(av_vjournal_t *j);

/* Writes at `path` the journal of rep's validation made of the n shard journals `shards`
 * (`anvil validate --shard I/N`, each of the same experiment, device, spec and repeats, which
 * is checked as --resume checks it): every batch from the shard that measured it. A batch two
 * shards hold is refused (AV_ERR_MISMATCH naming both files); *missing receives how many
 * batches no shard holds (they are measured when the merged journal is resumed). */
int av_vjournal_merge(const char *const *shards, int n, const char *path,
                      const av_vreport_t *rep, int *missing, av_error_t *err);

#endif
