/* `anvil merge DIR... --out DIR`: the result directories of the shards of one experiment
 * (`anvil run --shard I/N`) become one result set, byte-identical to a single run. The rows
 * come from each directory's journal.jsonl; the experiment is loaded again (from the path the
 * journals name, or --experiment) and must have the journals' hash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/experiment.h"
#include "pipeline/results.h"
#include "pipeline/results_dir.h"
#include "pipeline/results_journal.h"

enum { MAX_DIRS = 4096 };

static const av_cli_opt_t k_opts[] = {
    {"out", 'o', "DIR", "the merged results directory (required)"},
    {"experiment", 'e', "EXP.json", "the experiment file (default: the path the journals name)"},
    {"quiet", 'q', NULL, "print only where the results went and the summary line"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct merge_args {
  const char *dirs[MAX_DIRS];
  int n_dirs;
  const char *out, *exp;
  int quiet;
} merge_args_t;

static int parse_args(int argc, char **argv, merge_args_t *a, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (a->n_dirs == MAX_DIRS)
          return av_error_set(err, AV_ERR_USAGE, "merge", v, "more than %d directories",
                              MAX_DIRS);
        a->dirs[a->n_dirs++] = v;
        break;
      case 'o': a->out = v; break;
      case 'e': a->exp = v; break;
      case 'q': a->quiet = 1; break;
      case 'h': return -1;
    }
  }
  if (!a->n_dirs)
    return av_error_set(err, AV_ERR_USAGE, "merge", NULL,
                        "no result directories (usage: anvil merge DIR... --out DIR)");
  if (!a->out)
    return av_error_set(err, AV_ERR_USAGE, "merge", "--out",
                        "missing; expected the merged results directory");
  return AV_OK;
}

static int by_index(const void *x, const void *y) {
  const av_result_row_t *a = x, *b = y;
  return (a->index > b->index) - (a->index < b->index);
}

/* Every directory's rows into *rows, checked to be of one experiment; *info is the first
 * journal's header. */
static int read_shards(const merge_args_t *a, av_journal_info_t *info, av_results_t *rows,
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
static int write_merged(const merge_args_t *a, const av_experiment_t *e, av_results_t *r,
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

int av_cmd_merge(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  merge_args_t a;
  memset(&a, 0, sizeof a);
  int rc = parse_args(argc, argv, &a, &err);
  if (rc == -1) {
    av_cli_print_help("merge DIR... --out DIR [--experiment EXP.json]",
                      "Combines the result directories of an experiment's shards (anvil run "
                      "--shard I/N)\ninto one result set, byte-identical to a single run. "
                      "Guide: docs/studies.md.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  av_journal_info_t info;
  av_results_t rows = {0};
  av_experiment_t *e = NULL;
  av_outdir_t od;
  /* before reading the shards */
  rc = av_dir_check_writable("merge", a.out, "--out", &err);
  if (!rc) rc = av_outdir_check("merge", a.out, "--out", &err);
  if (!rc) rc = read_shards(&a, &info, &rows, &err);
  if (!rc) rc = av_experiment_load(a.exp ? a.exp : info.source, &e, &err);
  if (!rc && av_experiment_hash(e) != info.hash)
    rc = av_error_set(&err, AV_ERR_MISMATCH, e->path, NULL,
                      "this experiment is not the one the shards ran (hash %016llx, the "
                      "journals say %016llx); give the file they ran with --experiment",
                      (unsigned long long)av_experiment_hash(e),
                      (unsigned long long)info.hash);
  for (int i = 0; !rc && i < rows.n; i++) {
    av_result_row_t *x = &rows.rows[i];
    av_results_row_locate(e, x->index, x);
  }
  if (!rc) rc = write_merged(&a, e, &rows, &od, &err);
  if (!rc) {
    if (a.quiet)
      printf("results: %s/results.json, %s/results.csv\n", od.dir, od.dir);
    if (a.quiet) av_results_print_summary(stdout, e, &rows);
    else av_results_print(stdout, e, &rows, od.dir);
  }
  const int failed = rc ? 0 : av_results_failed(&rows) ? 1 : 0;
  av_results_free(&rows);
  av_experiment_destroy(e);
  return rc ? av_cli_fail(&err) : failed;
}
