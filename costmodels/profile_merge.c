/* The "merge" key of the profile file (costmodels/profile_merge.h): its interpolation and
 * the merge CTA's time over slots per row, linear between the measured points
 * (GSL gsl_interp_linear). */
#include "costmodels/profile_merge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void av__merge_free(av__merge_t *m) {
  if (!m) return;
  for (int i = 0; m->interp && i < 2 * m->n; i++) gsl_interp_free(m->interp[i]);
  free(m->interp);
  free(m->c);
  memset(m, 0, sizeof *m);
}

int av__merge_setup(av__merge_t *m, av_profile_merges_t *read, const char *source,
                    av_error_t *err) {
  m->rows_per_cta = read->rows_per_cta;
  m->empty_cta_us = read->empty_cta_us;
  m->n = read->n;
  m->c = read->c;
  memset(read, 0, sizeof *read);
  m->interp = calloc(2 * (size_t)m->n + 1, sizeof *m->interp);
  if (!m->interp) return av_error_set(err, AV_ERR_NOMEM, source, "merge", "out of memory");
  for (int i = 0; i < m->n; i++) {
    av_profile_merge_curve_t *t = &m->c[i];
    const size_t n = (size_t)t->n;
    if (n < 2) continue;
    m->interp[2 * i] = gsl_interp_alloc(gsl_interp_linear, n);
    m->interp[2 * i + 1] = gsl_interp_alloc(gsl_interp_linear, n);
    if (!m->interp[2 * i] || !m->interp[2 * i + 1] ||
        gsl_interp_init(m->interp[2 * i], t->slots, t->t, n) ||
        gsl_interp_init(m->interp[2 * i + 1], t->slots, t->cold, n)) {
      char where[64];
      av_jpath_index(where, sizeof where, "merge.curves", (size_t)i);
      return av_error_set(err, AV_ERR_INTERNAL, source, where,
                          "GSL could not set up the interpolation");
    }
  }
  return AV_OK;
}

/* One curve (times y over t->slots) at `slots`: linear inside, the last slope beyond. */
static double curve_at(const av_profile_merge_curve_t *t, const double *y, const gsl_interp *ip,
                       double slots) {
  if (t->n == 1) return y[0];
  const int last = t->n - 1;
  if (slots <= t->slots[0]) return y[0];
  if (slots <= t->slots[last]) return gsl_interp_eval(ip, t->slots, y, slots, NULL);
  double slope = (y[last] - y[last - 1]) / (t->slots[last] - t->slots[last - 1]);
  return y[last] + fmax(slope, 0.0) * (slots - t->slots[last]);
}

double av__merge_time(const av__merge_t *m, int head_dim, av_dtype_t dtype, double slots,
                      double cold_frac) {
  const av_profile_merge_curve_t *t = NULL;
  for (int i = 0; m && i < m->n; i++)
    if (m->c[i].head_dim == head_dim && (!t || m->c[i].dtype == dtype)) t = &m->c[i];
  if (!t || t->n == 0) return 0;
  const double f = cold_frac < 0 ? 0 : cold_frac > 1 ? 1 : cold_frac;
  gsl_interp *const *ip = &m->interp[2 * (t - m->c)];
  const double warm = curve_at(t, t->t, ip[0], slots);
  return f > 0 ? (1 - f) * warm + f * curve_at(t, t->cold, ip[1], slots) : warm;
}
