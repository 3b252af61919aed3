/* Merging the result directories of an experiment's shards (pipeline/merge.h). */
#include "pipeline/merge.h"

#include <stdio.h>
#include <stdlib.h>

#include "pipeline/results_dir.h"
#include "pipeline/results_journal.h"

static int by_index(const void *x, const void *y) {
  const av_result_row_t *a = x, *b = y;
  return (a->index > b->index) - (a->index < b->index);
}

/* Every directory's rows into *rows, checked to be of one experiment; *info is the first
 * journal's header. */
static int read_shards(const av_merge_opts_t *a, av_journal_info_t *info, av_results_t *rows,
                       av_error_t *err) {
  for (int d = 0; d < a->n_dirs; d++) {
    char path[1100];
    snprintf(path, sizeof path, "%s/journal.jsonl", a->dirs[d]);
    av_journal_info_t in;
    int rc = av_journal_read(path, &in, rows, err);
    if (rc) return rc;
    if (d == 0) *info = in;
    if (in.hash != info->hash || in.rows != info->rows)
      return av_error_set(err, AV_ERR_MISMATCH, path, NULL,
                          "of experiment '%s' (hash %016llx), but %s/journal.jsonl is of '%s' "
                          "(hash %016llx); merge only the shards of one experiment",
                          in.experiment, (unsigned long long)in.hash, a->dirs[0],
                          info->experiment, (unsigned long long)info->hash);
  }
  qsort(rows->rows, (size_t)rows->n, sizeof *rows->rows, by_index);
  int kept = 0;
  for (int i = 0; i < rows->n; i++)
    if (!kept || rows->rows[kept - 1].index != rows->rows[i].index)
      rows->rows[kept++] = rows->rows[i];
  rows->n = kept;
  if (kept == info->rows) return AV_OK;
  int64_t missing = 0;
  for (int i = 0; i < kept && rows->rows[i].index == missing; i++) missing++;
  return av_error_set(err, AV_ERR_MISMATCH, "merge", NULL,
                      "the directories hold %d of the experiment's %lld rows (row %lld is "
                      "missing); give every shard's directory, each run to the end",
                      kept, (long long)info->rows, (long long)missing);
}

/* The merged set, written like a run's: journal, results.json and results.csv as one unit. */
static int write_merged(const av_merge_opts_t *a, const av_experiment_t *e, av_results_t *r,
                        av_outdir_t *od, av_error_t *err) {
  int rc = av_outdir_begin(od, "merge", a->out, "--out", NULL, 0, err);
  if (rc) return rc;
  char jpath[1300];
  av_outdir_path(od, "journal.jsonl", jpath, sizeof jpath);
  av_journal_t *j = NULL;
  rc = av_journal_open(jpath, e, 0, 1, 0, &j, err);
  if (!rc) rc = av_journal_finish(j, r, err);
  av_journal_close(j);
  if (!rc) rc = av_results_write(e, r, od->stage, err);
  if (!rc) rc = av_outdir_commit(od, err);
  if (rc) av_outdir_abandon(od);
  return rc;
}

int av_merge_shards(const av_merge_opts_t *o, av_results_head_fn on_head,
                    av_results_row_fn on_row, void *user, av_error_t *err) {
  if (o->n_dirs < 1)
    return av_error_set(err, AV_ERR_USAGE, "merge", NULL,
                        "no result directories (usage: anvil merge DIR... --out DIR)");
  if (!o->out)
    return av_error_set(err, AV_ERR_USAGE, "merge", "--out",
                        "missing; expected the merged results directory");
  av_journal_info_t info;
  av_results_t rows = {0};
  av_experiment_t *e = NULL;
  av_outdir_t od;
  /* before reading the shards */
  int rc = av_dir_check_writable("merge", o->out, "--out", err);
  if (!rc) rc = av_outdir_check("merge", o->out, "--out", err);
  if (!rc) rc = read_shards(o, &info, &rows, err);
  if (!rc) rc = av_experiment_load(o->experiment ? o->experiment : info.source, &e, err);
  if (!rc && av_experiment_hash(e) != info.hash)
    rc = av_error_set(err, AV_ERR_MISMATCH, e->path, NULL,
                      "this experiment is not the one the shards ran (hash %016llx, the "
                      "journals say %016llx); give the file they ran with --experiment",
                      (unsigned long long)av_experiment_hash(e),
                      (unsigned long long)info.hash);
  for (int i = 0; !rc && i < rows.n; i++) {
    av_result_row_t *x = &rows.rows[i];
    av_results_row_locate(e, x->index, x);
  }
  if (!rc) rc = write_merged(o, e, &rows, &od, err);
  if (!rc) {
    av_results_head_t h = {.e = e, .dir = od.dir, .rows = rows.n,
                           .failed = av_results_failed(&rows)};
    rc = av_results_hand(&h, &rows, on_head, on_row, user, err);
  }
  av_results_free(&rows);
  av_experiment_destroy(e);
  return rc;
}
