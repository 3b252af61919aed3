/* `anvil exec` (pipeline/exec_experiment.h): the paths and inputs checked before the
 * device, the device identified, every plan made for its spec, run, verified and timed, each
 * row handed over as it finishes, then the results files written. */
#include "pipeline/exec_experiment.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "executor/device_id.h"
#include "pipeline/exec_gpu.h"
#include "pipeline/experiment.h"
#include "pipeline/files.h"
#include "pipeline/models.h"
#include "pipeline/results_dir.h"

/* One run: the caller's options, and what is learnt on the way (device, spec, bandwidth). */
typedef struct exec_state {
  const av_exec_experiment_opts_t *o;
  void *user;
  const char *exp, *plan, *out, *csv, *trace_dir, *only, *gpu_spec;
  int all, check_req, autotune;
  av_kv_copy_t kv_copy;
  av_autotune_cache_t *cache;
  double copy_GBps;          /* measured with copy_bw, else 0 */
  double floor_GBps;         /* the read stream measured with copy_bw: the floor's */
  char device[400];          /* av_device_format of the device */
  char spec[64];             /* its GPU spec (gpus/) */
  int gpu;                   /* the experiment's entry for that spec (plans are made for it) */
  av_exec_opts_t eo;
} exec_state_t;

typedef struct exec_row {
  char batch[128], sched[64];
  char error[256];           /* planning or run refused (e.g. no compiled tile): not run */
  av_heads_t heads;
  av_launch_model_t launch;  /* how the plan's launches were issued */
  int tuned;                 /* auto's plan was chosen by autotune: tune says how */
  av_autotune_result_t tune;
  av_exec_result_t r;
  int pass;
} exec_row_t;

static void note_line(const exec_state_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note_line(const exec_state_t *o, const char *fmt, ...) {
  if (!o->o->hooks.note) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  o->o->hooks.note(line, o->user);
}

static int hand_row(const exec_state_t *o, const exec_row_t *row, av_error_t *err) {
  if (!o->o->hooks.row) return AV_OK;
  const av_exec_result_t *r = &row->r;
  av_exec_row_t x = {.batch = row->batch, .sched = row->sched, .error = row->error,
                     .heads = row->heads, .r = row->error[0] ? NULL : r, .pass = row->pass,
                     .tune = row->tuned ? &row->tune : NULL};
  x.floor_frac = o->floor_GBps > 0 && r->median_us > 0
                     ? r->unique_kv_bytes / (r->median_us * 1e3) / o->floor_GBps : 0;
  return o->o->hooks.row(&x, o->user, err);
}

/* fp16 and bf16 tolerances (docs/kernels.md#correctness): fp16/bf16 rounding of P and the
 * output. */
static double tolerance(av_dtype_t t) { return t == AV_DTYPE_BF16 ? 1e-2 : 2e-3; }

static int row_pass(const exec_row_t *row, const av_exec_opts_t *eo) {
  if (!eo->verify) return 1;
  return row->r.max_rel_err <= tolerance(row->heads.dtype) && row->r.unwritten == 0 &&
         row->r.deterministic;
}

/* The replay format (sim/replay.h) names the GPU spec the trace is replayed with: the spec
 * picked for this device, so `anvil replay --plan P --trace T` takes the file as written. */
static int write_trace(const exec_state_t *o, const exec_row_t *row, av_error_t *err) {
  if (!row->r.trace) return AV_OK;
  const char *dir = o->trace_dir;
  if (json_object_set_new(row->r.trace, "gpu", json_string(o->spec)))
    return av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s__%d-%d__%s__%s.json", dir, row->batch, row->heads.hq,
           row->heads.hkv, av_dtype_name(row->heads.dtype), row->sched);
  for (char *c = path + strlen(dir) + 1; *c; ++c)
    if (*c == '/' || *c == ' ') *c = '_';
  return av_json_dump_file(row->r.trace, path, err);
}

static json_t *tune_json(const av_autotune_result_t *t) {
  json_t *c = json_array();
  for (int i = 0; i < t->n; i++) {
    json_t *e = json_pack("{s:s, s:f}", "candidate", t->cand[i].name, "predicted_us",
                          t->cand[i].predicted_us);
    if (e && i < t->k) json_object_set_new(e, "measured_us", json_real(t->measured_us[i]));
    json_array_append_new(c, e);
  }
  return json_pack("{s:i, s:b, s:s, s:o}", "k", t->k, "from_cache", t->from_cache, "chose",
                   t->chose, "candidates", c);
}

static json_t *row_json(const exec_row_t *row, double floor_GBps) {
  const av_exec_result_t *r = &row->r;
  if (row->error[0])
    return json_pack("{s:s, s:[i,i], s:i, s:s, s:s, s:s}", "batch", row->batch, "heads",
                     row->heads.hq, row->heads.hkv, "head_dim", row->heads.head_dim, "dtype",
                     av_dtype_name(row->heads.dtype), "scheduler", row->sched, "error",
                     row->error);
  const double floor_us = floor_GBps > 0 ? r->unique_kv_bytes / floor_GBps / 1e3 : 0;
  json_t *j = json_pack(
      "{s:s, s:[i,i], s:i, s:s, s:s, s:i, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:b, s:f, s:i, s:I, "
      "s:b, s:b}",
      "batch", row->batch, "heads", row->heads.hq, row->heads.hkv, "head_dim",
      row->heads.head_dim, "dtype", av_dtype_name(row->heads.dtype), "scheduler", row->sched,
      "ctas_per_head", r->ctas, "median_us", r->median_us, "min_us", r->min_us, "max_us",
      r->max_us, "repeats", r->repeats, "unique_kv_bytes", r->unique_kv_bytes, "floor_us",
      floor_us, "floor_fraction", r->median_us > 0 ? floor_us / r->median_us : 0.0, "verified",
      r->verified, "max_rel_err", r->max_rel_err, "checked", r->checked, "unwritten",
      (json_int_t)r->unwritten, "deterministic", r->deterministic, "pass", row->pass);
  if (j && row->launch != AV_LAUNCH_STREAMS)
    json_object_set_new(j, "launch", json_string(av_launch_model_name(row->launch)));
  if (j && row->tuned) json_object_set_new(j, "autotune", tune_json(&row->tune));
  return j;
}

static int write_outputs(const exec_state_t *o, const exec_row_t *rows, int n, const char *gpu,
                         av_error_t *err) {
  int rc = AV_OK;
  if (o->out) {
    json_t *arr = json_array();
    for (int i = 0; i < n; ++i) json_array_append_new(arr, row_json(&rows[i], o->floor_GBps));
    json_t *root = json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:o}", "gpu", gpu, "device",
                             o->device, "spec", o->spec, "source", o->exp ? o->exp : o->plan,
                             "kv_copy", av_kv_copy_name(o->kv_copy), "copy_GBps", o->copy_GBps,
                             "read_GBps", o->floor_GBps, "rows", arr);
    rc = root ? av_json_dump_file(root, o->out, err)
              : av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
    json_decref(root);
  }
  if (rc == AV_OK && o->csv) {
    size_t cap = 256 + (size_t)n * 800, len = 0;
    char *buf = malloc(cap);
    if (!buf) return av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
    len += (size_t)snprintf(buf, cap, "batch,hq,hkv,dtype,scheduler,ctas_per_head,median_us,"
                            "min_us,max_us,floor_us,floor_fraction,max_rel_err,unwritten,"
                            "deterministic,pass\n");
    for (int i = 0; i < n; ++i) {
      const av_exec_result_t *r = &rows[i].r;
      if (rows[i].error[0]) continue; /* not run: listed with its reason in the JSON */
      const double fl = o->floor_GBps > 0 ? r->unique_kv_bytes / o->floor_GBps / 1e3 : 0;
      char batch[sizeof rows[i].batch * 2 + 4], sched[sizeof rows[i].sched * 2 + 4];
      av_csv_field(batch, sizeof batch, rows[i].batch);
      av_csv_field(sched, sizeof sched, rows[i].sched);
      len += (size_t)snprintf(buf + len, cap - len, "%s,%d,%d,%s,%s,%d,%.2f,%.2f,%.2f,%.2f,%.4f,%.3e,%lld,%d,%d\n",
                              batch, rows[i].heads.hq, rows[i].heads.hkv,
                              av_dtype_name(rows[i].heads.dtype), sched, r->ctas,
                              r->median_us, r->min_us, r->max_us, fl,
                              r->median_us > 0 ? fl / r->median_us : 0.0, r->max_rel_err,
                              (long long)r->unwritten, r->deterministic, rows[i].pass);
    }
    rc = av_write_file_atomic(o->csv, buf, len, err);
    free(buf);
  }
  return rc;
}

/* Plans batch bi with every scheduler of the experiment (or every registered one) and runs
 * each plan on the batch's device cache. */
static int exec_batch(const av_experiment_t *e, int bi, const exec_state_t *o,
                      const av_variants_t *vs, exec_row_t **rows, int *n, int *cap,
                      av_error_t *err) {
  const av_exp_batch_t *b = &e->batches[bi];
  int n_all = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_all);
  const int ns = o->all ? n_all : e->n_scheds;
  av_costmodel_t *cost;
  const av_gpu_t *gpu = &e->gpus[o->gpu];
  int rc = av_models_cost_create(e->cost_ops, &e->cost_params, gpu, &b->w->heads, vs, &cost, err);
  if (rc) return rc;
  av_exec_batch_t *eb = av_exec_batch_create(b->w, 1, o->check_req, err);
  rc = eb ? av_exec_batch_set_kv_copy(eb, o->kv_copy, err)
          : (err->code ? err->code : AV_ERR_INTERNAL);
  for (int si = 0; rc == AV_OK && si < ns; ++si) {
    const av_scheduler_ops_t *ops = o->all ? all[si] : e->scheds[si].ops;
    av_params_t params;
    if (o->all)
      rc = av_params_init(&params, ops->params, err);
    else
      params = e->scheds[si].params;
    av_sched_ctx_t ctx = {.workload = b->w, .gpu = gpu, .variants = vs, .cost = cost,
                          .launch_model = e->launch, .kv_copy = o->kv_copy};
    av_plan_t *plan = NULL;
    if (*n == *cap) {
      *cap = *cap ? 2 * *cap : 64;
      exec_row_t *r2 = realloc(*rows, (size_t)*cap * sizeof **rows);
      if (!r2) rc = av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
      else *rows = r2;
    }
    if (rc == AV_OK) {
      exec_row_t *row = &(*rows)[*n];
      memset(row, 0, sizeof *row);
      snprintf(row->batch, sizeof row->batch, "%s", b->name);
      snprintf(row->sched, sizeof row->sched, "%s", o->all ? ops->name : e->scheds[si].label);
      row->heads = b->w->heads;
      row->launch = e->launch;
      av_error_t rerr;
      av_error_clear(&rerr);
      int rrc;
      if (o->autotune > 0 && (ops->flags & AV_SCHED_SIMULATES_OTHERS)) {
        rrc = av_autotune(eb, &ctx, &(av_autotune_opts_t){&params, o->autotune, &o->eo, o->cache},
                          &row->tune, &plan, &rerr);
        row->tuned = rrc == AV_OK;
      } else {
        rrc = av_scheduler_plan(ops, &params, &ctx, &plan, &rerr);
      }
      if (rrc == AV_OK) rrc = av_exec_batch_run(eb, plan, &o->eo, &row->r, &rerr);
      if (rrc == AV_OK) {
        row->pass = row_pass(row, &o->eo);
        rc = hand_row(o, row, err);
        if (!rc && o->trace_dir) rc = write_trace(o, row, err);
        av_exec_result_free(&row->r);
      } else if (rrc == AV_ERR_CUDA || rrc == AV_ERR_NOMEM || rrc == AV_ERR_INTERNAL) {
        rc = rrc; /* the device or the process is in trouble: stop */
        *err = rerr;
      } else { /* this plan cannot run here (e.g. a tile that is not compiled): record it */
        char msg[1600];
        snprintf(row->error, sizeof row->error, "%.255s", av_error_format(&rerr, msg, sizeof msg));
        row->pass = 1;
        rc = hand_row(o, row, err);
      }
      if (rc == AV_OK) ++*n;
    }
    if (rc != AV_OK && !err->path[0])
      snprintf(err->path, sizeof err->path, "%.100s x %.60s", b->name, ops->name);
    av_plan_destroy(plan);
  }
  av_exec_batch_destroy(eb);
  av_costmodel_destroy(cost);
  return rc;
}

static int exec_plan_file(const exec_state_t *o, exec_row_t **rows, int *n, av_error_t *err) {
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  int rc = av_plan_load(o->plan, &p, &w, err);
  if (rc == AV_OK) {
    *rows = calloc(1, sizeof **rows);
    if (!*rows) rc = av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
  }
  if (rc == AV_OK) {
    exec_row_t *row = &(*rows)[0];
    snprintf(row->batch, sizeof row->batch, "%s", w->name);
    snprintf(row->sched, sizeof row->sched, "%s", p->scheduler);
    row->heads = w->heads;
    row->launch = p->launch_model;
    av_exec_batch_t *eb = av_exec_batch_create(w, 1, o->check_req, err);
    rc = eb ? av_exec_batch_set_kv_copy(eb, o->kv_copy, err)
            : (err->code ? err->code : AV_ERR_INTERNAL);
    if (rc == AV_OK) rc = av_exec_batch_run(eb, p, &o->eo, &row->r, err);
    av_exec_batch_destroy(eb);
    if (rc == AV_OK) {
      row->pass = row_pass(row, &o->eo);
      *n = 1;
      rc = hand_row(o, row, err);
      if (!rc && o->trace_dir) rc = write_trace(o, row, err);
    }
  }
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

/* Input checks of --gpu-spec, before the device: a known spec, and one the experiment lists
 * (otherwise no plan of the experiment could run on the device under that spec). */
static int check_gpu_spec(const exec_state_t *o, const av_experiment_t *e, av_error_t *err) {
  if (!o->gpu_spec) return AV_OK;
  av_gpu_t g;
  int rc = av_gpu_load(o->gpu_spec, NULL, &g, err);
  if (rc && !err->source[0]) {
    snprintf(err->source, sizeof err->source, "exec");
    snprintf(err->path, sizeof err->path, "--gpu-spec");
  }
  int gi;
  if (!rc && e) rc = av_exec_gpu_index(e->gpus, e->n_gpus, e->path, o->gpu_spec, NULL, &gi, err);
  return rc;
}

/* Identifies the device, picks its spec (executor/device_id.h) and, for an experiment, the
 * entry plans are made for. */
static int identify_device(exec_state_t *o, const av_experiment_t *e, av_error_t *err) {
  av_device_desc_t d;
  av_gpu_t g;
  char note[512];
  int rc = av_device_query(&d, err);
  if (!rc) rc = av_device_pick_spec(&d, o->gpu_spec, NULL, &g, note, sizeof note, err);
  if (rc) return rc;
  if (note[0]) note_line(o, "%s", note);
  av_device_format(&d, o->device, sizeof o->device);
  snprintf(o->spec, sizeof o->spec, "%s", g.name);
  if (o->o->hooks.device) o->o->hooks.device(o->device, o->spec, o->user);
  if (!e) return AV_OK; /* a saved plan: its workload carries no GPU to check against */
  rc = av_exec_gpu_index(e->gpus, e->n_gpus, e->path, o->spec, o->device, &o->gpu, err);
  if (!rc && e->n_gpus > 1)
    note_line(o, "%s lists %d GPUs; plans are made and run for '%s' only (this device)",
              e->path, e->n_gpus, o->spec);
  return rc;
}

/* The caller's options into the run's state, the flags they imply set. */
static void state_init(exec_state_t *s, const av_exec_experiment_opts_t *o, void *user) {
  memset(s, 0, sizeof *s);
  s->o = o;
  s->user = user;
  s->exp = o->experiment;
  s->plan = o->plan;
  s->out = o->out;
  s->csv = o->csv;
  s->trace_dir = o->trace_dir;
  s->only = o->only;
  s->gpu_spec = o->gpu_spec;
  s->all = o->all_schedulers;
  s->check_req = o->check_requests;
  s->autotune = o->autotune;
  s->kv_copy = o->kv_copy >= 0 ? (av_kv_copy_t)o->kv_copy : AV_KV_COPY_TMA;
  s->eo = o->eo;
  s->eo.trace = o->trace_dir != NULL;
}

/* Paths, then input errors, before the device; then the device. */
static int prepare(exec_state_t *o, av_experiment_t **e, av_variants_t **vs, av_error_t *err) {
  int rc = AV_OK;
  if (!o->exp == !o->plan)
    return av_error_set(err, AV_ERR_USAGE, "exec", NULL,
                        "give an experiment file or --plan PLAN.json (exactly one)");
  if (o->o->autotune_cache && !o->autotune)
    return av_error_set(err, AV_ERR_USAGE, "exec", "--autotune-cache",
                        "needs --autotune K (the candidates to measure for new shapes)");
  if (o->out) rc = av_path_check_writable("exec", o->out, "--out", err);
  if (!rc && o->csv) rc = av_path_check_writable("exec", o->csv, "--csv", err);
  if (!rc && o->trace_dir) rc = av_dir_check_writable("exec", o->trace_dir, "--trace", err);
  if (!rc) rc = av_autotune_cache_open(o->o->autotune_cache, o->cache, err);
  if (!rc && o->exp) rc = av_experiment_load(o->exp, e, err);
  if (!rc && *e && o->o->kv_copy < 0) o->kv_copy = (*e)->kv_copy;
  if (rc == AV_OK) rc = check_gpu_spec(o, *e, err);
  if (rc == AV_OK) rc = av_exec_available(err);
  if (rc == AV_OK) rc = identify_device(o, *e, err);
  if (rc == AV_OK && o->o->copy_bw)
    rc = av_exec_copy_bandwidth((size_t)1 << 30, 20, &o->copy_GBps, err);
  if (rc == AV_OK && o->o->copy_bw)
    rc = av_exec_read_bandwidth((size_t)1 << 30, 20, &o->floor_GBps, err);
  if (rc == AV_OK && o->copy_GBps > 0 && o->o->hooks.copy_bw)
    o->o->hooks.copy_bw(o->copy_GBps, o->floor_GBps, o->user);
  if (rc == AV_OK && *e) rc = av_models_load_variants(0, vs, err);
  return rc;
}

int av_exec_experiment(const av_exec_experiment_opts_t *opts, void *user, av_exec_summary_t *out,
                       av_error_t *err) {
  exec_state_t st;
  state_init(&st, opts, user);
  exec_state_t *o = &st;
  av_experiment_t *e = NULL;
  av_variants_t *vs = NULL;
  exec_row_t *rows = NULL;
  int n = 0, cap = 0;
  av_autotune_cache_t cache;
  memset(&cache, 0, sizeof cache);
  o->cache = &cache;
  int rc = prepare(o, &e, &vs, err);
  if (rc == AV_OK && opts->hooks.start) opts->hooks.start(user);
  if (rc == AV_OK && o->trace_dir) rc = av_mkdirs(o->trace_dir, err);
  if (rc == AV_OK && o->plan) rc = exec_plan_file(o, &rows, &n, err);
  for (int bi = 0; rc == AV_OK && e && bi < e->n_batches; ++bi)
    if (!o->only || strstr(e->batches[bi].name, o->only))
      rc = exec_batch(e, bi, o, vs, &rows, &n, &cap, err);
  int failed = 0, not_run = 0;
  for (int i = 0; i < n; ++i) failed += !rows[i].pass;
  for (int i = 0; i < n; ++i) not_run += rows[i].error[0] != 0;
  if (rc == AV_OK) {
    char gpu[128] = "";
    for (int i = 0; i < n && !gpu[0]; ++i) snprintf(gpu, sizeof gpu, "%s", rows[i].r.gpu);
    rc = write_outputs(o, rows, n, gpu, err);
  }
  if (rc == AV_OK) rc = av_autotune_cache_save(&cache, err);
  av_autotune_cache_close(&cache);
  if (out) *out = (av_exec_summary_t){.run = n - not_run, .failed = failed, .not_run = not_run};
  free(rows);
  av_variants_destroy(vs);
  av_experiment_destroy(e);
  return rc;
}
