/* `anvil run EXP.json`: every (GPU, batch, scheduler) row of an experiment is planned,
 * proved exact and predicted, and the output directory (results.json, results.csv,
 * journal.jsonl) written as one unit (anvil_run, include/anvil/results.h); the table goes
 * to stdout. Options and paths are checked before any row runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/results_print.h"
#include "cli/run_progress.h"

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

static int parse_args(int argc, char **argv, run_args_t *a, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  a->jobs = 1;
  a->shard_count = 1;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (a->exp_path)
          return av_cli_error(err, ANVIL_ERR_USAGE, "run", v,
                              "unexpected argument; give one experiment file");
        a->exp_path = v;
        break;
      case 'o': a->out_dir = v; break;
      case 't': a->timeline = v; break;
      case OPT_TIMELINE_OF: a->timeline_of = v; break;
      case 'j':
        if (av_cli_int_arg("run", "--jobs", v, 1, 1024, &a->jobs, err)) return err->code;
        break;
      case OPT_SHARD:
        if (anvil_shard_parse(v, "--shard", &a->shard_index, &a->shard_count, err))
          return err->code;
        break;
      case OPT_RESUME: a->resume = 1; break;
      case OPT_PROGRESS: a->progress = 1; break;
      case 'q': a->quiet = 1; break;
      case 'h': return -1;
    }
  }
  if (!a->exp_path)
    return av_cli_error(err, ANVIL_ERR_USAGE, "run", NULL,
                        "missing the experiment file (usage: anvil run EXP.json [--out DIR])");
  if (a->out_dir && !a->out_dir[0])
    return av_cli_error(err, ANVIL_ERR_USAGE, "run", "--out", "empty path; expected a directory");
  if (a->timeline && !a->timeline[0])
    return av_cli_error(err, ANVIL_ERR_USAGE, "run", "--timeline", "empty path; expected a file");
  return ANVIL_OK;
}

/* 0 when every row succeeded; else 1, or 2 when a row failed for an internal reason. */
static int failed_status(const anvil_result_row_t *r, void *user) {
  int *status = user;
  const int c = anvil_status_class(r->status);
  if (c > *status) *status = c;
  return 0;
}

typedef struct run_print {
  av_cli_results_print_t table;
  av_run_progress_display_t display;
  int status;
} run_print_t;

static void show_progress(const anvil_run_progress_t *p, void *user) {
  av_run_progress_display(p, &((run_print_t *)user)->display);
}

static void end_progress(void *display) { av_run_progress_display_end(display); }

static void print_head(const anvil_results_head_t *h, void *user) {
  av_cli_results_head(h, &((run_print_t *)user)->table);
}

static int print_row(const anvil_result_row_t *r, void *user) {
  run_print_t *rp = user;
  failed_status(r, &rp->status);
  return av_cli_results_row(r, &rp->table);
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
  anvil_error_t err;
  av_cli_error_clear(&err);
  run_args_t a = {0};
  int rc = parse_args(argc, argv, &a, &err);
  if (rc == -1) {
    print_help();
    return 0;
  }
  if (rc) return av_cli_fail_public(&err);
  run_print_t rp = {.table = {.quiet = a.quiet, .failures_to_stderr = 1, .before = end_progress}};
  rp.table.before_user = &rp.display;
  av_run_progress_display_init(&rp.display, a.progress);
  anvil_run_options_t o = {.experiment = a.exp_path, .out_dir = a.out_dir,
                           .timeline = a.timeline, .timeline_of = a.timeline_of,
                           .jobs = (int)a.jobs, .shard_index = a.shard_index,
                           .shard_count = a.shard_count, .resume = a.resume,
                           .progress = rp.display.enabled ? show_progress : NULL,
                           .on_head = print_head};
  int root = 1;
  anvil_error_t e;
  rc = anvil_run_files(&o, print_row, &rp, &root, &e);
  av_run_progress_display_end(&rp.display);
  if (!rc && root) av_cli_results_end(&rp.table);
  rc = rc ? av_cli_fail_public(&e) : root ? rp.status : 0;
  return anvil_run_finish(rc);
}
