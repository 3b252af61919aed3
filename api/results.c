/* anvil_run_files and anvil_merge: experiments with their files (pipeline/run_files.h,
 * pipeline/merge.h) behind the public API, their rows handed over as public rows. */
#include "anvil/results.h"

#include <stdio.h>

#include "api/api_internal.h"
#include "pipeline/merge.h"
#include "pipeline/run_files.h"
#include "pipeline/run_mpi.h"
#include "selectors/auto.h"

typedef struct results_cb {
  anvil_results_head_fn head;
  anvil_result_row_fn row;
  void (*progress)(const anvil_run_progress_t *p, void *user);
  void *user;
} results_cb_t;

static void on_head(const av_results_head_t *h, void *user) {
  const results_cb_t *cb = user;
  const av_experiment_t *e = h->e;
  anvil_results_head_t out = {
      .name = e->name, .path = e->path, .sim = av_sim_model_name(e->sim),
      .cost_model = e->cost_ops->name,
      .launch = e->launch != AV_LAUNCH_STREAMS ? av_launch_model_name(e->launch) : NULL,
      .n_gpus = e->n_gpus, .n_batches = e->n_batches, .dir = h->dir, .timeline = h->timeline,
      .rows = h->rows, .failed = h->failed};
  cb->head(&out, cb->user);
}

static int on_row(const av_experiment_t *e, const av_result_row_t *x, void *user,
                  av_error_t *err) {
  const results_cb_t *cb = user;
  const av_heads_t *hd = &e->batches[x->batch].w->heads;
  char shown[512];
  const char *label = e->scheds[x->sched].label;
  if (x->status == AV_OK && (e->scheds[x->sched].ops->flags & AV_SCHED_SIMULATES_OTHERS))
    av_auto_verdict_text(label, x->params, shown, sizeof shown);  /* auto→its choice */
  else
    snprintf(shown, sizeof shown, "%s", label);
  anvil_result_row_t row = {
      .index = x->index, .gpu = e->gpus[x->gpu].name, .batch = e->batches[x->batch].name,
      .scheduler = label, .shown = shown, .q_heads = hd->hq, .kv_heads = hd->hkv,
      .status = x->status, .error = x->error, .items = x->ps.items,
      .unique_kv_bytes = x->ws.unique_kv_bytes,
      .query_centric_kv_bytes = x->ws.query_centric_kv_bytes,
      .sharing_ratio = x->ws.sharing_ratio, .floor_us = x->floor.us,
      .predicted_us = x->predicted_us};
  if (cb->row && cb->row(&row, cb->user))
    return av_error_set(err, AV_ERR_USAGE, e->path, NULL,
                        "stopped by the row callback at row %lld", (long long)x->index);
  return AV_OK;
}

static void on_progress(const av_run_progress_t *p, void *user) {
  const results_cb_t *cb = user;
  anvil_run_progress_t out = {.done = p->done, .total = p->total, .resumed = p->resumed,
                              .failed = p->failed, .elapsed_s = p->elapsed_s};
  cb->progress(&out, cb->user);
}

int anvil_run_files(const anvil_run_options_t *o, anvil_result_row_fn fn, void *user,
                    int *root, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  results_cb_t cb = {o->on_head, fn, o->progress, user};
  av_run_files_opts_t r = {.experiment = o->experiment, .out_dir = o->out_dir,
                           .timeline = o->timeline, .timeline_of = o->timeline_of,
                           .jobs = o->jobs > 1 ? o->jobs : 1,
                           .shard_index = o->shard_count ? o->shard_index : 0,
                           .shard_count = o->shard_count ? o->shard_count : 1,
                           .resume = o->resume, .progress = o->progress ? on_progress : NULL,
                           .progress_user = &cb};
  int rc = av_run_files(&r, o->on_head ? on_head : NULL, on_row, &cb, root, &e);
  return av__api_error(err, &e, rc);
}

int anvil_shard_parse(const char *text, const char *opt, int *index, int *count,
                      anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int rc = av_run_shard_parse(text, opt, index, count, &e);
  return av__api_error(err, &e, rc);
}

int anvil_run_is_root(void) { return av_run_mpi_is_root(); }

int anvil_run_finish(int status) { return av_run_mpi_finish(status); }

int anvil_merge(const anvil_merge_options_t *o, anvil_result_row_fn fn, void *user,
                anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  results_cb_t cb = {o->on_head, fn, NULL, user};
  av_merge_opts_t m = {.dirs = o->dirs, .n_dirs = o->n_dirs, .out = o->out,
                       .experiment = o->experiment};
  int rc = av_merge_shards(&m, o->on_head ? on_head : NULL, on_row, &cb, &e);
  return av__api_error(err, &e, rc);
}
