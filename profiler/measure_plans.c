/* Host side of the profiler (profiler/profile.h): the measurement batches and plans, the
 * fits. The measuring loop itself is profiler/measure_run.c; the files are written by
 * profile_format/. */
#include "proofs/proofs.h"
#include "profiler/profile.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_util.h"

#define SRC "profile"

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
    ok = launch >= 0 && av_plan_add_item(p, launch, (av_item_work_t){q, nq, &s, 1},
                                         tile_output(tile), cta, persistent ? 0 : -1) >= 0;
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
    ok = av_plan_add_item(p, launch, (av_item_work_t){&q, 1, &s, 1}, tile_output(tile),
                          persistent ? q : -1, persistent ? 0 : -1) >= 0;
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
    int64_t sm = 0;  /* copied below even when a key fails (then discarded) */
    double s = 0, t = 0;
    rc = av_json_get_int(&c, r, (av_json_field_t){where, "sm", 1}, 0, 0, 1 << 20, &sm);
    if (!rc)
      rc = av_json_get_double(&c, r, (av_json_field_t){where, "start_us", 1}, 0, -1e12, 1e12, &s);
    if (!rc)
      rc = av_json_get_double(&c, r, (av_json_field_t){where, "end_us", 1}, 0, -1e12, 1e12, &t);
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
