/* `anvil exec EXP.json` / `anvil exec --plan PLAN.json`: runs plans on the GPU. Every batch's
 * paged KV cache is built once on the device; each scheduler's plan is checked, verified
 * against fp64 attention (outputs poisoned, fully written, merge deterministic), optionally
 * traced per CTA, and timed (median of repeats, L2 flushed between them). Results go to
 * --out (JSON) and --csv once everything ran; a failed verification makes the exit status 2.
 * The device is identified first (executor/device_id.h) and plans are made for its GPU
 * spec, which the experiment must list: a plan for one GPU is never run and reported as
 * another's (docs/validation.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/files.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/exec_gpu.h"
#include "pipeline/experiment.h"
#include "core/escape.h"
#include "core/json_util.h"
#include "executor/device_id.h"
#include "executor/executor.h"
#include "pipeline/results_dir.h"
#include "pipeline/autotune.h"

enum { OPT_PLAN = 256, OPT_CSV, OPT_TRACE, OPT_REPEATS, OPT_WARMUP, OPT_NOVERIFY, OPT_ALL,
       OPT_CHECKREQ, OPT_COPYBW, OPT_ONLY, OPT_FLUSH, OPT_AUTOTUNE, OPT_TUNE_CACHE,
       OPT_KV_COPY };

static const av_cli_opt_t k_opts[] = {
    {"plan", OPT_PLAN, "PLAN.json", "run one saved plan instead of an experiment"},
    {"out", 'o', "FILE", "results JSON (written when every row ran)"},
    {"csv", OPT_CSV, "FILE", "the same rows as CSV"},
    {"trace", OPT_TRACE, "DIR", "write each row's per-CTA timeline (SM, start, end) to DIR"},
    {"repeats", OPT_REPEATS, "N", "timed runs per plan, median reported (default 20; 0 = no timing)"},
    {"warmup", OPT_WARMUP, "N", "untimed runs before timing (default 3)"},
    {"no-verify", OPT_NOVERIFY, NULL, "skip the fp64 comparison and output checks"},
    {"all-schedulers", OPT_ALL, NULL, "run every registered scheduler (default parameters)"},
    {"check-requests", OPT_CHECKREQ, "N", "requests compared with fp64 per batch (default 8)"},
    {"copy-bw", OPT_COPYBW, NULL, "measure copy and read-stream bandwidth; report time vs the floor (read stream)"},
    {"only", OPT_ONLY, "NAME", "run only batches whose name contains NAME"},
    {"l2-flush", OPT_FLUSH, "MODE",
     "how L2 is evicted before each run: read (default), write, none"},
    {"autotune", OPT_AUTOTUNE, "K",
     "auto measures its K predicted-fastest candidates and keeps the fastest (1-16)"},
    {"autotune-cache", OPT_TUNE_CACHE, "FILE",
     "keep each batch shape's autotuned winner in FILE and reuse it"},
    {"kv-copy", OPT_KV_COPY, "MODE",
     "how the kernels copy KV: tma (default, or the experiment's \"kv_copy\") or cp_async"},
    {"gpu-spec", 'g', "NAME", "GPU spec of this device when it is not recognised"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct exec_opts {
  const char *exp, *plan, *out, *csv, *trace_dir, *only, *gpu_spec, *tune_cache;
  int all, copy_bw, check_req;
  int autotune;              /* K of --autotune, 0 = off */
  int kv_copy_given;         /* --kv-copy was given: it overrides the experiment's */
  av_kv_copy_t kv_copy;      /* how every batch's kernels copy KV */
  av_autotune_cache_t *cache;
  double copy_GBps;          /* measured with --copy-bw, else 0 */
  double floor_GBps;         /* the read stream measured with --copy-bw: the floor's */
  char device[400];          /* av_device_format of the device */
  char spec[64];             /* its GPU spec (gpus/) */
  int gpu;                   /* the experiment's entry for that spec (plans are made for it) */
  av_exec_opts_t eo;
} exec_opts_t;

typedef struct exec_row {
  char batch[128], sched[64];
  char error[256];           /* planning or run refused (e.g. no compiled tile): not run */
  av_heads_t heads;
  av_launch_model_t launch;  /* how the plan's launches were issued */
  int tuned;                 /* auto's plan was chosen by --autotune: tune says how */
  av_autotune_result_t tune;
  av_exec_result_t r;
  int pass;
} exec_row_t;

static int parse_args(int argc, char **argv, exec_opts_t *o, int *help, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int key;
  int64_t n;
  while ((key = av_cli_next(&ps, &v, err)) != -1) {
    switch (key) {
      case -2: return err->code;
      case 0:
        if (o->exp) return av_error_set(err, AV_ERR_USAGE, "exec", NULL, "one experiment file only");
        o->exp = v;
        break;
      case OPT_PLAN: o->plan = v; break;
      case 'o': o->out = v; break;
      case OPT_CSV: o->csv = v; break;
      case OPT_TRACE: o->trace_dir = v; o->eo.trace = 1; break;
      case OPT_REPEATS:
        if (av_cli_parse_int("exec", "--repeats", v, 0, 100000, &n, err)) return err->code;
        o->eo.repeats = (int)n;
        break;
      case OPT_WARMUP:
        if (av_cli_parse_int("exec", "--warmup", v, 0, 1000, &n, err)) return err->code;
        o->eo.warmup = (int)n;
        break;
      case OPT_CHECKREQ:
        if (av_cli_parse_int("exec", "--check-requests", v, 1, 100000, &n, err)) return err->code;
        o->check_req = (int)n;
        break;
      case OPT_NOVERIFY: o->eo.verify = 0; break;
      case OPT_ALL: o->all = 1; break;
      case OPT_COPYBW: o->copy_bw = 1; break;
      case OPT_ONLY: o->only = v; break;
      case OPT_FLUSH:
        if (av_exec_flush_parse(v, &o->eo.flush_l2) != 0)
          return av_error_set(err, AV_ERR_USAGE, "exec", "--l2-flush",
                              "'%s' is not a flush mode; expected write, read or none", v);
        break;
      case OPT_AUTOTUNE:
        if (av_cli_parse_int("exec", "--autotune", v, 1, AV_AUTOTUNE_MAX_K, &n, err))
          return err->code;
        o->autotune = (int)n;
        break;
      case OPT_TUNE_CACHE: o->tune_cache = v; break;
      case OPT_KV_COPY:
        if (av_kv_copy_from_name(v, &o->kv_copy) != 0)
          return av_error_set(err, AV_ERR_USAGE, "exec", "--kv-copy",
                              "'%s' is not a KV copy; expected tma or cp_async", v);
        o->kv_copy_given = 1;
        break;
      case 'g': o->gpu_spec = v; break;
      case 'h': *help = 1; return AV_OK;
      default: break;
    }
  }
  if (!o->exp == !o->plan)
    return av_error_set(err, AV_ERR_USAGE, "exec", NULL,
                        "give an experiment file or --plan PLAN.json (exactly one)");
  if (o->tune_cache && !o->autotune)
    return av_error_set(err, AV_ERR_USAGE, "exec", "--autotune-cache",
                        "needs --autotune K (the candidates to measure for new shapes)");
  return AV_OK;
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
static int write_trace(const exec_opts_t *o, const exec_row_t *row, av_error_t *err) {
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

static void print_row(const exec_row_t *row, double floor_GBps) {
  const av_exec_result_t *r = &row->r;
  const double frac = floor_GBps > 0 && r->median_us > 0
                          ? r->unique_kv_bytes / (r->median_us * 1e3) / floor_GBps : 0;
  char b1[AV_ESCAPE_NAME_SIZE], b2[AV_ESCAPE_NAME_SIZE];
  printf("%-18s %3d/%-2d %-4s %-16s %7d %10.1f %8.3f %10.2e %s%s\n",
         av_escape_text(row->batch, b1, sizeof b1), row->heads.hq, row->heads.hkv,
         av_dtype_name(row->heads.dtype), av_escape_text(row->sched, b2, sizeof b2), r->ctas,
         r->median_us,
         frac, r->max_rel_err, row->pass ? "ok" : "FAIL",
         r->verified && (r->unwritten || !r->deterministic) ? " (unwritten/nondeterministic)" : "");
  fflush(stdout);
}

/* --autotune: what was measured for auto's row, and which candidate won. */
static void print_tune(const av_autotune_result_t *t) {
  if (t->from_cache) {
    printf("  autotune: %s (from the cache)\n", t->chose);
    return;
  }
  printf("  autotune:");
  for (int i = 0; i < t->k; i++)
    printf("%s %s %.1f us (predicted %.1f)", i ? "," : "", t->cand[i].name, t->measured_us[i],
           t->cand[i].predicted_us);
  printf("; chose %s\n", t->chose);
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

static int write_outputs(const exec_opts_t *o, const exec_row_t *rows, int n, const char *gpu,
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
static int exec_batch(const av_experiment_t *e, int bi, const exec_opts_t *o,
                      const av_variants_t *vs, exec_row_t **rows, int *n, int *cap,
                      av_error_t *err) {
  const av_exp_batch_t *b = &e->batches[bi];
  int n_all = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_all);
  const int ns = o->all ? n_all : e->n_scheds;
  av_costmodel_t *cost;
  const av_gpu_t *gpu = &e->gpus[o->gpu];
  int rc = av_cli_cost_create(e->cost_ops, &e->cost_params, gpu, &b->w->heads, vs, &cost, err);
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
        rrc = av_autotune(eb, &ctx, &params, o->autotune, &o->eo, o->cache, &row->tune, &plan,
                          &rerr);
        row->tuned = rrc == AV_OK;
      } else {
        rrc = av_scheduler_plan(ops, &params, &ctx, &plan, &rerr);
      }
      if (rrc == AV_OK) rrc = av_exec_batch_run(eb, plan, &o->eo, &row->r, &rerr);
      if (rrc == AV_OK) {
        row->pass = row_pass(row, &o->eo);
        print_row(row, o->floor_GBps);
        if (row->tuned) print_tune(&row->tune);
        if (o->trace_dir) rc = write_trace(o, row, err);
        av_exec_result_free(&row->r);
      } else if (rrc == AV_ERR_CUDA || rrc == AV_ERR_NOMEM || rrc == AV_ERR_INTERNAL) {
        rc = rrc; /* the device or the process is in trouble: stop */
        *err = rerr;
      } else { /* this plan cannot run here (e.g. a tile that is not compiled): record it */
        char msg[1600];
        snprintf(row->error, sizeof row->error, "%.255s", av_error_format(&rerr, msg, sizeof msg));
        row->pass = 1;
        char b1[AV_ESCAPE_NAME_SIZE], b2[AV_ESCAPE_NAME_SIZE];
        printf("%-18s %3d/%-2d %-4s %-16s not run: %s\n", av_escape_text(row->batch, b1, sizeof b1),
               row->heads.hq, row->heads.hkv, av_dtype_name(row->heads.dtype),
               av_escape_text(row->sched, b2, sizeof b2), row->error);
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

static int exec_plan_file(const exec_opts_t *o, exec_row_t **rows, int *n, av_error_t *err) {
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
      print_row(row, o->floor_GBps);
      if (o->trace_dir) rc = write_trace(o, row, err);
    }
  }
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

/* Input checks of --gpu-spec, before the device: a known spec, and one the experiment lists
 * (otherwise no plan of the experiment could run on the device under that spec). */
static int check_gpu_spec(const exec_opts_t *o, const av_experiment_t *e, av_error_t *err) {
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
static int identify_device(exec_opts_t *o, const av_experiment_t *e, av_error_t *err) {
  av_device_desc_t d;
  av_gpu_t g;
  char note[512];
  int rc = av_device_query(&d, err);
  if (!rc) rc = av_device_pick_spec(&d, o->gpu_spec, NULL, &g, note, sizeof note, err);
  if (rc) return rc;
  if (note[0]) fprintf(stderr, "anvil: note: %s\n", note);
  av_device_format(&d, o->device, sizeof o->device);
  snprintf(o->spec, sizeof o->spec, "%s", g.name);
  printf("device: %s -> spec %s\n", o->device, o->spec);
  if (!e) return AV_OK; /* a saved plan: its workload carries no GPU to check against */
  rc = av_exec_gpu_index(e->gpus, e->n_gpus, e->path, o->spec, o->device, &o->gpu, err);
  if (!rc && e->n_gpus > 1)
    fprintf(stderr, "anvil: note: %s lists %d GPUs; plans are made and run for '%s' only (this "
                    "device)\n", e->path, e->n_gpus, o->spec);
  return rc;
}

int av_cmd_exec(int argc, char **argv) {
  exec_opts_t o;
  memset(&o, 0, sizeof o);
  av_exec_opts_default(&o.eo);
  av_error_t err;
  av_error_clear(&err);
  int help = 0;
  if (parse_args(argc, argv, &o, &help, &err)) return av_cli_fail(&err);
  if (help) {
    av_cli_print_help("exec EXP.json | --plan PLAN.json [options]",
                      "Run plans on the GPU: verify against fp64 attention and time them.\n"
                      "The device is identified and matched to its spec in gpus/ (or\n"
                      "--gpu-spec NAME); plans are made for that GPU, which the experiment's\n"
                      "gpu/gpus must list. Needs a CUDA device. Method: docs/validation.md.",
                      k_opts);
    return 0;
  }
  av_experiment_t *e = NULL;
  av_variants_t *vs = NULL;
  exec_row_t *rows = NULL;
  int n = 0, cap = 0, rc = AV_OK;
  /* paths, then input errors, before the device */
  if (o.out) rc = av_path_check_writable("exec", o.out, "--out", &err);
  if (!rc && o.csv) rc = av_path_check_writable("exec", o.csv, "--csv", &err);
  if (!rc && o.trace_dir) rc = av_dir_check_writable("exec", o.trace_dir, "--trace", &err);
  av_autotune_cache_t cache;
  memset(&cache, 0, sizeof cache);
  o.cache = &cache;
  if (!rc) rc = av_autotune_cache_open(o.tune_cache, &cache, &err);
  if (!rc && o.exp) rc = av_experiment_load(o.exp, &e, &err);
  if (!rc && e && !o.kv_copy_given) o.kv_copy = e->kv_copy;
  if (rc == AV_OK) rc = check_gpu_spec(&o, e, &err);
  if (rc == AV_OK) rc = av_exec_available(&err);
  if (rc == AV_OK) rc = identify_device(&o, e, &err);
  double copy_GBps = 0;
  if (rc == AV_OK && o.copy_bw) rc = av_exec_copy_bandwidth((size_t)1 << 30, 20, &copy_GBps, &err);
  o.copy_GBps = copy_GBps;
  if (rc == AV_OK && o.copy_bw) rc = av_exec_read_bandwidth((size_t)1 << 30, 20, &o.floor_GBps, &err);
  if (rc == AV_OK && copy_GBps > 0)
    printf("copy bandwidth (read+write): %.0f GB/s; read stream: %.0f GB/s (the floor's)\n",
           copy_GBps, o.floor_GBps);
  if (rc == AV_OK && e) rc = av_cli_load_variants(0, &vs, &err);
  if (rc == AV_OK)
    printf("%-18s %-6s %-4s %-16s %7s %10s %8s %10s %s\n", "batch", "heads", "type", "scheduler",
           "ctas", "median_us", "floor%", "max_rel", "check");
  if (rc == AV_OK && o.trace_dir) rc = av_mkdirs(o.trace_dir, &err);
  if (rc == AV_OK && o.plan) rc = exec_plan_file(&o, &rows, &n, &err);
  for (int bi = 0; rc == AV_OK && e && bi < e->n_batches; ++bi)
    if (!o.only || strstr(e->batches[bi].name, o.only))
      rc = exec_batch(e, bi, &o, vs, &rows, &n, &cap, &err);
  int failed = 0, not_run = 0;
  for (int i = 0; i < n; ++i) failed += !rows[i].pass;
  for (int i = 0; i < n; ++i) not_run += rows[i].error[0] != 0;
  if (rc == AV_OK) {
    char gpu[128] = "";
    for (int i = 0; i < n && !gpu[0]; ++i) snprintf(gpu, sizeof gpu, "%s", rows[i].r.gpu);
    rc = write_outputs(&o, rows, n, gpu, &err);
  }
  if (rc == AV_OK) rc = av_autotune_cache_save(&cache, &err);
  av_autotune_cache_close(&cache);
  if (rc == AV_OK)
    printf("%d plans run, %d failed verification%s, %d could not run\n", n - not_run, failed,
           o.eo.verify ? "" : " (verification off)", not_run);
  free(rows);
  av_variants_destroy(vs);
  av_experiment_destroy(e);
  if (rc != AV_OK) return av_cli_fail(&err);
  return failed ? 2 : 0;
}
