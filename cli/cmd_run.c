/* `anvil run EXP.json`: every (GPU, batch, scheduler) row of an experiment is planned,
 * proved exact and predicted (pipeline/run.h); the table goes to stdout and the output
 * directory (results.json, results.csv, journal.jsonl) is written as one unit
 * (pipeline/results_dir.h). Options and paths are checked before any row runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/run_progress.h"
#include "core/escape.h"
#include "pipeline/experiment.h"
#include "pipeline/results.h"
#include "pipeline/results_dir.h"
#include "pipeline/results_journal.h"
#include "pipeline/run.h"
#include "pipeline/run_mpi.h"

enum { OPT_TIMELINE_OF = 256, OPT_SHARD, OPT_RESUME, OPT_PROGRESS };

static const av_cli_opt_t k_opts[] = {
    {"out", 'o', "DIR", "results directory (default out/<experiment name>)"},
    {"timeline", 't', "FILE", "write one plan's CTA timeline (Chrome Trace JSON, Perfetto)"},
    {"timeline-of", OPT_TIMELINE_OF, "[GPU/]WORKLOAD[/LABEL]",
     "which plan --timeline records (default: the first row)"},
    {"jobs", 'j', "N", "worker threads (default 1); results are the same for any N"},
    {"shard", OPT_SHARD, "I/N", "run every Nth batch from the Ith, all its rows (merge with anvil merge)"},
    {"resume", OPT_RESUME, NULL, "continue a killed run from its journal (DIR.partial)"},
    {"progress", OPT_PROGRESS, NULL, "show progress on stderr even when it is not a terminal"},
    {"quiet", 'q', NULL, "print only where the results went and the summary line"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct run_args {
  const char *exp_path, *out_dir, *timeline, *timeline_of;
  int quiet, resume, progress;
  int64_t jobs;
  int shard_index, shard_count;
} run_args_t;

/* Does row (gpu, batch, sched) match "[GPU/]WORKLOAD[/LABEL]"? */
static int timeline_match(const char *sel, const av_experiment_t *e, int gpu, int batch,
                          int sched) {
  if (!sel) return 1;
  const char *g = e->gpus[gpu].name, *w = e->batches[batch].name, *l = e->scheds[sched].label;
  char form[4][256];
  snprintf(form[0], sizeof form[0], "%s", w);
  snprintf(form[1], sizeof form[1], "%s/%s", w, l);
  snprintf(form[2], sizeof form[2], "%s/%s", g, w);
  snprintf(form[3], sizeof form[3], "%s/%s/%s", g, w, l);
  for (int i = 0; i < 4; i++)
    if (strcmp(sel, form[i]) == 0) return 1;
  return 0;
}

/* The first row of this run that --timeline records; -1 when none matches. */
static int64_t timeline_row(const av_experiment_t *e, const run_args_t *a,
                            const av_run_opts_t *o) {
  const int64_t n = av_results_row_count(e);
  for (int64_t i = 0; i < n; i++) {
    av_result_row_t x;
    av_results_row_locate(e, i, &x);
    if (av_run_in_shard(e, o, i) &&
        timeline_match(a->timeline_of, e, x.gpu, x.batch, x.sched))
      return i;
  }
  return -1;
}

static int check_timeline_selector(const av_experiment_t *e, const run_args_t *a,
                                   av_error_t *err) {
  if (!a->timeline_of) return AV_OK;
  if (!a->timeline)
    return av_error_set(err, AV_ERR_USAGE, "run", "--timeline-of",
                        "only makes sense with --timeline FILE");
  for (int g = 0; g < e->n_gpus; g++)
    for (int bi = 0; bi < e->n_batches; bi++)
      for (int si = 0; si < e->n_scheds; si++)
        if (timeline_match(a->timeline_of, e, g, bi, si)) return AV_OK;
  return av_error_set(err, AV_ERR_USAGE, "run", "--timeline-of",
                      "'%s' matches no row; expected GPU/WORKLOAD/LABEL (or WORKLOAD, "
                      "WORKLOAD/LABEL), e.g. %s/%s/%s",
                      a->timeline_of, e->gpus[0].name, e->batches[0].name, e->scheds[0].label);
}

static int parse_args(int argc, char **argv, run_args_t *a, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  a->jobs = 1;
  a->shard_count = 1;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (a->exp_path)
          return av_error_set(err, AV_ERR_USAGE, "run", v,
                              "unexpected argument; give one experiment file");
        a->exp_path = v;
        break;
      case 'o': a->out_dir = v; break;
      case 't': a->timeline = v; break;
      case OPT_TIMELINE_OF: a->timeline_of = v; break;
      case 'j':
        if (av_cli_parse_int("run", "--jobs", v, 1, 1024, &a->jobs, err)) return err->code;
        break;
      case OPT_SHARD:
        if (av_run_shard_parse(v, "--shard", &a->shard_index, &a->shard_count, err))
          return err->code;
        break;
      case OPT_RESUME: a->resume = 1; break;
      case OPT_PROGRESS: a->progress = 1; break;
      case 'q': a->quiet = 1; break;
      case 'h': return -1;
    }
  }
  if (!a->exp_path)
    return av_error_set(err, AV_ERR_USAGE, "run", NULL,
                        "missing the experiment file (usage: anvil run EXP.json [--out DIR])");
  if (a->out_dir && !a->out_dir[0])
    return av_error_set(err, AV_ERR_USAGE, "run", "--out", "empty path; expected a directory");
  if (a->timeline && !a->timeline[0])
    return av_error_set(err, AV_ERR_USAGE, "run", "--timeline", "empty path; expected a file");
  return AV_OK;
}

/* The timeline's file name when it goes into the output directory itself (then it is part
 * of the unit), else NULL. */
static const char *timeline_in_dir(const char *timeline, const char *dir) {
  if (!timeline) return NULL;
  const char *slash = strrchr(timeline, '/');
  if (!slash) return NULL;
  size_t n = (size_t)(slash - timeline), d = strlen(dir);
  while (d > 1 && dir[d - 1] == '/') d--;
  return n == d && strncmp(timeline, dir, n) == 0 ? slash + 1 : NULL;
}

typedef struct run_state {
  av_experiment_t *e;
  av_outdir_t od;
  av_journal_t *journal;
  av_results_t results;
  av_timeline_t tl;
  av_plan_t *tl_plan;
  const char *tl_name;     /* timeline file name inside the output directory, or NULL */
  av_run_progress_display_t display;
} run_state_t;

/* Rows, then the files into the staging directory, then the swap. */
static int run_and_write(const run_args_t *a, run_state_t *st, av_error_t *err) {
  av_run_opts_t o;
  av_run_opts_default(&o);
  o.jobs = (int)a->jobs;
  o.shard_index = a->shard_index;
  o.shard_count = a->shard_count;
  o.journal = st->journal;
  o.timeline = a->timeline ? &st->tl : NULL;
  o.timeline_plan = &st->tl_plan;
  o.timeline_row = a->timeline ? timeline_row(st->e, a, &o) : -1;
  av_run_progress_display_init(&st->display, a->progress);
  if (st->display.enabled) {
    o.progress = av_run_progress_display;
    o.progress_user = &st->display;
  }
  int rc = av_run_mpi_experiment(st->e, &o, &st->results, err);
  av_run_progress_display_end(&st->display);
  if (rc == AV_RUN_MPI_NOT_ROOT) return rc;
  char path[1300];
  if (!rc) rc = av_results_write(st->e, &st->results, st->od.stage, err);
  if (!rc) rc = av_journal_finish(st->journal, &st->results, err);
  av_journal_close(st->journal);
  st->journal = NULL;
  if (!rc && a->timeline && st->tl_plan) {
    if (st->tl_name) av_outdir_path(&st->od, st->tl_name, path, sizeof path);
    rc = av_timeline_write_chrome(&st->tl, st->tl_plan, st->tl_name ? path : a->timeline, err);
  }
  if (!rc) rc = av_outdir_commit(&st->od, err);
  if (rc) av_outdir_abandon(&st->od);
  return rc;
}

static void report(const run_args_t *a, const run_state_t *st) {
  const char *dir = st->od.dir;
  const av_results_t *r = &st->results;
  if (a->quiet) {
    printf("results: %s/results.json, %s/results.csv\n", dir, dir);
    for (int i = 0; i < r->n; i++)
      if (r->rows[i].status != AV_OK) {
        char b1[AV_ESCAPE_NAME_SIZE], b2[AV_ESCAPE_NAME_SIZE], b3[AV_ESCAPE_NAME_SIZE],
            b4[sizeof r->rows[i].error * 4];
        fprintf(stderr, "anvil: %s x %s on %s failed: %s\n",
                av_escape_text(st->e->batches[r->rows[i].batch].name, b1, sizeof b1),
                av_escape_text(st->e->scheds[r->rows[i].sched].label, b2, sizeof b2),
                av_escape_text(st->e->gpus[r->rows[i].gpu].name, b3, sizeof b3),
                av_escape_text(r->rows[i].error, b4, sizeof b4));
      }
    av_results_print_summary(stdout, st->e, r);
  } else {
    if (a->timeline && st->tl_plan) printf("timeline: %s\n", a->timeline);
    av_results_print(stdout, st->e, r, dir);
  }
}

/* 0 when every row succeeded; else 1, or 2 when a row failed for an internal reason. */
static int failed_status(const av_results_t *r) {
  int status = 0;
  for (int i = 0; i < r->n; i++) {
    const int c = av_error_exit_class(r->rows[i].status);
    if (c > status) status = c;
  }
  return status;
}

static void print_help(void) {
  av_cli_print_help("run EXP.json [--out DIR] [--jobs N] [--shard I/N] [--resume]\n"
                    "           [--timeline FILE [--timeline-of [G/]W[/S]]]",
                    "Plans every workload x heads x scheduler (x GPU) of an experiment "
                    "file, checks\neach plan exact, predicts its time with the simulator, "
                    "prints a table and\nwrites DIR/results.json, DIR/results.csv and "
                    "DIR/journal.jsonl as one unit.\nA row that fails is kept as failed "
                    "(status, error columns); the exit status is\nthen 1. Schema: "
                    "docs/experiments.md; large studies: docs/studies.md.",
                    k_opts);
}

int av_cmd_run(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  run_args_t a = {0};
  int rc = parse_args(argc, argv, &a, &err);
  if (rc == -1) {
    print_help();
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  run_state_t st = {0};
  char dir[1024];
  const int root = av_run_mpi_is_root();
  rc = av_experiment_load(a.exp_path, &st.e, &err);
  if (!rc) rc = check_timeline_selector(st.e, &a, &err);
  if (!rc && a.timeline && av_run_mpi_ranks() > 1)
    rc = av_error_set(&err, AV_ERR_USAGE, "run", "--timeline",
                      "records one row's timeline in one process; run it without mpirun");
  if (!rc) {
    snprintf(dir, sizeof dir, "%s", a.out_dir ? a.out_dir : "");
    if (!a.out_dir) snprintf(dir, sizeof dir, "out/%s", st.e->name);
    st.tl_name = timeline_in_dir(a.timeline, dir);
    if (a.timeline && !st.tl_name && root)
      rc = av_path_check_writable("run", a.timeline, "--timeline", &err);
  }
  /* every path is checked, and the staging directory made, before any row runs */
  if (!rc && root) rc = av_outdir_begin(&st.od, "run", dir, "--out", st.tl_name, a.resume, &err);
  if (!rc && root) {
    char jpath[1300];
    av_outdir_path(&st.od, "journal.jsonl", jpath, sizeof jpath);
    rc = av_journal_open(jpath, st.e, a.shard_index, a.shard_count, a.resume, &st.journal,
                         &err);
    /* a killed run's journal that does not fit stays for the run that wrote it */
    if (rc && !st.od.resumed) av_outdir_abandon(&st.od);
  }
  /* under mpirun every rank learns whether rank 0's checks passed before any row runs */
  const int all_ok = av_run_mpi_all_ok(rc);
  if (!rc && !all_ok && root) {
    rc = av_error_set(&err, AV_ERR_INTERNAL, "run", NULL,
                      "another MPI rank could not start (its message is on its stderr)");
    av_outdir_abandon(&st.od);
  } else if (!rc && !all_ok) {
    rc = AV_RUN_MPI_NOT_ROOT;
  }
  if (!rc) rc = run_and_write(&a, &st, &err);
  const int quiet_rank = rc == AV_RUN_MPI_NOT_ROOT;
  if (quiet_rank) rc = AV_OK;
  if (!rc && !quiet_rank) report(&a, &st);
  const int failed = rc || quiet_rank ? 0 : failed_status(&st.results);
  av_journal_close(st.journal);
  av_timeline_free(&st.tl);
  av_plan_destroy(st.tl_plan);
  av_results_free(&st.results);
  av_experiment_destroy(st.e);
  rc = rc ? av_cli_fail(&err) : failed;
  return av_run_mpi_finish(rc);
}
