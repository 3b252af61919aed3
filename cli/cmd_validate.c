/* `anvil validate EXP.json` (issue 6 item 2): every (batch, scheduler) of an experiment is
 * planned, predicted by the simulator and measured by the GPU executor on the device, which
 * must be the GPU the experiment names (identified by validation/device_id.c). Predictions
 * use the calibrated spec the profiler wrote (profiles/<gpu>.spec.json) when there is one.
 * With --trace every plan's per-CTA timeline is recorded and replayed through the
 * simulator's dispatch model, splitting the error into dispatch and cost-model parts; the
 * timelines of one batch are written next to the simulated ones (Chrome trace format). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/files.h"
#include "proofs/proofs.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/experiment.h"
#include "pipeline/validate_offline.h"
#include "pipeline/validate_report.h"
#include "core/json_util.h"
#include "sim/replay.h"
#include "validation/device_id.h"
#include "validation/executor.h"
#include "validation/profile.h"

enum { OPT_SPEC = 256, OPT_NO_CAL, OPT_TRACE_OF, OPT_REPEATS, OPT_OFFLINE };

static const av_cli_opt_t k_opts[] = {
    {"out", 'o', "DIR", "output directory (default out/<experiment name>/validation)"},
    {"trace", 't', NULL, "record per-CTA timelines, replay them, report dispatch vs cost-model error"},
    {"trace-of", OPT_TRACE_OF, "WORKLOAD", "batch whose timelines are written (default the first)"},
    {"gpu-spec", 'g', "NAME", "GPU spec of this device when it is not recognised"},
    {"spec", OPT_SPEC, "FILE", "calibrated spec (default profiles/<gpu>.spec.json if present)"},
    {"no-calibration", OPT_NO_CAL, NULL, "predict with gpus/<gpu>.json as is"},
    {"repeats", OPT_REPEATS, "N", "timed runs per plan (median; default 20)"},
    {"offline", OPT_OFFLINE, "VALIDATION.json",
     "no GPU: re-predict a recorded report's pairs, recompute its statistics"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct vopts {
  const char *exp, *out, *trace_of, *gpu_spec, *spec, *offline;
  int trace, no_cal;
  int64_t repeats;
} vopts_t;

typedef struct vctx {
  const vopts_t *o;
  av_experiment_t *e;
  av_variants_t *vs;
  av_vreport_t rep;
  char dir[1024];
} vctx_t;

static int parse_args(int argc, char **argv, vopts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->repeats = 20;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (o->exp)
          return av_error_set(err, AV_ERR_USAGE, "validate", v,
                              "unexpected argument; give one experiment file");
        o->exp = v;
        break;
      case 'o': o->out = v; break;
      case 't': o->trace = 1; break;
      case OPT_TRACE_OF: o->trace_of = v; break;
      case 'g': o->gpu_spec = v; break;
      case OPT_SPEC: o->spec = v; break;
      case OPT_NO_CAL: o->no_cal = 1; break;
      case OPT_OFFLINE: o->offline = v; break;
      case OPT_REPEATS:
        if (av_cli_parse_int("validate", "--repeats", v, 1, 1000, &o->repeats, err))
          return err->code;
        break;
      case 'h': return -1;
    }
  }
  if (!o->exp && !o->offline)
    return av_error_set(err, AV_ERR_USAGE, "validate", NULL,
                        "missing the experiment file (usage: anvil validate EXP.json)");
  if (o->spec && o->no_cal)
    return av_error_set(err, AV_ERR_USAGE, "validate", "--spec",
                        "--spec and --no-calibration exclude each other");
  return AV_OK;
}

/* The device must be the experiment's GPU; its prediction uses the calibrated spec. */
static int pick_gpu(vctx_t *c, av_error_t *err) {
  av_device_desc_t d;
  av_gpu_t g;
  char note[512], dev[400];
  int rc = av_device_query(&d, err);
  if (!rc) rc = av_device_pick_spec(&d, c->o->gpu_spec, NULL, &g, note, sizeof note, err);
  if (rc) return rc;
  if (note[0]) fprintf(stderr, "anvil: note: %s\n", note);
  av_device_format(&d, dev, sizeof dev);
  snprintf(c->rep.device, sizeof c->rep.device, "%s", d.name);
  if (c->e->n_gpus != 1 || strcmp(c->e->gpus[0].name, g.name) != 0)
    return av_error_set(err, AV_ERR_MISMATCH, c->e->path, "gpu",
                        "the experiment predicts for '%s' but this device is %s (spec '%s'); "
                        "measurements are only compared with predictions for the same GPU",
                        c->e->gpus[0].name, dev, g.name);
  if (c->o->no_cal) {
    snprintf(c->rep.spec, sizeof c->rep.spec, "gpus/%s.json (uncalibrated)", g.name);
    return AV_OK;
  }
  char path[1024];
  if (c->o->spec)
    snprintf(path, sizeof path, "%s", c->o->spec);
  else
    snprintf(path, sizeof path, "%s/profiles/%s.spec.json", av_data_dir(), g.name);
  if (!c->o->spec && access(path, R_OK) != 0) {
    fprintf(stderr, "anvil: note: no calibrated spec %s (run anvil profile); predicting with "
                    "gpus/%s.json\n", path, g.name);
    snprintf(c->rep.spec, sizeof c->rep.spec, "gpus/%s.json (uncalibrated)", g.name);
    return AV_OK;
  }
  av_gpu_t cal;
  if ((rc = av_profile_load_spec(path, &cal, err))) return rc;
  if (strcmp(cal.name, g.name) != 0 || cal.sm_count != g.sm_count || cal.sm_arch != g.sm_arch)
    return av_error_set(err, AV_ERR_MISMATCH, path, NULL,
                        "calibrated spec is for '%s', this device is '%s'", cal.name, g.name);
  c->e->gpus[0] = cal;
  snprintf(c->rep.spec, sizeof c->rep.spec, "%.500s", path);
  return AV_OK;
}

/* The executor's trace as a timeline (launch from the plan) for the Chrome-trace writer. */
static int trace_timeline(const json_t *tr, const av_plan_t *p, av_timeline_t *tl,
                          av_error_t *err) {
  const json_t *ctas = json_object_get(tr, "ctas");
  size_t n = json_array_size(ctas);
  tl->ev = calloc(n ? n : 1, sizeof *tl->ev);
  if (!tl->ev) return av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  tl->cap = (int32_t)(n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    const json_t *r = json_array_get(ctas, i);
    int32_t item = (int32_t)json_integer_value(json_object_get(r, "item"));
    av_cta_event_t *ev = &tl->ev[tl->n++];
    ev->item = item;
    ev->launch = item >= 0 && item < p->n_items ? p->items[item].launch : p->n_launches;
    ev->head = (int32_t)json_integer_value(json_object_get(r, "head"));
    ev->sm = (int32_t)json_integer_value(json_object_get(r, "sm"));
    ev->start_us = json_number_value(json_object_get(r, "start_us"));
    ev->end_us = json_number_value(json_object_get(r, "end_us"));
  }
  return AV_OK;
}

/* Replays the measured trace (saved as `path` in the replay format) and, for the chosen
 * batch, writes the measured and simulated timelines. */
static int trace_pair(vctx_t *c, int bi, int si, const av_plan_t *p, av_exec_result_t *m,
                      av_timeline_t *sim_tl, av_vrow_t *row, av_error_t *err) {
  const av_exp_batch_t *b = &c->e->batches[bi];
  int keep = c->o->trace_of ? strcmp(c->o->trace_of, b->name) == 0 : bi == 0;
  char path[1400], base[1300];
  snprintf(base, sizeof base, "%s/traces/%s__%s", c->dir, b->name, c->e->scheds[si].label);
  snprintf(path, sizeof path, "%s.measured_cta.json", base);
  json_object_set_new(m->trace, "gpu", json_string(c->e->gpus[0].name));
  json_object_set_new(m->trace, "makespan_us", json_real(m->median_us));
  av_replay_trace_t tr;
  av_replay_result_t rr;
  memset(&tr, 0, sizeof tr);
  memset(&rr, 0, sizeof rr);
  int rc = av_json_dump_file(m->trace, path, err);
  if (!rc) rc = av_replay_load(path, p, &tr, err);
  if (!rc) rc = av_replay_run(&tr, p, b->w, &c->e->gpus[0], c->vs, &rr, NULL, err);
  if (!rc) row->replayed_us = rr.replayed_us;
  if (!rc && keep) {
    av_timeline_t mt = {0};
    snprintf(path, sizeof path, "%s.measured.chrome.json", base);
    rc = trace_timeline(m->trace, p, &mt, err);
    if (!rc) rc = av_timeline_write_chrome(&mt, p, path, err);
    av_timeline_free(&mt);
    snprintf(path, sizeof path, "%s.simulated.chrome.json", base);
    if (!rc) rc = av_timeline_write_chrome(sim_tl, p, path, err);
  } else if (!rc) {
    remove(path);
  }
  av_replay_result_free(&rr);
  av_replay_trace_free(&tr);
  return rc;
}

/* One (batch, scheduler): plan, check, simulate, run on the GPU (unless an earlier scheduler
 * of the batch made the same plan). The plan is kept in sp. */
static int run_pair(vctx_t *c, int bi, int si, const av_costmodel_t *cost,
                    av_exec_batch_t *xb, av_vseen_t *sp, av_error_t *err) {
  const av_exp_batch_t *b = &c->e->batches[bi];
  const av_exp_sched_t *s = &c->e->scheds[si];
  const av_gpu_t *g = &c->e->gpus[0];
  av_sched_ctx_t ctx = {.workload = b->w, .gpu = g, .variants = c->vs, .cost = cost};
  av_sim_config_t cfg = {.model = c->e->sim, .record_timeline = c->o->trace};
  av_plan_t *plan = NULL;
  av_sim_result_t res;
  av_exec_result_t m;
  av_timeline_t tl = {0};
  memset(&res, 0, sizeof res);
  memset(&m, 0, sizeof m);
  av_exec_opts_t xo;
  av_exec_opts_default(&xo);
  xo.repeats = (int)c->o->repeats;
  xo.trace = c->o->trace;
  av_vrow_t *row = av_vreport_add(&c->rep);
  int rc = row ? AV_OK : av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  if (!rc) rc = av_scheduler_plan(s->ops, &s->params, &ctx, &plan, err);
  if (!rc) rc = av_plan_check(plan, b->w, err);
  if (!rc) rc = av_sim_run(&cfg, plan, b->w, g, c->vs, cost, &res, c->o->trace ? &tl : NULL, err);
  const int twin = rc ? -1 : av_vseen_find(sp, plan);
  if (!rc && twin >= 0) {
    /* rows may have moved (realloc): index, not pointer, into the report */
    row->batch = bi;
    row->sched = si;
    row->floor_us = av_workload_floor_us(b->w, av_gpu_hbm_bw_GBps(g));
    row->predicted_us = res.makespan_us;
    av_vrow_share(row, &c->rep.rows[sp->row[twin]]);
    snprintf(row->params, sizeof row->params, "%s", plan->params);
    fprintf(stderr, "validate: %s x %s: the plan of %s, measured once\n", b->name, s->label,
            c->e->scheds[c->rep.rows[sp->row[twin]].sched].label);
  }
  if (!rc && twin < 0) rc = av_exec_batch_run(xb, plan, &xo, &m, err);
  if (!rc && twin < 0) {
    row->batch = bi;
    row->sched = si;
    row->floor_us = av_workload_floor_us(b->w, av_gpu_hbm_bw_GBps(g));
    row->predicted_us = res.makespan_us;
    row->measured_us = m.median_us;
    row->min_us = m.min_us;
    row->max_us = m.max_us;
    row->max_rel_err = m.max_rel_err;
    row->unwritten = m.unwritten;
    row->deterministic = m.deterministic;
    row->ctas = m.ctas;
    snprintf(row->params, sizeof row->params, "%s", plan->params);
  }
  if (!rc && twin < 0 && c->o->trace) rc = trace_pair(c, bi, si, plan, &m, &tl, row, err);
  if (rc && err->code && !err->path[0])
    snprintf(err->path, sizeof err->path, "%.100s x %.60s", b->name, s->label);
  av_timeline_free(&tl);
  av_exec_result_free(&m);
  av_sim_result_free(&res);
  if (!rc && twin < 0)
    av_vseen_keep(sp, plan, (int)(row - c->rep.rows));
  else
    av_plan_destroy(plan);
  return rc;
}

static int run_all(vctx_t *c, av_error_t *err) {
  int rc = AV_OK;
  if (c->o->trace) {
    char t[1100];
    snprintf(t, sizeof t, "%s/traces", c->dir);
    rc = av_mkdirs(t, err);
  }
  for (int bi = 0; bi < c->e->n_batches && !rc; bi++) {
    const av_exp_batch_t *b = &c->e->batches[bi];
    av_cost_env_t env = {.gpu = &c->e->gpus[0], .heads = &b->w->heads, .variants = c->vs};
    av_costmodel_t *cost = av_costmodel_create(c->e->cost_ops, &c->e->cost_params, &env, err);
    av_exec_batch_t *xb = cost ? av_exec_batch_create(b->w, 1 + (uint64_t)bi, 8, err) : NULL;
    if (!xb) rc = err->code ? err->code : AV_ERR_INTERNAL;
    av_vseen_t sp = {0};
    if (!rc) rc = av_vseen_init(&sp, c->e->n_scheds, err);
    for (int si = 0; si < c->e->n_scheds && !rc; si++) rc = run_pair(c, bi, si, cost, xb, &sp, err);
    av_vseen_free(&sp);
    fprintf(stderr, "validate: %s done (%d of %d)\n", b->name, bi + 1, c->e->n_batches);
    av_exec_batch_destroy(xb);
    av_costmodel_destroy(cost);
  }
  return rc;
}

static void command_line(int argc, char **argv, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "anvil");
  for (int i = 0; i < argc && used < n; i++)
    used += (size_t)snprintf(out + used, n - used, " %s", argv[i]);
}

int av_cmd_validate(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  vopts_t o = {0};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("validate EXP.json [--out DIR] [--trace] [--gpu-spec NAME]\n"
                      "       anvil validate --offline VALIDATION.json [EXP.json] [--out DIR]",
                      "Runs every batch x scheduler of an experiment on this GPU and compares "
                      "the\nsimulator's prediction with the measurement: APE per pair, MAPE, "
                      "worst error,\nSpearman and Kendall rank correlation, best-plan agreement, "
                      "regret and auto's\ngap to the best plan. Writes DIR/validation.json and "
                      "DIR/validation.csv.\nNeeds a CUDA device, except with --offline: "
                      "the recorded measurements are\nkept, every plan is re-made and "
                      "re-simulated. Method: docs/validation.md.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  vctx_t c = {.o = &o};
  command_line(argc, argv, c.rep.command, sizeof c.rep.command);
  if (o.offline) {
    /* recorded measurements, current simulator: pipeline/validate_offline.c */
    av_voffline_opts_t vo = {.record = o.offline, .exp = o.exp, .out = o.out, .spec = o.spec,
                             .no_cal = o.no_cal, .command = c.rep.command};
    return av_validate_offline(&vo, &err) ? av_cli_fail(&err) : 0;
  }
  c.rep.repeats = (int)o.repeats;
  rc = av_experiment_load(o.exp, &c.e, &err);
  if (!rc) {
    c.rep.e = c.e;
    if (o.out)
      snprintf(c.dir, sizeof c.dir, "%s", o.out);
    else
      snprintf(c.dir, sizeof c.dir, "out/%s/validation", c.e->name);
    rc = pick_gpu(&c, &err);
  }
  if (!rc && o.trace_of) {
    int found = 0;
    for (int bi = 0; bi < c.e->n_batches; bi++) found |= strcmp(c.e->batches[bi].name, o.trace_of) == 0;
    if (!found)
      rc = av_error_set(&err, AV_ERR_USAGE, "validate", "--trace-of",
                        "no batch named '%s' (e.g. %s)", o.trace_of, c.e->batches[0].name);
  }
  if (!rc) {
    c.vs = av_variants_load(NULL, &err);
    if (!c.vs) rc = err.code ? err.code : AV_ERR_INTERNAL;
  }
  if (!rc) rc = run_all(&c, &err);
  if (!rc) rc = av_vreport_write(&c.rep, c.dir, &err);
  if (!rc) {
    av_vreport_print(stdout, &c.rep);
    printf("results: %s/validation.json, %s/validation.csv\n", c.dir, c.dir);
  }
  av_vreport_free(&c.rep);
  av_variants_destroy(c.vs);
  av_experiment_destroy(c.e);
  return rc ? av_cli_fail(&err) : 0;
}
