/* Co-residency curves of the profile file (costmodels/profile_coresidency.h): their
 * interpolation, and the slowdown at k co-resident CTAs, linear in k between the measured
 * points (GSL gsl_interp_linear). Why a curve at all: CTAs sharing an SM share its issue
 * slots, load/store units and shared-memory bandwidth, so each streams slower than alone even
 * when HBM has room (docs/simulator.md#co-residency). */
#include "costmodels/profile_coresidency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void av__cores_free(av__cores_t *s) {
  if (!s) return;
  for (int i = 0; s->interp && i < s->n; i++) gsl_interp_free(s->interp[i]);
  free(s->interp);
  free(s->c);
  memset(s, 0, sizeof *s);
}

int av__cores_setup(av__cores_t *s, av_profile_curves_t *read, const char *source,
                    av_error_t *err) {
  s->n = read->n;
  s->c = read->c;
  memset(read, 0, sizeof *read);
  s->interp = calloc((size_t)s->n + 1, sizeof *s->interp);
  if (!s->interp) return av_error_set(err, AV_ERR_NOMEM, source, "coresidency", "out of memory");
  for (int i = 0; i < s->n; i++)
    if (av__cores_set(s, i, s->c[i].s)) {
      char where[64];
      av_jpath_index(where, sizeof where, "coresidency.variants", (size_t)i);
      return av_error_set(err, AV_ERR_INTERNAL, source, where,
                          "GSL could not set up the interpolation");
    }
  return AV_OK;
}

int av__cores_set(av__cores_t *s, int i, const double *sl) {
  av_profile_curve_t *t = &s->c[i];
  if (sl != t->s) memcpy(t->s, sl, sizeof(double) * (size_t)t->n);
  if (t->n < 2) return AV_OK;
  if (!s->interp[i]) s->interp[i] = gsl_interp_alloc(gsl_interp_linear, (size_t)t->n);
  if (!s->interp[i] || gsl_interp_init(s->interp[i], t->k, t->s, (size_t)t->n))
    return AV_ERR_INTERNAL;
  return AV_OK;
}

double av__profile_tile_distance(const av_tile_t *a, int a_hd, av_dtype_t a_dt,
                                 const av_tile_t *b, int b_hd, av_dtype_t b_dt) {
  return fabs(log((double)a->m_rows / fmax(b->m_rows, 1))) +
         fabs(log((double)a->n_tokens / fmax(b->n_tokens, 1))) +
         (a->warps != b->warps ? 10.0 : 0.0) + (a->kind != b->kind ? 100.0 : 0.0) +
         (a_hd != b_hd || a_dt != b_dt ? 1000.0 : 0.0);
}

/* Exact key, else the nearest: a different kind, head dim or dtype weighs more than any
 * difference in (m, n) (log distance), as the profile model's nearest_table does. */
static const av_profile_curve_t *find_curve(const av__cores_t *s, const av_tile_t *tile,
                                           int head_dim, av_dtype_t dtype) {
  const av_profile_curve_t *best = NULL;
  double best_d = 0;
  for (int i = 0; i < s->n; i++) {
    const av_profile_curve_t *t = &s->c[i];
    double d = av__profile_tile_distance(&t->tile, t->head_dim, t->dtype, tile, head_dim, dtype);
    if (!best || d < best_d) {
      best = t;
      best_d = d;
    }
  }
  return best;
}

double av__cores_slowdown(const av__cores_t *s, const av_tile_t *tile, int head_dim,
                          av_dtype_t dtype, int k) {
  if (!s || s->n == 0 || k < 1) return 0;
  const av_profile_curve_t *t = find_curve(s, tile, head_dim, dtype);
  if (t->n == 1 || k <= 1) return k <= 1 ? 1.0 : t->s[0];
  double x = (double)k;
  int last = t->n - 1;
  if (x <= t->k[last]) return gsl_interp_eval(s->interp[t - s->c], t->k, t->s, x, NULL);
  /* beyond the variant's occupancy (CTAs of other launches on the SM): the last slope on */
  double slope = (t->s[last] - t->s[last - 1]) / (t->k[last] - t->k[last - 1]);
  return t->s[last] + fmax(slope, 0.0) * (x - t->k[last]);
}
