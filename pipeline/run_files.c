/* `anvil run` with its files (pipeline/run_files.h): the paths checked and the staging
 * directory made before any row runs, the rows run over threads, shards and MPI ranks, the
 * files written as one unit, the rows handed over. */
#include "pipeline/run_files.h"

#include <stdio.h>
#include <string.h>

#include "pipeline/results_dir.h"
#include "pipeline/results_journal.h"
#include "pipeline/run_mpi.h"

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
static int64_t timeline_row(const av_experiment_t *e, const av_run_files_opts_t *a,
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

static int check_timeline_selector(const av_experiment_t *e, const av_run_files_opts_t *a,
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
} run_state_t;

/* Rows, then the files into the staging directory, then the swap. */
static int run_and_write(const av_run_files_opts_t *a, run_state_t *st, av_error_t *err) {
  av_run_opts_t o;
  av_run_opts_default(&o);
  o.jobs = a->jobs;
  o.shard_index = a->shard_index;
  o.shard_count = a->shard_count;
  o.journal = st->journal;
  o.timeline = a->timeline ? &st->tl : NULL;
  o.timeline_plan = &st->tl_plan;
  o.timeline_row = a->timeline ? timeline_row(st->e, a, &o) : -1;
  o.progress = a->progress;
  o.progress_user = a->progress_user;
  int rc = av_run_mpi_experiment(st->e, &o, &st->results, err);
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

int av_run_files(const av_run_files_opts_t *a, av_results_head_fn on_head,
                 av_results_row_fn on_row, void *user, int *root_out, av_error_t *err) {
  if (root_out) *root_out = 1;
  if (!a->experiment)
    return av_error_set(err, AV_ERR_USAGE, "run", NULL,
                        "missing the experiment file (usage: anvil run EXP.json [--out DIR])");
  int rc = AV_OK;
  run_state_t st;
  memset(&st, 0, sizeof st);
  char dir[1024];
  const int root = av_run_mpi_is_root();
  if (!rc) rc = av_experiment_load(a->experiment, &st.e, err);
  if (!rc) rc = check_timeline_selector(st.e, a, err);
  if (!rc && a->timeline && av_run_mpi_ranks() > 1)
    rc = av_error_set(err, AV_ERR_USAGE, "run", "--timeline",
                      "records one row's timeline in one process; run it without mpirun");
  if (!rc) {
    snprintf(dir, sizeof dir, "%s", a->out_dir ? a->out_dir : "");
    if (!a->out_dir) snprintf(dir, sizeof dir, "out/%s", st.e->name);
    st.tl_name = timeline_in_dir(a->timeline, dir);
    if (a->timeline && !st.tl_name && root)
      rc = av_path_check_writable("run", a->timeline, "--timeline", err);
  }
  /* every path is checked, and the staging directory made, before any row runs */
  if (!rc && root) rc = av_outdir_begin(&st.od, "run", dir, "--out", st.tl_name, a->resume, err);
  if (!rc && root) {
    char jpath[1300];
    av_outdir_path(&st.od, "journal.jsonl", jpath, sizeof jpath);
    rc = av_journal_open(jpath, st.e, a->shard_index, a->shard_count, a->resume, &st.journal,
                         err);
    /* a killed run's journal that does not fit stays for the run that wrote it */
    if (rc && !st.od.resumed) av_outdir_abandon(&st.od);
  }
  /* under mpirun every rank learns whether rank 0's checks passed before any row runs */
  const int all_ok = av_run_mpi_all_ok(rc);
  if (!rc && !all_ok && root) {
    rc = av_error_set(err, AV_ERR_INTERNAL, "run", NULL,
                      "another MPI rank could not start (its message is on its stderr)");
    av_outdir_abandon(&st.od);
  } else if (!rc && !all_ok) {
    rc = AV_RUN_MPI_NOT_ROOT;
  }
  if (!rc) rc = run_and_write(a, &st, err);
  const int quiet_rank = rc == AV_RUN_MPI_NOT_ROOT;
  if (quiet_rank) rc = AV_OK;
  if (root_out) *root_out = !quiet_rank;
  if (!rc && !quiet_rank) {
    av_results_head_t h = {.e = st.e, .dir = st.od.dir,
                           .timeline = a->timeline && st.tl_plan ? a->timeline : NULL,
                           .rows = st.results.n, .failed = av_results_failed(&st.results)};
    rc = av_results_hand(&h, &st.results, on_head, on_row, user, err);
  }
  av_journal_close(st.journal);
  av_timeline_free(&st.tl);
  av_plan_destroy(st.tl_plan);
  av_results_free(&st.results);
  av_experiment_destroy(st.e);
  return rc;
}
