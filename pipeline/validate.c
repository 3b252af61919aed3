/* The measuring loop of `anvil validate` (pipeline/validate.h): every (batch, scheduler) is
 * planned, predicted by the simulator and measured by the GPU executor; with --trace every
 * plan's per-CTA timeline is recorded and replayed through the simulator's dispatch model.
 * A batch's distinct plans are verified one by one, then timed together with their repeats
 * interleaved (av_exec_batch_time), so a passing disturbance of the GPU touches a few
 * repeats of many plans rather than every repeat of one.
 * A batch in the journal (a resumed validation) is taken from it, not measured again; each
 * measured batch is journaled when it is done. */
#include "pipeline/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/json_util.h"
#include "pipeline/files.h"
#include "proofs/proofs.h"
#include "sim/replay.h"
#include "executor/executor.h"

typedef struct vrun {
  const av_validate_opts_t *o;
  const av_experiment_t *e;
  const av_variants_t *vs;
  av_vreport_t *rep;
} vrun_t;

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
static int trace_pair(vrun_t *c, int bi, int si, const av_plan_t *p, av_exec_result_t *m,
                      av_timeline_t *sim_tl, av_vrow_t *row, av_error_t *err) {
  const av_exp_batch_t *b = &c->e->batches[bi];
  int keep = c->o->trace_of ? strcmp(c->o->trace_of, b->name) == 0 : bi == 0;
  char path[1400], base[1300];
  snprintf(base, sizeof base, "%s/traces/%s__%s", c->o->dir, b->name, c->e->scheds[si].label);
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

/* One (batch, scheduler) while its batch is measured: its report row (an index: rows move
 * when the report grows), the row of the earlier scheduler whose plan it shares (-1: none),
 * where its own plan is kept in the batch's av_vseen_t (-1: none), and its verify/trace run
 * and simulated timeline. */
typedef struct vpair {
  int row, twin_row, seen;
  av_exec_result_t m;
  av_timeline_t tl;
} vpair_t;

/* Plan, check, simulate; a plan no earlier scheduler of the batch made is verified (and
 * traced) on the GPU and kept in sp for timing. */
static int plan_pair(vrun_t *c, int bi, int si, const av_costmodel_t *cost,
                     av_exec_batch_t *xb, av_vseen_t *sp, vpair_t *vp, av_error_t *err) {
  const av_exp_batch_t *b = &c->e->batches[bi];
  const av_exp_sched_t *s = &c->e->scheds[si];
  const av_gpu_t *g = &c->e->gpus[0];
  av_sched_ctx_t ctx = {.workload = b->w, .gpu = g, .variants = c->vs, .cost = cost,
                        .max_items = c->e->limits.plan_items, .launch_model = c->e->launch,
                        .kv_copy = c->e->kv_copy};
  av_sim_config_t cfg = {.model = c->e->sim, .record_timeline = c->o->trace,
                         .kv_copy = c->e->kv_copy};
  av_plan_t *plan = NULL;
  av_sim_result_t res;
  memset(&res, 0, sizeof res);
  av_exec_opts_t xo;
  av_exec_opts_default(&xo);
  xo.repeats = 0; /* timed later, interleaved with the batch's other plans */
  xo.trace = c->o->trace;
  av_vrow_t *row = av_vreport_add(c->rep);
  int rc = row ? AV_OK : av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  vp->row = row ? (int)(row - c->rep->rows) : -1;
  vp->twin_row = -1;
  vp->seen = -1;
  if (!rc) rc = av_scheduler_plan(s->ops, &s->params, &ctx, &plan, err);
  if (!rc) rc = av_plan_check(plan, b->w, err);
  if (!rc)
    rc = av_sim_run(&cfg, &(av_sim_input_t){plan, b->w, g, c->vs, cost}, &res,
                    c->o->trace ? &vp->tl : NULL, err);
  const int twin = rc ? -1 : av_vseen_find(sp, plan);
  if (!rc) {
    row->batch = bi;
    row->sched = si;
    av_workload_floor(b->w, g, &row->floor);
    row->predicted_us = res.makespan_us;
    snprintf(row->params, sizeof row->params, "%s", plan->params);
  }
  if (!rc && twin >= 0) {
    vp->twin_row = sp->row[twin];
    char b1[AV_ESCAPE_NAME_SIZE], b2[AV_ESCAPE_NAME_SIZE], b3[AV_ESCAPE_NAME_SIZE];
    av_vnote(c->o->note, c->o->note_user, AV_VNOTE_PROGRESS,
            "%s x %s: the plan of %s, measured once", av_escape_text(b->name, b1, sizeof b1), av_escape_text(s->label, b2, sizeof b2),
            av_escape_text(c->e->scheds[c->rep->rows[vp->twin_row].sched].label, b3, sizeof b3));
  }
  if (!rc && twin < 0) rc = av_exec_batch_run(xb, plan, &xo, &vp->m, err);
  if (!rc && twin < 0) {
    row->max_rel_err = vp->m.max_rel_err;
    row->unwritten = vp->m.unwritten;
    row->deterministic = vp->m.deterministic;
    row->ctas = vp->m.ctas;
  }
  if (rc && err->code && !err->path[0])
    snprintf(err->path, sizeof err->path, "%.100s x %.60s", b->name, s->label);
  av_sim_result_free(&res);
  if (!rc && twin < 0) {
    vp->seen = sp->n;
    av_vseen_keep(sp, plan, vp->row);
  } else {
    av_plan_destroy(plan);
  }
  return rc;
}

/* Times the batch's distinct plans together (av_exec_batch_time), fills their rows, replays
 * their traces, and gives each twin its plan's measurement. */
static int time_pairs(vrun_t *c, int bi, av_exec_batch_t *xb, av_vseen_t *sp, vpair_t *vp,
                      int n, av_error_t *err) {
  av_exec_opts_t xo;
  av_exec_opts_default(&xo);
  xo.repeats = (int)c->o->repeats;
  av_exec_result_t *t = calloc((size_t)sp->n + 1, sizeof *t);
  int rc = t ? AV_OK : av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  if (!rc && sp->n) rc = av_exec_batch_time(xb, (const av_plan_t *const *)sp->plan, sp->n, &xo, t, err);
  for (int k = 0; k < sp->n && !rc; k++) {
    av_vrow_t *row = &c->rep->rows[sp->row[k]];
    row->measured_us = t[k].median_us;
    row->min_us = t[k].min_us;
    row->max_us = t[k].max_us;
  }
  for (int i = 0; i < n && !rc; i++) {
    av_vrow_t *row = &c->rep->rows[vp[i].row];
    if (vp[i].twin_row >= 0) {
      av_vrow_share(row, &c->rep->rows[vp[i].twin_row]);
      continue;
    }
    if (!c->o->trace) continue;
    vp[i].m.median_us = row->measured_us;
    rc = trace_pair(c, bi, row->sched, sp->plan[vp[i].seen], &vp[i].m, &vp[i].tl, row, err);
  }
  free(t);
  return rc;
}

/* One batch: its cost model and executor batch; every scheduler's pair planned, verified,
 * then all timed together. */
static int run_batch(vrun_t *c, int bi, av_error_t *err) {
  const av_exp_batch_t *b = &c->e->batches[bi];
  av_cost_env_t env = {.gpu = &c->e->gpus[0], .heads = &b->w->heads, .variants = c->vs};
  av_costmodel_t *cost = av_costmodel_create(c->e->cost_ops, &c->e->cost_params, &env, err);
  av_exec_batch_t *xb = cost ? av_exec_batch_create(b->w, 1 + (uint64_t)bi, 8, err) : NULL;
  if (xb && av_exec_batch_set_kv_copy(xb, c->e->kv_copy, err)) {
    av_exec_batch_destroy(xb);
    xb = NULL;
  }
  vpair_t *vp = xb ? calloc((size_t)c->e->n_scheds, sizeof *vp) : NULL;
  int rc = vp ? AV_OK : err->code ? err->code
                                  : av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  av_vseen_t sp = {0};
  if (!rc) rc = av_vseen_init(&sp, c->e->n_scheds, err);
  int n = 0;
  for (; n < c->e->n_scheds && !rc; n++) rc = plan_pair(c, bi, n, cost, xb, &sp, &vp[n], err);
  if (!rc) rc = time_pairs(c, bi, xb, &sp, vp, n, err);
  for (int i = 0; vp && i < n; i++) {
    av_exec_result_free(&vp[i].m);
    av_timeline_free(&vp[i].tl);
  }
  free(vp);
  av_vseen_free(&sp);
  av_exec_batch_destroy(xb);
  av_costmodel_destroy(cost);
  return rc;
}

/* The bytes the executor moves for batch b (its paged K and V, queries and outputs): what
 * its time on the GPU host grows with (the cache is filled on the host, uploaded, flushed
 * and read by every plan). */
static double batch_bytes(const av_exp_batch_t *b) {
  const av_workload_t *w = b->w;
  const av_heads_t *h = &w->heads;
  double tokens = 0;
  for (int32_t u = 0; u < w->n_nodes; u++) tokens += (double)w->nodes[u].kv_len_tokens;
  const double el = av_dtype_bytes(h->dtype);
  return (2.0 * tokens * h->hkv + 2.0 * w->n_requests * h->hq) * h->head_dim * el;
}

int av_validate_shard_assign(const av_experiment_t *e, int shards, int *shard_of) {
  const int n = e->n_batches;
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  double *bytes = malloc(((size_t)n + 1) * sizeof *bytes);
  double *load = calloc((size_t)shards + 1, sizeof *load);
  if (!order || !bytes || !load) {
    free(order), free(bytes), free(load);
    return AV_ERR_NOMEM;
  }
  for (int b = 0; b < n; b++) order[b] = b, bytes[b] = batch_bytes(&e->batches[b]);
  /* largest first, ties by index (insertion sort: stable, and batches are few) */
  for (int i = 1; i < n; i++) {
    const int x = order[i];
    int j = i;
    for (; j > 0 && bytes[order[j - 1]] < bytes[x]; j--) order[j] = order[j - 1];
    order[j] = x;
  }
  for (int i = 0; i < n; i++) {
    int k = 0;
    for (int s = 1; s < shards; s++)
      if (load[s] < load[k]) k = s;
    shard_of[order[i]] = k;
    load[k] += bytes[order[i]];
  }
  free(order), free(bytes), free(load);
  return AV_OK;
}

static int run_all(vrun_t *c, av_error_t *err) {
  int rc = AV_OK;
  int *shard_of = NULL;
  if (c->o->shards > 1) {
    shard_of = malloc(((size_t)c->e->n_batches + 1) * sizeof *shard_of);
    if (!shard_of || av_validate_shard_assign(c->e, c->o->shards, shard_of)) {
      free(shard_of);
      return av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
    }
  }
  if (c->o->trace) {
    char t[1100];
    snprintf(t, sizeof t, "%s/traces", c->o->dir);
    rc = av_mkdirs(t, err);
  }
  for (int bi = 0; bi < c->e->n_batches && !rc; bi++) {
    if (shard_of && shard_of[bi] != c->o->shard) continue;
    const int first = c->rep->n;
    const int taken = av_vjournal_take(c->o->journal, bi, c->rep);
    char name[AV_ESCAPE_NAME_SIZE];
    av_escape_text(c->e->batches[bi].name, name, sizeof name);
    if (taken < 0) rc = av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
    if (taken) {
      av_vnote(c->o->note, c->o->note_user, AV_VNOTE_PROGRESS,
               "%s taken from the journal (%d of %d)", name, bi + 1, c->e->n_batches);
      continue;
    }
    rc = run_batch(c, bi, err);
    if (!rc) rc = av_vjournal_append(c->o->journal, bi, c->rep, first, err);
    av_vnote(c->o->note, c->o->note_user, AV_VNOTE_PROGRESS, "%s done (%d of %d)", name,
             bi + 1, c->e->n_batches);
  }
  free(shard_of);
  return rc;
}

int av_validate_run(const av_experiment_t *e, const av_variants_t *vs,
                    const av_validate_opts_t *o, av_vreport_t *rep, av_error_t *err) {
  vrun_t c = {.o = o, .e = e, .vs = vs, .rep = rep};
  return run_all(&c, err);
}
