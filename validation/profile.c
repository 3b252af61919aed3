/* Host side of the profiler (validation/profile.h): the measurement batches and plans, the
 * fits, and the three files. The measuring loop itself is validation/profile_run.c. */
#include "proofs/proofs.h"
#include "validation/profile.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_util.h"

#define SRC "profile"

void av_profile_free(av_profile_t *p) {
  if (!p) return;
  free(p->t);
  free(p->cores);
  free(p->start);
  p->t = NULL;
  p->cores = NULL;
  p->start = NULL;
  p->n = p->cap = p->n_cores = p->n_start = 0;
}

av_profile_table_t *av_profile_add(av_profile_t *p) {
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 32;
    av_profile_table_t *t = realloc(p->t, (size_t)cap * sizeof *t);
    if (!t) return NULL;
    p->t = t;
    p->cap = cap;
  }
  av_profile_table_t *t = &p->t[p->n++];
  memset(t, 0, sizeof *t);
  t->occ_measured = -1;
  return t;
}

av_workload_t *av_profile_workload(int32_t n_q, const int64_t *kv, int32_t n_roots,
                                   int head_dim, av_dtype_t dtype, av_error_t *err) {
  if (n_q < 1 || n_roots < 1) {
    av_error_set(err, AV_ERR_RANGE, SRC, NULL, "need >= 1 query and root, got %d and %d",
                 (int)n_q, (int)n_roots);
    return NULL;
  }
  av_workload_t *w = av_workload_create(n_roots, n_q * n_roots);
  if (!w) {
    av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory (%d roots x %d queries)",
                 (int)n_roots, (int)n_q);
    return NULL;
  }
  snprintf(w->name, sizeof w->name, "profile-q%d-r%d", (int)n_q, (int)n_roots);
  w->heads = (av_heads_t){.hq = 1, .hkv = 1, .head_dim = head_dim, .dtype = dtype};
  for (int32_t r = 0; r < n_roots; r++) {
    w->nodes[r].parent = -1;
    w->nodes[r].kv_len_tokens = kv[r];
    for (int32_t q = 0; q < n_q; q++) w->request_node[r * n_q + q] = r;
  }
  if (av_workload_finalize(w, err)) {
    av_workload_destroy(w);
    return NULL;
  }
  return w;
}

/* Decode tiles write final outputs (the query-centric kernel's usual case); the tree kernels
 * mostly write partial states, whose extra fp32 traffic is part of what C measures. */
static av_output_t tile_output(const av_tile_t *t) {
  return t->kind == AV_KERNEL_DECODE ? AV_OUT_FINAL : AV_OUT_PARTIAL;
}

av_plan_t *av__profile_finish_plan(av_plan_t *p, int ok, const av_workload_t *w,
                                   av_error_t *err) {
  if (!ok) {
    av_plan_destroy(p);
    av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory building a profile plan");
    return NULL;
  }
  if (av_plan_finalize(p, err) || av_plan_check(p, w, err)) {
    av_plan_destroy(p);
    return NULL;
  }
  return p;
}

av_plan_t *av_profile_plan(const av_workload_t *w, const av_tile_t *tile, int serial,
                           av_error_t *err) {
  av_plan_t *p = av_plan_create(w, "profile");
  int32_t *q = malloc(sizeof(int32_t) * (size_t)w->n_requests);
  int ok = p && q;
  int persistent = tile->kind == AV_KERNEL_PERSISTENT;
  int32_t launch = -1;
  if (ok && !serial) launch = av_plan_add_launch(p, 0, tile, persistent ? w->n_nodes : 0);
  ok = ok && (serial || launch >= 0);
  for (int32_t r = 0; ok && r < w->n_nodes; r++) {
    int32_t nq = 0;
    for (int32_t k = w->node_req_offsets[r]; k < w->node_req_offsets[r + 1]; k++)
      q[nq++] = w->node_reqs[k];
    if (serial) launch = av_plan_add_launch(p, 0, tile, persistent ? 1 : 0);
    av_segment_t s = {.node = r, .begin = 0, .end = w->nodes[r].kv_len_tokens};
    int32_t cta = persistent ? (serial ? 0 : r) : -1;
    ok = launch >= 0 && av_plan_add_item(p, launch, q, nq, &s, 1, tile_output(tile), cta,
                                         persistent ? 0 : -1) >= 0;
  }
  free(q);
  return av__profile_finish_plan(p, ok, w, err);
}

av_workload_t *av_profile_cores_workload(int32_t n_req, int64_t kv, int shared, int head_dim,
                                         av_dtype_t dtype, av_error_t *err) {
  if (n_req < 1 || kv < 1) {
    av_error_set(err, AV_ERR_RANGE, SRC, NULL, "need >= 1 request and KV token, got %d and %lld",
                 (int)n_req, (long long)kv);
    return NULL;
  }
  int32_t roots = shared ? 1 : n_req;
  av_workload_t *w = av_workload_create(roots, n_req);
  if (!w) {
    av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory (%d requests)", (int)n_req);
    return NULL;
  }
  snprintf(w->name, sizeof w->name, "coresidency-%s-%d", shared ? "shared" : "own", (int)n_req);
  w->heads = (av_heads_t){.hq = 1, .hkv = 1, .head_dim = head_dim, .dtype = dtype};
  for (int32_t r = 0; r < roots; r++) {
    w->nodes[r].parent = -1;
    w->nodes[r].kv_len_tokens = kv;
  }
  for (int32_t q = 0; q < n_req; q++) w->request_node[q] = shared ? 0 : q;
  if (av_workload_finalize(w, err)) {
    av_workload_destroy(w);
    return NULL;
  }
  return w;
}

av_plan_t *av_profile_cores_plan(const av_workload_t *w, const av_tile_t *tile,
                                 av_error_t *err) {
  av_plan_t *p = av_plan_create(w, "profile-coresidency");
  int persistent = tile->kind == AV_KERNEL_PERSISTENT;
  int32_t launch = p ? av_plan_add_launch(p, 0, tile, persistent ? w->n_requests : 0) : -1;
  int ok = launch >= 0;
  for (int32_t q = 0; ok && q < w->n_requests; q++) {
    int32_t node = w->request_node[q];
    av_segment_t s = {.node = node, .begin = 0, .end = w->nodes[node].kv_len_tokens};
    ok = av_plan_add_item(p, launch, &q, 1, &s, 1, tile_output(tile), persistent ? q : -1,
                          persistent ? 0 : -1) >= 0;
  }
  return av__profile_finish_plan(p, ok, w, err);
}

int av_profile_cores_slowdown(const double *dur_us, int n_k, double fixed_us, double *out,
                              av_error_t *err) {
  for (int i = 0; i < n_k; i++)
    if (!(dur_us[i] > 0) || !isfinite(dur_us[i]))
      return av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                          "co-residency: mean CTA duration at k = %d is %g us (no CTA "
                          "traced?)", i + 1, dur_us[i]);
  double f = fmin(fmax(fixed_us, 0), dur_us[0] / 2);
  for (int i = 0; i < n_k; i++) out[i] = (dur_us[i] - f) / (dur_us[0] - f);
  return AV_OK;
}

typedef struct edge {
  int sm;
  double t;
  int delta;  /* +1 start, -1 end */
} edge_t;

static int cmp_edge(const void *a, const void *b) {
  const edge_t *x = a, *y = b;
  if (x->sm != y->sm) return x->sm - y->sm;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->delta - y->delta; /* ends before starts at the same instant */
}

int av_profile_max_resident(const json_t *trace, int *out, av_error_t *err) {
  *out = 0;
  const json_t *ctas = json_is_object(trace) ? json_object_get(trace, "ctas") : NULL;
  if (!json_is_array(ctas))
    return av_error_set(err, AV_ERR_SCHEMA, SRC, "ctas", "trace has no 'ctas' array");
  size_t n = json_array_size(ctas);
  edge_t *e = malloc(sizeof *e * (2 * n + 1));
  if (!e) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  av_jctx_t c = {.source = SRC, .err = err};
  int rc = AV_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "ctas", i);
    const json_t *r = json_array_get(ctas, i);
    int64_t sm;
    double s, t;
    rc = av_json_get_int(&c, r, where, "sm", 1, 0, 0, 1 << 20, &sm);
    if (!rc) rc = av_json_get_double(&c, r, where, "start_us", 1, 0, -1e12, 1e12, &s);
    if (!rc) rc = av_json_get_double(&c, r, where, "end_us", 1, 0, -1e12, 1e12, &t);
    if (!rc && t < s)
      rc = av_error_set(err, AV_ERR_RANGE, SRC, where, "end_us %g before start_us %g", t, s);
    /* merge CTAs (item -1) run after the attention CTAs: not part of the grid measured */
    const int d = json_integer_value(json_object_get(r, "item")) < 0 ? 0 : 1;
    e[2 * i] = (edge_t){(int)sm, s, +d};
    e[2 * i + 1] = (edge_t){(int)sm, t, -d};
  }
  if (!rc) {
    qsort(e, 2 * n, sizeof *e, cmp_edge);
    int cur = 0, sm = -1;
    for (size_t i = 0; i < 2 * n; i++) {
      if (e[i].sm != sm) cur = 0, sm = e[i].sm;
      cur += e[i].delta;
      if (cur > *out) *out = cur;
    }
  }
  free(e);
  return rc;
}

int av_profile_fit_line(const double *x, const double *y, int n, double *c0, double *c1,
                        double *r2, av_error_t *err) {
  if (n < 2) return av_error_set(err, AV_ERR_RANGE, SRC, NULL, "a line needs >= 2 points");
  double cov00, cov01, cov11, sumsq;
  if (gsl_fit_linear(x, 1, y, 1, (size_t)n, c0, c1, &cov00, &cov01, &cov11, &sumsq) ||
      !isfinite(*c1))
    return av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                        "cannot fit a line (all x equal?)");
  double mean = 0, tss = 0;
  for (int i = 0; i < n; i++) mean += y[i] / n;
  for (int i = 0; i < n; i++) tss += (y[i] - mean) * (y[i] - mean);
  *r2 = tss > 0 ? 1.0 - sumsq / tss : 1.0;
  return AV_OK;
}

/* --- files ------------------------------------------------------------------------------ */

static json_t *table_json(const av_profile_table_t *t) {
  json_t *nq = json_array(), *kv = json_array(), *rows = json_array();
  for (int i = 0; i < t->n_nq; i++) json_array_append_new(nq, json_integer(t->nq[i]));
  for (int j = 0; j < t->n_kv; j++) json_array_append_new(kv, json_integer(t->kv[j]));
  for (int i = 0; i < t->n_nq; i++) {
    json_t *row = json_array();
    for (int j = 0; j < t->n_kv; j++)
      json_array_append_new(row, json_real(round(t->time_us[i][j] * 1e4) / 1e4));
    json_array_append_new(rows, row);
  }
  return json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o}", "kind",
                   av_kernel_kind_name(t->tile.kind), "m", t->tile.m_rows, "n",
                   t->tile.n_tokens, "warps", t->tile.warps, "head_dim", t->head_dim, "dtype",
                   av_dtype_name(t->dtype), "n_q", nq, "n_kv", kv, "time_us", rows);
}

static json_t *reals(const double *v, int n, double scale) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, json_real(round(v[i] * scale) / scale));
  return a;
}

/* The queue curves (validation/profile_queue.c). */
static json_t *queue_json(const av_profile_t *p) {
  json_t *vs = json_array();
  for (int i = 0; i < p->n_queue; i++) {
    const av_profile_queue_t *c = &p->queue[i];
    json_t *kv = json_array();
    for (int k = 0; k < c->n; k++) json_array_append_new(kv, json_integer(c->kv[k]));
    json_array_append_new(
        vs, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o, s:i, s:o, s:o}", "kind",
                      av_kernel_kind_name(c->tile.kind), "m", c->tile.m_rows, "n",
                      c->tile.n_tokens, "warps", c->tile.warps, "head_dim", c->head_dim,
                      "dtype", av_dtype_name(c->dtype), "n_kv", kv, "first_us",
                      reals(c->first_us, c->n, 1e4), "next_us", reals(c->next_us, c->n, 1e4),
                      "loaded_ctas", c->loaded_ctas, "loaded_first_us",
                      reals(c->loaded_first_us, c->n, 1e4), "loaded_next_us",
                      reals(c->loaded_next_us, c->n, 1e4)));
  }
  return json_pack("{s:i, s:s, s:o}", "items", AV_PROF_QUEUE_ITEMS, "notes",
                   "persistent CTAs, each a queue of one-query items over their own roots, L2 "
                   "flushed; first_us: a queue's first item from its CTA's start, next_us: the "
                   "mean of the others, each from the previous item's end; one CTA alone, and "
                   "loaded_*: a full wave of loaded_ctas CTAs",
                   "variants", vs);
}

/* The optional "coresidency" key (costmodels/profile_coresidency.h reads it). */
static json_t *cores_json(const av_profile_t *p) {
  json_t *vs = json_array();
  for (int i = 0; i < p->n_cores; i++) {
    const av_profile_cores_t *c = &p->cores[i];
    json_t *k = json_array();
    for (int j = 0; j < c->n_k; j++) json_array_append_new(k, json_integer(j + 1));
    json_array_append_new(
        vs, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "kind",
                      av_kernel_kind_name(c->tile.kind), "m", c->tile.m_rows, "n",
                      c->tile.n_tokens, "warps", c->tile.warps, "head_dim", c->head_dim,
                      "dtype", av_dtype_name(c->dtype), "k", k, "slowdown",
                      reals(c->slowdown, c->n_k, 1e4), "duration_us",
                      reals(c->dur_us, c->n_k, 1e4), "hbm_duration_us",
                      reals(c->hbm_dur_us, c->n_k, 1e4), "hbm_GBps",
                      reals(c->hbm_GBps, c->n_k, 10)));
  }
  char notes[400];
  snprintf(notes, sizeof notes,
           "k x SMs identical one-query CTAs of %d tokens in one launch (k per SM), L2 "
           "flushed; slowdown = (duration - cta_fixed_us) / (lone duration - cta_fixed_us) "
           "with all CTAs reading one shared KV (L2-resident); hbm_*: each CTA its own KV",
           AV_PROF_CORES_KV);
  return json_pack("{s:i, s:s, s:o}", "kv_tokens", AV_PROF_CORES_KV, "notes", notes,
                   "variants", vs);
}

json_t *av_profile_to_json(const av_profile_t *p) {
  json_t *vs = json_array();
  for (int i = 0; i < p->n; i++) json_array_append_new(vs, table_json(&p->t[i]));
  char notes[512];
  snprintf(notes, sizeof notes,
           "measured on %s: single-CTA times (one CTA alone on the GPU, L2 flushed, mean "
           "of traced runs, %%globaltimer) with GQA group 1 (rows = queries); copy %.0f GB/s, "
           "launch %.2f us, lone CTA %.1f GB/s + %.2f us; see the .details.json file",
           p->device, p->copy_GBps, p->launch_us, p->lone_GBps, p->cta_fixed_us);
  json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "gpu", p->gpu, "command", p->command,
                          "notes", notes, "variants", vs);
  if (doc && p->n_cores > 0) json_object_set_new(doc, "coresidency", cores_json(p));
  if (doc && (p->n_merge > 0 || p->empty_cta_us > 0))
    json_object_set_new(doc, "merge", av_profile_merge_json(p));
  if (doc && p->n_start > 0) json_object_set_new(doc, "start", av_profile_start_json(p));
  return doc;
}

json_t *av_profile_details_json(const av_profile_t *p) {
  json_t *occ = json_array();
  for (int i = 0; i < p->n; i++) {
    const av_profile_table_t *t = &p->t[i];
    json_array_append_new(
        occ, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:i, s:i}", "kind",
                       av_kernel_kind_name(t->tile.kind), "m", t->tile.m_rows, "n",
                       t->tile.n_tokens, "warps", t->tile.warps, "head_dim", t->head_dim,
                       "dtype", av_dtype_name(t->dtype), "predicted", t->occ_predicted,
                       "measured", t->occ_measured));
  }
  json_t *res = json_array();
  for (int i = 0; i < p->n_cores; i++) {
    const av_profile_cores_t *c = &p->cores[i];
    json_t *r = json_array();
    for (int j = 0; j < c->n_k; j++) json_array_append_new(r, json_integer(c->resident[j]));
    json_array_append_new(res, json_pack("{s:s, s:i, s:i, s:i, s:o}", "kind",
                                         av_kernel_kind_name(c->tile.kind), "m", c->tile.m_rows,
                                         "n", c->tile.n_tokens, "warps", c->tile.warps,
                                         "most_resident_per_k", r));
  }
  json_t *d = json_pack("{s:s, s:s, s:s, s:f, s:{s:f, s:f}, s:{s:f, s:f, s:f}, s:f, s:o}", "gpu", p->gpu,
                   "device", p->device, "command", p->command, "copy_GBps", p->copy_GBps,
                   "launch", "per_launch_us", p->launch_us, "r2", p->launch_r2, "lone_cta",
                   "GBps", p->lone_GBps, "fixed_us", p->cta_fixed_us, "r2", p->lone_r2,
                   "tensor_tflops", p->tensor_tflops, "occupancy", occ);
  /* whether each co-residency grid really put k CTAs on an SM (the block scheduler's call) */
  if (d) json_object_set_new(d, "coresidency_placement", res);
  if (d) json_object_set_new(d, "empty_cta", json_pack("{s:f, s:f}", "per_wave_us",
                                                      p->empty_cta_us, "per_cta_us",
                                                      p->empty_slope_us));
  if (d) json_object_set_new(d, "dispatch", json_pack("{s:f, s:f, s:f, s:f}", "join_overhead_us",
                                                     p->join_us, "run_tail_us", p->tail_us,
                                                     "grid_refill_us", p->refill_us,
                                                     "launch_gap_us", p->launch_gap_us));
  else json_decref(res);
  /* measured, not yet modelled: the engine's errors on persistent queues (docs/validation.md
   * "Session 7") need more than this to correct */
  if (d && p->n_queue > 0) json_object_set_new(d, "queue", queue_json(p));
  return d;
}

static void set_field(json_t *spec, const char *key, double v, const char *source) {
  json_object_set_new(spec, key, json_pack("{s:f, s:s}", "value", v, "source", source));
}

/* The grid CTA's dispatch cost: the refill gap traced in the occupancy grids, else the empty
 * persistent CTA's time per wave (the same path: a CTA starts, reads a record, exits). The
 * kernel gap of one stream as the engine adds it: the traced gap less the next kernel's first
 * CTA dispatch, which the engine charges to that CTA (docs/validation.md "Session 8"). */
static void dispatch_fields(json_t *s, const av_profile_t *p, const char *by, const char *date) {
  char src[1024];
  double cta = p->refill_us > 0 ? p->refill_us : p->empty_cta_us;
  if (cta > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): %s", p->device, by, date,
             p->refill_us > 0 ? "occupancy grids' traces, a refilled slot's gap between the "
                                "previous CTA's end and the next CTA's traced start (mean)"
                              : "empty persistent CTA, time per wave");
    set_field(s, "cta_dispatch_us", round(cta * 1000) / 1000, src);
  }
  if (p->launch_gap_us > 0) {
    double gap = p->launch_gap_us - cta;
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): 32 one-CTA launches on one stream, traced: "
             "a launch's first CTA start minus the previous one's last CTA end (mean), less "
             "cta_dispatch_us", p->device, by, date);
    set_field(s, "stream_gap_us", round((gap > 0 ? gap : 0) * 1000) / 1000, src);
  }
}

json_t *av_profile_calibrate_spec(const json_t *spec, const av_profile_t *p, const char *date) {
  json_t *s = json_deep_copy(spec);
  if (!s) return NULL;
  char src[1024];
  const char *by = p->command[0] ? p->command : "anvil profile";
  if (p->copy_GBps > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): device-to-device copy, bytes read + written / time "
             "(median)", p->device, by, date);
    set_field(s, "hbm_bw_measured_GBps", round(p->copy_GBps), src);
  }
  if (p->launch_us > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): slope of plan time over 1..32 one-CTA launches on one "
             "stream (R^2 %.3f)", p->device, by, date, p->launch_r2);
    set_field(s, "launch_overhead_us", round(p->launch_us * 1000) / 1000, src);
  }
  if (p->lone_GBps > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): intercept of one CTA's time over its KV tokens "
             "(R^2 %.3f)", p->device, by, date, p->lone_r2);
    set_field(s, "cta_fixed_us", round(fmax(p->cta_fixed_us, 0) * 1000) / 1000, src);
    const json_t *lat = json_object_get(json_object_get(s, "mem_latency_ns"), "value");
    double lat_ns = json_is_number(lat) ? json_number_value(lat) : 0;
    if (lat_ns > 0) {
      snprintf(src, sizeof src,
               "measured on %.200s (%.300s, %.20s): a lone CTA streams KV at %.1f GB/s; x mem_latency_ns "
               "%.0f (Little's law, the engine's per-SM in-flight bound)",
               p->device, by, date, p->lone_GBps, lat_ns);
      set_field(s, "bytes_in_flight_per_sm", round(p->lone_GBps * lat_ns), src);
    }
  }
  if (p->join_us > 0 || p->tail_us > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): merge-step traces, first merge CTA's start "
             "minus the last attention CTA's end (mean)", p->device, by, date);
    set_field(s, "join_overhead_us", round(p->join_us * 1000) / 1000, src);
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): merge-step plans, timed median minus the "
             "traced span minus launch_overhead_us (the engine's first issue)", p->device, by,
             date);
    set_field(s, "run_tail_us", round(p->tail_us * 1000) / 1000, src);
  }
  dispatch_fields(s, p, by, date);
  if (p->tensor_tflops > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): one CTA of the largest-m partial tile, "
             "padded QK^T + PV FLOPs over (C(m, 16384) - cta_fixed_us), x SMs: the rate the "
             "kernels reach, not the datasheet's", p->device, by, date);
    set_field(s, "fp16_tensor_tflops", round(p->tensor_tflops * 10) / 10, src);
  }
  return s;
}

/* base = out path without a trailing ".json". */
static void base_of(const char *out_path, char *base, size_t n) {
  snprintf(base, n, "%s", out_path);
  size_t l = strlen(base);
  if (l > 5 && strcmp(base + l - 5, ".json") == 0) base[l - 5] = '\0';
}

int av_profile_write(const av_profile_t *p, const char *out_path, const char *spec_path,
                     av_error_t *err) {
  char base[1000], path[3][1100];
  base_of(out_path, base, sizeof base);
  snprintf(path[0], sizeof path[0], "%s.json", base);
  snprintf(path[1], sizeof path[1], "%s.spec.json", base);
  snprintf(path[2], sizeof path[2], "%s.details.json", base);
  json_t *spec = NULL, *doc[3] = {NULL, NULL, NULL};
  int rc = av_json_load_file(spec_path, &spec, err);
  if (!rc) {
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tmv;
    if (gmtime_r(&now, &tmv)) strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    doc[0] = av_profile_to_json(p);
    doc[1] = av_profile_calibrate_spec(spec, p, date);
    doc[2] = av_profile_details_json(p);
    if (!doc[0] || !doc[1] || !doc[2])
      rc = av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  }
  int written = 0;
  for (; !rc && written < 3; written++) rc = av_json_dump_file(doc[written], path[written], err);
  if (rc)
    for (int i = 0; i < written; i++) remove(path[i]);
  for (int i = 0; i < 3; i++) json_decref(doc[i]);
  json_decref(spec);
  return rc;
}

int av_profile_load_spec(const char *path, av_gpu_t *out, av_error_t *err) {
  int rc = av_gpu_load_file(path, out, err);
  if (rc) return rc;
  size_t l = strlen(out->name);
  if (l > 5 && strcmp(out->name + l - 5, ".spec") == 0) out->name[l - 5] = '\0';
  return AV_OK;
}
