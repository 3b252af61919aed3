/* The profiler's start step (profiler/profile.h, av_profile_measure_start): what
 * a CTA pays for starting together with many others. A launch's first wave starts at once and
 * every CTA issues its prologue's dependent loads (item record, block table, queries, first KV
 * tiles) together, so short CTAs in a full first wave run longer than alone by more than
 * their share of bandwidth explains (docs/simulator.md#a-launchs-first-wave). Per
 * d 128 fp16 variant, per k = 1 .. its occupancy, one launch of k x SMs one-item CTAs, each
 * over its own short root (so HBM, not L2, serves them, and their bytes are few), at one query
 * row and at the tile's m; L2 flushed, `runs` traced runs, mean CTA duration. The cost model
 * compares them with C(rows, n), the same CTA alone (costmodels/profile_start.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/executor.h"
#include "profiler/profile.h"

#define SRC "profile"


/* Mean CTA duration of `ctas` one-item CTAs of `rows` queries over their own roots of kv
 * tokens, over `runs` traced runs with L2 flushed before each. */
static int wave_point(const av_gpu_t *g, const av_profile_start_t *v, int32_t ctas,
                      int32_t rows, int64_t kv, int runs, double *mean_us, av_error_t *err) {
  int64_t *len = malloc(sizeof(int64_t) * (size_t)ctas);
  if (!len) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int32_t i = 0; i < ctas; i++) len[i] = kv;
  av_workload_t *w = av_profile_workload(rows, len, ctas, v->head_dim, v->dtype, err);
  free(len);
  av_exec_batch_t *b = w ? av_exec_batch_create(w, (uint64_t)(200 + ctas), 1, err) : NULL;
  av_plan_t *p = b ? av_profile_plan(w, &v->tile, 0, err) : NULL;
  int rc = p ? AV_OK : (err && err->code ? err->code : AV_ERR_INTERNAL);
  double sum = 0;
  for (int r = 0; r < runs && !rc; r++) {
    av_exec_opts_t o;
    av__profile_traced_opts(&o);
    av_exec_result_t res;
    double m = 0, span = 0;
    rc = av__profile_flush_l2(g, err);
    if (!rc) rc = av_exec_batch_run(b, p, &o, &res, err);
    if (rc) break;
    rc = av__profile_trace_stats(res.trace, p->n_items, &m, &span, err);
    av_exec_result_free(&res);
    sum += m;
  }
  if (!rc) *mean_us = sum / runs;
  av_plan_destroy(p);
  av_exec_batch_destroy(b);
  av_workload_destroy(w);
  return rc;
}

/* The variants measured: every d 128 fp16 table, with its occupancy (measured, else
 * predicted) as the largest wave per SM. */
static int start_variants(const av_gpu_t *g, av_profile_t *out, av_error_t *err) {
  out->start = calloc((size_t)(out->n > 0 ? out->n : 1), sizeof *out->start);
  if (!out->start) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  out->n_start = 0;
  for (int i = 0; i < out->n; i++) {
    const av_profile_table_t *t = &out->t[i];
    if (t->head_dim != 128 || t->dtype != AV_DTYPE_FP16) continue;
    av_profile_start_t *v = &out->start[out->n_start++];
    v->tile = t->tile;
    v->head_dim = t->head_dim;
    v->dtype = t->dtype;
    int occ = t->occ_measured > 0 ? t->occ_measured : t->occ_predicted;
    v->n_k = occ < 1 ? 1 : occ > AV_PROF_MAX_K ? AV_PROF_MAX_K : occ;
    for (int k = 0; k < v->n_k; k++) v->ctas[k] = (k + 1) * g->sm_count;
    v->n_rows = t->tile.m_rows > 1 ? 2 : 1;
    v->rows[0] = 1;
    v->rows[1] = t->tile.m_rows;
    for (int j = 0; j < AV_PROF_START_KV; j++) v->kv[j] = av_profile_start_kv[j];
  }
  return AV_OK;
}

int av_profile_measure_start(const av_gpu_t *g, const av_profile_opts_t *o, av_profile_t *out,
                             av_error_t *err) {
  int rc = start_variants(g, out, err);
  const int runs = o->runs > 3 ? 3 : o->runs > 0 ? o->runs : 1;
  for (int i = 0; i < out->n_start && !rc; i++) {
    av_profile_start_t *v = &out->start[i];
    for (int k = 0; k < v->n_k && !rc; k++)
      for (int r = 0; r < v->n_rows && !rc; r++)
        for (int j = 0; j < AV_PROF_START_KV && !rc; j++)
          rc = wave_point(g, v, v->ctas[k], v->rows[r], v->kv[j], runs, &v->dur_us[k][r][j],
                          err);
    if (!rc && o->verbose)
      fprintf(stderr, "profile: start %s m=%d n=%d: %d CTAs %.2f us, %d CTAs %.2f us "
              "(1 query, %lld tokens)\n", av_kernel_kind_name(v->tile.kind), v->tile.m_rows,
              v->tile.n_tokens, v->ctas[0], v->dur_us[0][0][0], v->ctas[v->n_k - 1],
              v->dur_us[v->n_k - 1][0][0], (long long)v->kv[0]);
  }
  return rc;
}
