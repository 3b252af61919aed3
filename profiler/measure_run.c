/* The profiler's measuring loop (profiler/profile.h, av_profile_measure): everything runs
 * through the GPU executor's public API (executor/executor.h), so the profile times the
 * same kernels, launch path and paged KV cache that `anvil exec` and `anvil validate` time.
 * Single-CTA times come from the executor's per-CTA trace (%globaltimer), not from CUDA
 * events around a launch, so launch latency is not folded into C(n_q, n). The L2 is flushed
 * before every traced run by a device copy of twice its size: FlashForge's table is about KV
 * read from HBM. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/occupancy.h"
#include "executor/executor.h"
#include "profiler/profile.h"

#define SRC "profile"

void av_profile_opts_default(av_profile_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->head_dims[0] = 128;
  o->head_dims[1] = 64;
  o->n_head_dims = 2;
  o->dtypes[0] = AV_DTYPE_FP16;
  o->dtypes[1] = AV_DTYPE_BF16;
  o->n_dtypes = 2;
  o->runs = 5;
  o->coresidency = 1;
}

static const int64_t k_kv_full[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
static const int64_t k_kv_quick[] = {64, 1024, 16384};
static const int32_t k_nq[] = {1, 2, 4, 8, 16, 32, 64, 128};

/* The mean, not the median, of the runs: %globaltimer ticks coarsely (the device notes warn of
 * it), and averaging runs whose start falls at random within a tick recovers
 * sub-tick durations where a median would keep the quantisation. */
static double mean(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  return s / n;
}

/* One traced run of p on b; dur[item] = the item's CTA duration (KV head 0). */
static int traced_run(av_exec_batch_t *b, const av_gpu_t *g, const av_plan_t *p, double *dur,
                      av_exec_result_t *keep, av_error_t *err) {
  av_exec_opts_t o;
  av__profile_traced_opts(&o);
  av_exec_result_t r;
  int rc = av__profile_flush_l2(g, err);
  if (!rc) rc = av_exec_batch_run(b, p, &o, &r, err);
  if (rc) return rc;
  const json_t *ctas = json_object_get(r.trace, "ctas");
  for (size_t i = 0; i < json_array_size(ctas); i++) {
    const json_t *c = json_array_get(ctas, i);
    json_int_t item = json_integer_value(json_object_get(c, "item"));
    if (json_integer_value(json_object_get(c, "head")) != 0 || item < 0 || item >= p->n_items)
      continue;
    dur[item] = json_number_value(json_object_get(c, "end_us")) -
                json_number_value(json_object_get(c, "start_us"));
  }
  if (keep)
    *keep = r;
  else
    av_exec_result_free(&r);
  return AV_OK;
}

/* Launch overhead: a plan of k one-CTA launches on one stream (k = 1..32), timed with CUDA
 * events; the slope of time over k is what each further launch costs. */
static int measure_launch(const av_gpu_t *g, const av_variants_t *vs, av_profile_t *out,
                          av_error_t *err) {
  av_tile_t tile;
  if (av_variants_tiles(vs, AV_KERNEL_DECODE, 128, AV_DTYPE_FP16, g->sm_arch, &tile, 1) < 1)
    return av_error_set(err, AV_ERR_UNSUPPORTED, SRC, NULL,
                        "no decode variant (d 128, fp16) for sm_%d in kernels/variants.json",
                        g->sm_arch);
  double x[6], y[6];
  int64_t kv[32];
  for (int i = 0; i < 32; i++) kv[i] = 16;
  int rc = AV_OK, n = 0;
  for (int k = 1; k <= 32 && !rc; k *= 2, n++) {
    av_workload_t *w = av_profile_workload(1, kv, k, 128, AV_DTYPE_FP16, err);
    av_plan_t *p = w ? av_profile_plan(w, &tile, 1, err) : NULL;
    av_exec_batch_t *b = p ? av_exec_batch_create(w, 7, 1, err) : NULL;
    av_exec_opts_t o;
    av_exec_opts_default(&o);
    o.verify = 0;
    av_exec_result_t r;
    rc = b ? av_exec_batch_run(b, p, &o, &r, err) : (err && err->code ? err->code : AV_ERR_INTERNAL);
    if (!rc) {
      x[n] = k;
      y[n] = r.median_us;
      av_exec_result_free(&r);
    }
    /* the longest plan once more, traced: the GPU's gap between two kernels of one stream */
    if (!rc && k == 32) {
      av__profile_traced_opts(&o);
      rc = av__profile_flush_l2(g, err);
      if (!rc) rc = av_exec_batch_run(b, p, &o, &r, err);
      if (!rc) rc = av_profile_stream_gap(r.trace, p, &out->launch_gap_us, err);
      if (!rc) av_exec_result_free(&r);
    }
    av_exec_batch_destroy(b);
    av_plan_destroy(p);
    av_workload_destroy(w);
  }
  double c0;
  return rc ? rc : av_profile_fit_line(x, y, n, &c0, &out->launch_us, &out->launch_r2, err);
}

/* Whether profile document `have` holds a table of this tile, head dim and dtype. */
static int have_table(const json_t *have, const av_tile_t *t, int d, av_dtype_t dt) {
  const json_t *vs = json_object_get(have, "variants");
  for (size_t i = 0; i < json_array_size(vs); i++) {
    const json_t *v = json_array_get(vs, i);
    const char *kind = json_string_value(json_object_get(v, "kind"));
    const char *dtype = json_string_value(json_object_get(v, "dtype"));
    if (kind && dtype && !strcmp(kind, av_kernel_kind_name(t->kind)) &&
        !strcmp(dtype, av_dtype_name(dt)) &&
        json_integer_value(json_object_get(v, "m")) == t->m_rows &&
        json_integer_value(json_object_get(v, "n")) == t->n_tokens &&
        json_integer_value(json_object_get(v, "warps")) == t->warps &&
        json_integer_value(json_object_get(v, "head_dim")) == d)
      return 1;
  }
  return 0;
}

/* The KV lengths of a table's grid. */
typedef struct {
  const int64_t *kv;
  int n;
} kv_grid_t;

/* Tables (empty grids) for every compiled variant of (d, dtype) on g's architecture that
 * `have` lacks (NULL: every one), with the predicted occupancy. */
static int add_tables(const av_gpu_t *g, const av_variants_t *vs, int d, av_dtype_t dt,
                      kv_grid_t grid, const json_t *have, av_profile_t *out, av_error_t *err) {
  const int64_t *kv = grid.kv;
  const int n_kv = grid.n;
  static const av_kernel_kind_t kinds[] = {AV_KERNEL_PARTIAL, AV_KERNEL_PERSISTENT,
                                           AV_KERNEL_DECODE};
  for (int k = 0; k < 3; k++) {
    av_tile_t tiles[64];
    int nt = av_variants_tiles(vs, kinds[k], d, dt, g->sm_arch, tiles, 64);
    for (int i = 0; i < nt; i++) {
      if (have && have_table(have, &tiles[i], d, dt)) continue;
      av_profile_table_t *t = av_profile_add(out);
      if (!t) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
      t->tile = tiles[i];
      t->head_dim = d;
      t->dtype = dt;
      for (int q = 0; q < (int)(sizeof k_nq / sizeof k_nq[0]); q++)
        if (k_nq[q] <= tiles[i].m_rows) t->nq[t->n_nq++] = k_nq[q];
      t->n_kv = n_kv;
      memcpy(t->kv, kv, sizeof(int64_t) * (size_t)n_kv);
      const av_variant_t *v = av_variants_find(vs, &tiles[i], d, dt, g->sm_arch);
      av_occupancy_t occ;
      av_occupancy(g, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
      t->occ_predicted = occ.ctas_per_sm;
    }
  }
  return AV_OK;
}

/* C(n_q, n) of every table of (d, dt) from `first` on: per n_q one batch (a root per n),
 * per variant one serial plan, `runs` traced runs, mean per grid point. */
static int measure_grid(const av_gpu_t *g, const av_profile_opts_t *o, av_profile_t *out,
                        int first, av_error_t *err) {
  const av_profile_table_t *t0 = &out->t[first];
  int rc = AV_OK;
  int runs = o->runs > 0 ? o->runs : 1;
  double *dur = malloc(sizeof(double) * AV_PROF_MAX_KV * (size_t)runs), one[AV_PROF_MAX_KV];
  if (!dur) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int q = 0; q < (int)(sizeof k_nq / sizeof k_nq[0]) && !rc; q++) {
    int wanted = 0; /* n_q = 128 only for the wide tiles */
    for (int i = first; i < out->n; i++) wanted |= out->t[i].tile.m_rows >= k_nq[q];
    if (!wanted) continue;
    av_workload_t *w = av_profile_workload(k_nq[q], t0->kv, t0->n_kv, t0->head_dim, t0->dtype,
                                           err);
    av_exec_batch_t *b = w ? av_exec_batch_create(w, 11, 1, err) : NULL;
    if (!b) rc = err && err->code ? err->code : AV_ERR_INTERNAL;
    for (int i = first; i < out->n && !rc; i++) {
      av_profile_table_t *t = &out->t[i];
      int row = -1;
      for (int r = 0; r < t->n_nq; r++)
        if (t->nq[r] == k_nq[q]) row = r;
      if (row < 0) continue;
      av_plan_t *p = av_profile_plan(w, &t->tile, 1, err);
      if (!p) rc = err && err->code ? err->code : AV_ERR_INTERNAL;
      for (int r = 0; r < runs && !rc; r++) {
        for (int j = 0; j < t->n_kv; j++) one[j] = NAN;
        rc = traced_run(b, g, p, one, NULL, err);
        for (int j = 0; j < t->n_kv && !rc; j++) dur[j * runs + r] = one[j];
      }
      for (int j = 0; j < t->n_kv && !rc; j++) t->time_us[row][j] = mean(&dur[j * runs], runs);
      av_plan_destroy(p);
      if (!rc && o->verbose)
        fprintf(stderr, "profile: %s m=%d n=%d d=%d %s rows=%d: C(n=%lld) = %.2f us\n",
                av_kernel_kind_name(t->tile.kind), t->tile.m_rows, t->tile.n_tokens,
                t->head_dim, av_dtype_name(t->dtype), k_nq[q], (long long)t->kv[t->n_kv - 1],
                t->time_us[row][t->n_kv - 1]);
    }
    av_exec_batch_destroy(b);
    av_workload_destroy(w);
  }
  free(dur);
  return rc;
}

/* Resident CTAs per SM, observed: one launch of sm_count x (predicted + 2) CTAs long
 * enough to overlap, and the most that ran at once on one SM. */
static int measure_occupancy(const av_gpu_t *g, av_profile_t *out, int first,
                             av_error_t *err) {
  int most = 1;
  for (int i = first; i < out->n; i++)
    if (out->t[i].occ_predicted > most) most = out->t[i].occ_predicted;
  int32_t roots = g->sm_count * (most + 2);
  int64_t *kv = malloc(sizeof(int64_t) * (size_t)roots);
  if (!kv) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int32_t r = 0; r < roots; r++) kv[r] = 2048;
  av_workload_t *w = av_profile_workload(1, kv, roots, out->t[first].head_dim,
                                         out->t[first].dtype, err);
  free(kv);
  av_exec_batch_t *b = w ? av_exec_batch_create(w, 13, 1, err) : NULL;
  int rc = b ? AV_OK : (err && err->code ? err->code : AV_ERR_INTERNAL);
  double *dur = malloc(sizeof(double) * (size_t)roots), refill = 0;
  int32_t refills = 0;
  if (!rc && !dur) rc = av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int i = first; i < out->n && !rc; i++) {
    av_plan_t *p = av_profile_plan(w, &out->t[i].tile, 0, err);
    av_exec_result_t r;
    rc = p ? traced_run(b, g, p, dur, &r, err) : (err && err->code ? err->code : AV_ERR_INTERNAL);
    if (!rc) {
      rc = av_profile_max_resident(r.trace, &out->t[i].occ_measured, err);
      double gap = 0;
      int32_t n = 0;
      if (!rc) rc = av_profile_refill_gap(r.trace, &gap, &n, err);
      refill += gap * n;
      refills += n;
      av_exec_result_free(&r);
    }
    av_plan_destroy(p);
  }
  /* the 2 CTAs per SM beyond the occupancy refill slots: the grid CTA's dispatch gap */
  if (!rc && refills > 0) out->refill_us = refill / refills;
  free(dur);
  av_exec_batch_destroy(b);
  av_workload_destroy(w);
  return rc;
}

/* The d 128 fp16 partial table with the smallest (largest: want_max) m, n = 64 preferred
 * (the tile most plans use), wide tiles (AV_TILE_WIDE_ROWS) left out; the first table when
 * there is none. */
static const av_profile_table_t *pick_table(const av_profile_t *out, int want_max) {
  const av_profile_table_t *best = NULL;
  for (int i = 0; i < out->n; i++) {
    const av_profile_table_t *t = &out->t[i];
    if (t->tile.kind != AV_KERNEL_PARTIAL || t->head_dim != 128 || t->dtype != AV_DTYPE_FP16 ||
        t->tile.m_rows >= AV_TILE_WIDE_ROWS)
      continue;
    int better = !best || (want_max ? t->tile.m_rows > best->tile.m_rows
                                    : t->tile.m_rows < best->tile.m_rows) ||
                 (t->tile.m_rows == best->tile.m_rows && t->tile.n_tokens == 64);
    if (better) best = t;
  }
  return best ? best : &out->t[0];
}

/* The lone CTA's streaming rate and fixed cost: a line through C(1, n) of the smallest-m
 * d 128 fp16 partial tile, over n >= 256, in KV bytes. */
static int fit_lone_cta(av_profile_t *out, av_error_t *err) {
  const av_profile_table_t *t = pick_table(out, 0);
  double x[AV_PROF_MAX_KV], y[AV_PROF_MAX_KV], c0, c1;
  int n = 0;
  double token_bytes = 2.0 * t->head_dim * av_dtype_bytes(t->dtype);
  for (int j = 0; j < t->n_kv; j++)
    if (t->kv[j] >= 256 || t->n_kv <= 3) {
      x[n] = (double)t->kv[j] * token_bytes;
      y[n++] = t->time_us[0][j];
    }
  int rc = av_profile_fit_line(x, y, n, &c0, &c1, &out->lone_r2, err);
  if (rc) return rc;
  if (!(c1 > 0))
    return av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                        "a lone CTA's time does not grow with its KV (slope %g us/byte): the "
                        "trace timer is too coarse or the runs too noisy", c1);
  out->lone_GBps = 1e-3 / c1; /* bytes per us -> GB/s */
  out->cta_fixed_us = c0;
  return AV_OK;
}

/* The mma rate one CTA reaches: the largest-m d-128 fp16 partial table at its largest n_q
 * and n. Counted only when that CTA is clearly compute-bound (its time exceeds 1.5x what the
 * lone-CTA streaming rate gives for its bytes); the engine then shares this per-SM rate. */
static void fit_tensor_rate(const av_gpu_t *g, av_profile_t *out) {
  const av_profile_table_t *best = pick_table(out, 1);
  if (best->tile.kind != AV_KERNEL_PARTIAL || out->lone_GBps <= 0) return;
  double kv = (double)best->kv[best->n_kv - 1], d = best->head_dim, m = best->tile.m_rows;
  double us = best->time_us[best->n_nq - 1][best->n_kv - 1] - fmax(out->cta_fixed_us, 0);
  double mem_us = kv * 2 * d * 2 / (out->lone_GBps * 1e3);
  if (!(us > 1.5 * mem_us)) return;
  out->tensor_tflops = 4.0 * m * kv * d / us * g->sm_count / 1e6;
}


/* One variant at one k on batch b: `runs` traced runs (L2 flushed before each), the mean
 * CTA duration over all CTAs and runs; for the shared batch the most CTAs seen on one SM,
 * for the own-KV batch the aggregate KV rate. */
static int cores_point(av_exec_batch_t *b, const av_workload_t *w, const av_gpu_t *g,
                       int runs, int shared, av_profile_cores_t *c, int k, av_error_t *err) {
  av_plan_t *p = av_profile_cores_plan(w, &c->tile, err);
  if (!p) return err && err->code ? err->code : AV_ERR_INTERNAL;
  av_exec_opts_t o;
  av__profile_traced_opts(&o);
  double dur = 0, span = 0;
  int rc = AV_OK;
  for (int r = 0; r < runs && !rc; r++) {
    av_exec_result_t res;
    double m = 0, sp = 0;
    rc = av__profile_flush_l2(g, err);
    if (!rc) rc = av_exec_batch_run(b, p, &o, &res, err);
    if (rc) break;
    rc = av__profile_trace_stats(res.trace, p->n_items, &m, &sp, err);
    if (!rc && shared && r == 0) rc = av_profile_max_resident(res.trace, &c->resident[k - 1], err);
    av_exec_result_free(&res);
    if (rc) break;
    dur += m / runs;
    span += sp / runs;
  }
  if (!rc && shared) c->dur_us[k - 1] = dur;
  if (!rc && !shared) {
    c->hbm_dur_us[k - 1] = dur;
    double bytes = (double)w->n_requests * AV_PROF_CORES_KV * 2.0 * c->head_dim *
                   av_dtype_bytes(c->dtype);
    c->hbm_GBps[k - 1] = span > 0 ? bytes / span * 1e-3 : 0;
  }
  av_plan_destroy(p);
  return rc;
}

/* Co-residency curves (profile.h, av_profile_cores_t) of every d-128 fp16 variant (else the
 * first measured head dim and dtype): per k = 1 .. the variant's occupancy one launch of
 * k x SMs identical CTAs, so the block scheduler puts exactly k on each SM. The batches are
 * built once per k and shared by the variants. Needs the lone CTA's fixed cost (fit first). */
static int measure_coresidency(const av_gpu_t *g, const av_profile_opts_t *o,
                               av_profile_t *out, av_error_t *err) {
  int d = out->t[0].head_dim;
  av_dtype_t dt = out->t[0].dtype;
  for (int i = 0; i < out->n; i++)
    if (out->t[i].head_dim == 128 && out->t[i].dtype == AV_DTYPE_FP16) d = 128, dt = AV_DTYPE_FP16;
  out->cores = calloc((size_t)out->n, sizeof *out->cores);
  if (!out->cores) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  int kmax = 1;
  for (int i = 0; i < out->n; i++) {
    const av_profile_table_t *t = &out->t[i];
    if (t->head_dim != d || t->dtype != dt) continue;
    av_profile_cores_t *c = &out->cores[out->n_cores++];
    c->tile = t->tile;
    c->head_dim = d;
    c->dtype = dt;
    int occ = t->occ_measured > 0 ? t->occ_measured : t->occ_predicted;
    c->n_k = occ < 1 ? 1 : occ > AV_PROF_MAX_K ? AV_PROF_MAX_K : occ;
    if (c->n_k > kmax) kmax = c->n_k;
  }
  int runs = o->runs > 3 ? 3 : o->runs > 0 ? o->runs : 1, rc = AV_OK;
  for (int k = 1; k <= kmax && !rc; k++)
    for (int shared = 1; shared >= 0 && !rc; shared--) {
      av_workload_t *w = av_profile_cores_workload(k * g->sm_count, AV_PROF_CORES_KV, shared,
                                                   d, dt, err);
      av_exec_batch_t *b = w ? av_exec_batch_create(w, (uint64_t)(100 + k), 1, err) : NULL;
      if (!b) rc = err && err->code ? err->code : AV_ERR_INTERNAL;
      for (int i = 0; i < out->n_cores && !rc; i++) {
        av_profile_cores_t *c = &out->cores[i];
        if (c->n_k < k) continue;
        rc = cores_point(b, w, g, runs, shared, c, k, err);
        if (!rc && o->verbose && !shared)
          fprintf(stderr, "profile: co-residency %s m=%d n=%d k=%d: %.2f us shared KV "
                  "(%d resident), %.2f us own KV (%.0f GB/s)\n",
                  av_kernel_kind_name(c->tile.kind), c->tile.m_rows, c->tile.n_tokens, k,
                  c->dur_us[k - 1], c->resident[k - 1], c->hbm_dur_us[k - 1],
                  c->hbm_GBps[k - 1]);
      }
      av_exec_batch_destroy(b);
      av_workload_destroy(w);
    }
  for (int i = 0; i < out->n_cores && !rc; i++)
    rc = av_profile_cores_slowdown(out->cores[i].dur_us, out->cores[i].n_k, out->cta_fixed_us,
                                   out->cores[i].slowdown, err);
  return rc;
}

/* Per head dim and dtype: the tables of the compiled variants `have` lacks (NULL: all), their
 * C(n_q, n) grids and their occupancy. */
static int measure_tables(const av_gpu_t *gpu, const av_variants_t *vs,
                          const av_profile_opts_t *o, const json_t *have, av_profile_t *out,
                          av_error_t *err) {
  const int64_t *kv = o->quick ? k_kv_quick : k_kv_full;
  int n_kv = o->quick ? 3 : (int)(sizeof k_kv_full / sizeof k_kv_full[0]), rc = AV_OK;
  for (int a = 0; a < o->n_head_dims && !rc; a++)
    for (int b = 0; b < o->n_dtypes && !rc; b++) {
      int first = out->n;
      const kv_grid_t grid = {kv, n_kv};
      rc = add_tables(gpu, vs, o->head_dims[a], (av_dtype_t)o->dtypes[b], grid, have, out, err);
      if (!rc && out->n == first) continue;
      if (!rc) rc = measure_grid(gpu, o, out, first, err);
      if (!rc) rc = measure_occupancy(gpu, out, first, err);
    }
  return rc;
}

int av_profile_measure(const av_gpu_t *gpu, const av_variants_t *vs,
                       const av_profile_opts_t *o, av_profile_t *out, av_error_t *err) {
  int rc = av_exec_available(err);
  if (rc) return rc;
  snprintf(out->gpu, sizeof out->gpu, "%s", gpu->name);
  rc = av_exec_copy_bandwidth((size_t)1 << 30, 20, &out->copy_GBps, err);
  if (!rc) rc = av_exec_read_bandwidth((size_t)1 << 30, 20, &out->read_GBps, err);
  if (!rc) rc = measure_launch(gpu, vs, out, err);
  if (!rc) rc = measure_tables(gpu, vs, o, NULL, out, err);
  if (!rc && out->n == 0)
    rc = av_error_set(err, AV_ERR_UNSUPPORTED, SRC, NULL,
                      "no compiled variant for sm_%d in kernels/variants.json", gpu->sm_arch);
  if (!rc) rc = fit_lone_cta(out, err);
  if (!rc) fit_tensor_rate(gpu, out);
  if (!rc && o->coresidency) rc = measure_coresidency(gpu, o, out, err);
  if (!rc) rc = av_profile_measure_merge(gpu, vs, o, out, err);
  if (!rc) rc = av_profile_measure_queue(gpu, vs, o, out, err);
  if (!rc) rc = av_profile_measure_start(gpu, o, out, err);
  if (!rc) rc = av_profile_measure_graph(gpu, vs, o, out, err);
  if (!rc) rc = av_profile_measure_pdl(gpu, vs, o, out, err);
  return rc;
}

int av_profile_measure_tiles(const av_gpu_t *gpu, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err) {
  int rc = av_exec_available(err);
  if (rc) return rc;
  snprintf(out->gpu, sizeof out->gpu, "%s", gpu->name);
  rc = measure_tables(gpu, vs, o, o->have, out, err);
  if (!rc && out->n == 0)
    return av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                        "the profile already has every variant compiled for sm_%d",
                        gpu->sm_arch);
  if (!rc && o->coresidency) rc = measure_coresidency(gpu, o, out, err);
  if (!rc) rc = av_profile_measure_start(gpu, o, out, err);
  return rc;
}
