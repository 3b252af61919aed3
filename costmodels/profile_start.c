/* The first-wave start cost (costmodels/profile_start.h) from the waves profile_format/ reads
 * (the profile file's "start" key, or the details file's "queue" key): derived from the raw
 * times, and at any number of CTAs starting together, linear between the measured wave
 * sizes. */
#include "costmodels/profile_start.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/profile_coresidency.h"

void av__start_free(av__start_t *s) {
  if (!s) return;
  free(s->v);
  free(s->delta_us);
  memset(s, 0, sizeof *s);
}

int av__start_setup(av__start_t *s, av_profile_starts_t *read, const char *source,
                    av_error_t *err) {
  s->n = read->n;
  s->v = read->v;
  s->from = read->from;
  memset(read, 0, sizeof *read);
  s->delta_us = calloc((size_t)s->n + 1, sizeof *s->delta_us);
  if (!s->delta_us) return av_error_set(err, AV_ERR_NOMEM, source, s->from, "out of memory");
  return AV_OK;
}

const av_profile_start_wave_t *av__start_find(const av__start_t *s, const av_tile_t *tile,
                                          int head_dim, av_dtype_t dtype) {
  const av_profile_start_wave_t *best = NULL;
  double best_d = 0;
  for (int i = 0; s && i < s->n; i++) {
    const av_profile_start_wave_t *v = &s->v[i];
    double d = av__profile_tile_distance(&v->tile, v->head_dim, v->dtype, tile, head_dim, dtype);
    if (!best || d < best_d) {
      best = v;
      best_d = d;
    }
  }
  return best;
}

/* Row r's start cost at `ctas` CTAs (linear through (0, 0), av__start_cost); delta holds the
 * wave's derived costs. */
static double cost_at(const av_profile_start_wave_t *v,
                      const double (*delta)[AV__START_MAX_ROWS], int r, double x) {
  double x0 = 0, y0 = 0;
  for (int i = 0; i < v->n; i++) {
    double x1 = v->ctas[i], y1 = delta[i][r];
    if (x <= x1 || i == v->n - 1) return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    x0 = x1;
    y0 = y1;
  }
  return 0;
}

double av__start_cost(const av__start_t *s, const av_tile_t *tile, int head_dim,
                      av_dtype_t dtype, int32_t ctas, int32_t rows) {
  const av_profile_start_wave_t *v = av__start_find(s, tile, head_dim, dtype);
  if (!v || ctas <= 0) return 0;
  int r = 0;
  while (r + 1 < v->n_rows && v->rows[r + 1] <= rows) r++;
  const double (*delta)[AV__START_MAX_ROWS] = s->delta_us[v - s->v];
  double y = cost_at(v, delta, r, (double)ctas);
  if (r + 1 < v->n_rows && rows > v->rows[r]) {
    double a = log((double)rows / v->rows[r]) / log((double)v->rows[r + 1] / v->rows[r]);
    y += a * (cost_at(v, delta, r + 1, (double)ctas) - y);
  }
  return y > 0 ? y : 0;
}

/* Bytes one profiled CTA moves for its item of `rows` one-query rows over kv tokens: K and
 * V, the query rows, and its outputs (partial: O and lse in fp32; decode: O in the dtype). */
static double item_bytes(const av_profile_start_wave_t *v, int32_t rows, int64_t kv) {
  const double d = v->head_dim, el = av_dtype_bytes(v->dtype);
  const double out = v->tile.kind == AV_KERNEL_DECODE ? d * el : d * 4 + 4;
  return (double)kv * 2 * d * el + rows * (d * el + out);
}

/* Whether KV length j of v enters the start cost: lengths up to AV__START_SHORT_TOKENS (all of
 * the start step's), else the shortest alone. A longer item's wave is bandwidth-bound (the
 * queue step's 512-token wave moves 5-10x the start cost's worth of bytes at B), so the
 * difference there measures the bandwidth model's error more than the start. */
static int short_enough(const av_profile_start_wave_t *v, int j) {
  return v->kv[j] <= AV__START_SHORT_TOKENS || j == 0;
}

/* One point's start cost: the wave's CTA time over the lone one's, less the longer streaming
 * the engine gives it, averaged over the short KV lengths. */
static double derive_point(const av_profile_start_wave_t *v, int p, int r,
                           const av__start_env_t *env) {
  const int32_t ctas = v->ctas[p];
  const int k = (int)((ctas + env->sm_count - 1) / env->sm_count);
  double sk = av__cores_slowdown(env->cores, &v->tile, v->head_dim, v->dtype, k);
  if (!(sk > 0)) sk = 1;
  double sum = 0;
  int used = 0;
  for (int j = 0; j < v->n_kv; j++) {
    if (!short_enough(v, j)) continue;
    double lone = 0, cap = 0, shared = 0;
    env->lone(env->ctx, v, v->rows[r], v->kv[j], &lone, &cap);
    if (isfinite(v->lone_us[r][j])) lone = v->lone_us[r][j];
    if (cap > 0) {
      double rate = fmin(cap / sk, env->hbm_bytes_per_us / ctas);
      shared = item_bytes(v, v->rows[r], v->kv[j]) * (1 / rate - 1 / cap);
    }
    sum += v->dur_us[p][r][j] - lone - (shared > 0 ? shared : 0);
    used++;
  }
  return used > 0 && sum > 0 ? sum / used : 0;
}

void av__start_derive(av__start_t *s, const av__start_env_t *env) {
  for (int i = 0; s && i < s->n; i++)
    for (int p = 0; p < s->v[i].n; p++)
      for (int r = 0; r < s->v[i].n_rows; r++)
        s->delta_us[i][p][r] = derive_point(&s->v[i], p, r, env);
}

int av__start_discount(const av__start_t *s, av__cores_t *cores, int sm_count) {
  if (!s || s->n == 0) return AV_OK;
  for (int i = 0; i < cores->n; i++) {
    av_profile_curve_t *c = &cores->c[i];
    const int last = c->n - 1;
    if (!c->has_dur || c->n < 2 || c->s[last] < 1.001) continue;
    const double T = (c->dur[last] - c->dur[0]) / (c->s[last] - 1);
    double d[AV_PROFILE_CORES_MAX_K], s_new[AV_PROFILE_CORES_MAX_K];
    for (int k = 0; k < c->n; k++)
      d[k] = av__start_cost(s, &c->tile, c->head_dim, c->dtype, (int32_t)c->k[k] * sm_count, 1);
    if (!(T > d[0])) continue;
    for (int k = 0; k < c->n; k++) {
      double x = (c->s[k] * T - d[k]) / (T - d[0]);
      s_new[k] = k == 0 ? 1.0 : x < 0.5 ? 0.5 : x;
    }
    if (av__cores_set(cores, i, s_new)) return AV_ERR_INTERNAL;
  }
  return AV_OK;
}
