/* The profiler's merge step (profiler/profile.h): the merge kernel's time over the number
 * of partial states per request, and what a persistent CTA with an empty queue costs. The
 * first run of the per-CTA model charged merge CTAs the lone attention CTA's rate and every
 * empty persistent CTA a working CTA's fixed cost; traced validation runs showed both wrong by
 * tens of µs on split plans, so both are measured here rather than assumed
 * (docs/simulator.md#merge). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "core/occupancy.h"
#include "executor/executor.h"
#include "profiler/profile.h"

#define SRC "profile"

static const int32_t k_slots_full[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const int32_t k_slots_quick[] = {1, 8, 64};
/* Waves of empty persistent CTAs: enough that they, not the one working CTA (a few µs),
 * decide the plan's time; with 1..8 waves the line was flat within noise (R^2 0.63). */
static const int32_t k_waves[] = {16, 32, 64, 128};

/* Node and request 0: the merge subject; nodes 1..streamers: one request each. */
static av_workload_t *merge_workload(int32_t slots, int rows, int head_dim, av_dtype_t dtype,
                                     int32_t streamers, int64_t stream_tokens,
                                     av_error_t *err) {
  if (slots < 1 || rows < 1 || streamers < 0 || (streamers > 0 && stream_tokens < 1)) {
    av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                 "need >= 1 slot and row and >= 0 streamers of >= 1 token, got %d, %d, %d, "
                 "%lld", (int)slots, rows, (int)streamers, (long long)stream_tokens);
    return NULL;
  }
  av_workload_t *w = av_workload_create(1 + streamers, 1 + streamers);
  if (!w) {
    av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
    return NULL;
  }
  snprintf(w->name, sizeof w->name, "profile-merge-s%d%s", (int)slots, streamers ? "-cold" : "");
  w->heads = (av_heads_t){.hq = rows, .hkv = 1, .head_dim = head_dim, .dtype = dtype};
  for (int32_t i = 0; i <= streamers; i++) {
    w->nodes[i].parent = -1;
    w->nodes[i].kv_len_tokens = i == 0 ? (int64_t)slots * AV_PROF_MERGE_SEG : stream_tokens;
    w->request_node[i] = i;
  }
  if (av_workload_finalize(w, err)) {
    av_workload_destroy(w);
    return NULL;
  }
  return w;
}

av_workload_t *av_profile_merge_workload(int32_t slots, int rows, int head_dim,
                                         av_dtype_t dtype, av_error_t *err) {
  return merge_workload(slots, rows, head_dim, dtype, 0, 0, err);
}

av_workload_t *av_profile_merge_cold_workload(int32_t slots, int rows, int head_dim,
                                              av_dtype_t dtype, int32_t streamers,
                                              int64_t stream_tokens, av_error_t *err) {
  if (streamers < 1) {
    av_error_set(err, AV_ERR_RANGE, SRC, NULL, "a cold merge batch needs >= 1 streamer");
    return NULL;
  }
  return merge_workload(slots, rows, head_dim, dtype, streamers, stream_tokens, err);
}


av_plan_t *av_profile_merge_plan(const av_workload_t *w, const av_tile_t *tile,
                                 av_error_t *err) {
  av_plan_t *p = av_plan_create(w, "profile-merge");
  int32_t launch = p ? av_plan_add_launch(p, 0, tile, 0) : -1;
  int ok = launch >= 0;
  const int64_t slots = w->nodes[0].kv_len_tokens / AV_PROF_MERGE_SEG;
  for (int64_t j = 0; ok && j < slots; j++) {
    const int32_t q = 0;
    av_segment_t s = {.node = 0, .begin = j * AV_PROF_MERGE_SEG,
                      .end = (j + 1) * AV_PROF_MERGE_SEG};
    ok = av_plan_add_item(p, launch, (av_item_work_t){&q, 1, &s, 1}, AV_OUT_PARTIAL, -1, -1) >= 0;
  }
  for (int32_t r = 1; ok && r < w->n_requests; r++) {
    av_segment_t s = {.node = r, .begin = 0, .end = w->nodes[r].kv_len_tokens};
    ok = av_plan_add_item(p, launch, (av_item_work_t){&r, 1, &s, 1}, AV_OUT_FINAL, -1, -1) >= 0;
  }
  return av__profile_finish_plan(p, ok, w, err);
}

av_plan_t *av_profile_empty_plan(const av_workload_t *w, const av_tile_t *tile, int32_t ctas,
                                 av_error_t *err) {
  if (ctas < 1) {
    av_error_set(err, AV_ERR_RANGE, SRC, NULL, "need >= 1 CTA, got %d", (int)ctas);
    return NULL;
  }
  av_plan_t *p = av_plan_create(w, "profile-empty");
  int32_t launch = p ? av_plan_add_launch(p, 0, tile, ctas) : -1;
  int ok = launch >= 0;
  const int32_t q = w->node_reqs[w->node_req_offsets[0]];
  av_segment_t s = {.node = 0, .begin = 0, .end = w->nodes[0].kv_len_tokens};
  ok = ok && av_plan_add_item(p, launch, (av_item_work_t){&q, 1, &s, 1}, AV_OUT_FINAL, 0, 0) >= 0;
  return av__profile_finish_plan(p, ok, w, err);
}

/* --- measuring ---------------------------------------------------------------------- */

/* What the traces of one merge plan say, summed over runs. */
typedef struct merge_obs {
  double cta_us, join_us, span_us;
  int ctas, runs;
} merge_obs_t;

/* One traced run's merge CTAs (item -1; with first_only just the first, request 0's rows:
 * the records follow the merge kernel's CTA order), the join (first merge start minus the
 * last attention end) and the span (first start to last end). */
static int merge_trace(const json_t *trace, int first_only, merge_obs_t *m, av_error_t *err) {
  const json_t *ctas = json_object_get(trace, "ctas");
  double attn_end = 0, merge_start = INFINITY, lo = INFINITY, hi = 0;
  int n = 0;
  for (size_t i = 0; i < json_array_size(ctas); i++) {
    const json_t *c = json_array_get(ctas, i);
    const double s = json_number_value(json_object_get(c, "start_us"));
    const double e = json_number_value(json_object_get(c, "end_us"));
    lo = fmin(lo, s);
    hi = fmax(hi, e);
    if (json_integer_value(json_object_get(c, "item")) >= 0) {
      attn_end = fmax(attn_end, e);
      continue;
    }
    if (first_only && n > 0) continue;
    m->cta_us += e - s;
    merge_start = fmin(merge_start, s);
    n++;
  }
  if (n == 0)
    return av_error_set(err, AV_ERR_INTERNAL, SRC, NULL, "merge: the trace has no merge CTA");
  m->ctas += n;
  m->join_us += fmax(merge_start - attn_end, 0);
  m->span_us += hi - lo;
  m->runs++;
  return AV_OK;
}

/* `runs` traced runs of p, L2 flushed first. */
static int merge_point(av_exec_batch_t *b, const av_gpu_t *g, const av_plan_t *p, int runs,
                       int first_only, merge_obs_t *m, av_error_t *err) {
  av_exec_opts_t o;
  av__profile_traced_opts(&o);
  int rc = AV_OK;
  memset(m, 0, sizeof *m);
  for (int r = 0; r < runs && !rc; r++) {
    av_exec_result_t res;
    rc = av__profile_flush_l2(g, err);
    if (!rc) rc = av_exec_batch_run(b, p, &o, &res, err);
    if (rc) break;
    rc = merge_trace(res.trace, first_only, m, err);
    av_exec_result_free(&res);
  }
  return rc;
}

/* The run's tail: timed median (events, L2 flushed between repeats) minus the mean traced
 * span minus the engine's first issue (launch_us). */
static int tail_point(av_exec_batch_t *b, const av_plan_t *p, const merge_obs_t *m,
                      double launch_us, double *tail, av_error_t *err) {
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  o.verify = 0;
  o.repeats = 10;
  av_exec_result_t r;
  int rc = av_exec_batch_run(b, p, &o, &r, err);
  if (rc) return rc;
  *tail = r.median_us - m->span_us / m->runs - launch_us;
  av_exec_result_free(&r);
  return AV_OK;
}

int av__profile_join_tail(av_exec_batch_t *b, const av_gpu_t *g, const av_plan_t *p, int runs,
                          double launch_us, double *join_us, double *tail_us, av_error_t *err) {
  merge_obs_t obs;
  int rc = merge_point(b, g, p, runs, 0, &obs, err);
  if (!rc) rc = tail_point(b, p, &obs, launch_us, tail_us, err);
  if (!rc) *join_us = obs.join_us / obs.runs;
  return rc;
}

/* The merge subject's CTA with its partial states evicted: streamers (two per SM) read
 * twice L2 of KV after the states are written (av_profile_merge_cold_workload). */
static int cold_point(const av_gpu_t *g, const av_tile_t *part, int32_t slots,
                      const av_profile_merge_t *m, int runs, double *out, av_error_t *err) {
  const int rows = m->rows, d = m->head_dim;
  const av_dtype_t dt = m->dtype;
  const int32_t streamers = 2 * (g->sm_count > 0 ? g->sm_count : 1);
  const double l2 = g->l2_bytes > 0 ? g->l2_bytes : 64e6;
  const double token_bytes = 2.0 * d * av_dtype_bytes(dt);
  int64_t tokens = (int64_t)ceil(2 * l2 / token_bytes / streamers);
  tokens = (tokens + AV_PROF_MERGE_SEG - 1) / AV_PROF_MERGE_SEG * AV_PROF_MERGE_SEG;
  av_workload_t *w = av_profile_merge_cold_workload(slots, rows, d, dt, streamers, tokens, err);
  av_plan_t *p = w ? av_profile_merge_plan(w, part, err) : NULL;
  av_exec_batch_t *b = p ? av_exec_batch_create(w, 17, 1, err) : NULL;
  merge_obs_t obs;
  int rc = b ? merge_point(b, g, p, runs, 1, &obs, err)
             : (err && err->code ? err->code : AV_ERR_INTERNAL);
  if (!rc) *out = obs.cta_us / obs.ctas;
  av_exec_batch_destroy(b);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

/* The sums over every merge plan measured, for the means the profile keeps. */
typedef struct {
  double join_us, tail_us;
  int points;
} merge_sums_t;

/* The head dim and dtype a merge curve is measured for. */
typedef struct {
  int head_dim;
  av_dtype_t dtype;
} merge_kind_t;

static int merge_curve(const av_gpu_t *g, const av_variants_t *vs, const av_profile_opts_t *o,
                       merge_kind_t kind, const av_profile_t *out, av_profile_merge_t *m,
                       merge_sums_t *sums, av_error_t *err) {
  const int d = kind.head_dim;
  const av_dtype_t dt = kind.dtype;
  av_tile_t part, merge;
  if (av_variants_tiles(vs, AV_KERNEL_PARTIAL, d, dt, g->sm_arch, &part, 1) < 1 ||
      av_variants_tiles(vs, AV_KERNEL_MERGE, d, dt, g->sm_arch, &merge, 1) < 1)
    return AV_OK;  /* nothing compiled for (d, dt): no curve */
  const int32_t *slots = o->quick ? k_slots_quick : k_slots_full;
  const int n = o->quick ? 3 : (int)(sizeof k_slots_full / sizeof k_slots_full[0]);
  m->head_dim = d;
  m->dtype = dt;
  m->rows = merge.m_rows > 0 ? merge.m_rows : 1;
  int rc = AV_OK;
  for (int i = 0; i < n && !rc; i++) {
    av_workload_t *w = av_profile_merge_workload(slots[i], m->rows, d, dt, err);
    av_plan_t *p = w ? av_profile_merge_plan(w, &part, err) : NULL;
    av_exec_batch_t *b = p ? av_exec_batch_create(w, 11, 1, err) : NULL;
    merge_obs_t obs;
    double tail = 0;
    rc = b ? merge_point(b, g, p, o->runs, 0, &obs, err)
           : (err && err->code ? err->code : AV_ERR_INTERNAL);
    if (!rc) rc = tail_point(b, p, &obs, out->launch_us, &tail, err);
    if (!rc) {
      m->time_us[i] = obs.cta_us / obs.ctas;
      sums->join_us += obs.join_us / obs.runs;
      sums->tail_us += tail;
      sums->points++;
    }
    m->slots[i] = slots[i];
    if (!rc) rc = cold_point(g, &part, slots[i], m, o->runs, &m->time_cold_us[i], err);
    if (!rc && o->verbose)
      fprintf(stderr, "profile: merge d%d %s: %d slots/row x %d rows: %.2f us (states in L2), "
              "%.2f us (from HBM)\n", d, av_dtype_name(dt), (int)slots[i], m->rows,
              m->time_us[i], m->time_cold_us[i]);
    av_exec_batch_destroy(b);
    av_plan_destroy(p);
    av_workload_destroy(w);
  }
  if (!rc) m->n = n;
  return rc;
}

/* Empty persistent CTAs: one launch of waves x (SMs x occupancy) CTAs with one item, timed
 * (median of repeats); the slope over waves is one CTA slot's time per empty CTA. */
static int measure_empty(const av_gpu_t *g, const av_variants_t *vs, int verbose,
                         av_profile_t *out, av_error_t *err) {
  av_tile_t tile;
  if (av_variants_tiles(vs, AV_KERNEL_PERSISTENT, 128, AV_DTYPE_FP16, g->sm_arch, &tile, 1) < 1)
    return AV_OK;
  const av_variant_t *v = av_variants_find(vs, &tile, 128, AV_DTYPE_FP16, g->sm_arch);
  av_occupancy_t occ;
  av_occupancy(g, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
  const int32_t per_wave = g->sm_count * (occ.ctas_per_sm > 0 ? occ.ctas_per_sm : 1);
  const int64_t kv = AV_PROF_MERGE_SEG;
  av_workload_t *w = av_profile_workload(1, &kv, 1, 128, AV_DTYPE_FP16, err);
  av_exec_batch_t *b = w ? av_exec_batch_create(w, 13, 1, err) : NULL;
  int rc = b ? AV_OK : (err && err->code ? err->code : AV_ERR_INTERNAL);
  const int n = (int)(sizeof k_waves / sizeof k_waves[0]);
  double x[8], y[8];
  for (int i = 0; i < n && !rc; i++) {
    av_plan_t *p = av_profile_empty_plan(w, &tile, k_waves[i] * per_wave, err);
    av_exec_opts_t o;
    av_exec_opts_default(&o);
    o.verify = 0;
    av_exec_result_t r;
    rc = p ? av_exec_batch_run(b, p, &o, &r, err) : (err && err->code ? err->code : AV_ERR_INTERNAL);
    if (!rc) {
      x[i] = k_waves[i];
      y[i] = r.median_us;
      av_exec_result_free(&r);
    }
    av_plan_destroy(p);
  }
  double c0, slope, r2;
  if (!rc) rc = av_profile_fit_line(x, y, n, &c0, &slope, &r2, err);
  if (!rc) {
    out->empty_cta_us = slope > 0 ? slope : 0;
    out->empty_slope_us = slope / per_wave;
    if (verbose)
      fprintf(stderr, "profile: empty persistent CTAs: %.3f us per wave of %d (r2 %.3f)\n",
              slope, (int)per_wave, r2);
  }
  av_exec_batch_destroy(b);
  av_workload_destroy(w);
  return rc;
}

int av_profile_measure_merge(const av_gpu_t *g, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err) {
  int rc = AV_OK;
  merge_sums_t sums = {0, 0, 0};
  out->n_merge = 0;
  for (int a = 0; a < o->n_head_dims && !rc; a++)
    for (int b = 0; b < o->n_dtypes && !rc; b++) {
      const int cap = (int)(sizeof out->merge / sizeof out->merge[0]);
      if (out->n_merge == cap) break;
      av_profile_merge_t *m = &out->merge[out->n_merge];
      memset(m, 0, sizeof *m);
      const merge_kind_t kind = {o->head_dims[a], (av_dtype_t)o->dtypes[b]};
      rc = merge_curve(g, vs, o, kind, out, m, &sums, err);
      if (!rc && m->n > 0) out->n_merge++;
    }
  /* the join and the tail do not depend on the slots: means over every merge plan */
  if (!rc && sums.points > 0) {
    const int points = sums.points;
    out->join_us = sums.join_us / points;
    out->tail_us = fmax(sums.tail_us / points, 0);
    if (o->verbose)
      fprintf(stderr, "profile: merge join %.2f us, run tail %.2f us (%d plans)\n",
              out->join_us, out->tail_us, points);
  }
  if (!rc) rc = measure_empty(g, vs, o->verbose, out, err);
  return rc;
}
