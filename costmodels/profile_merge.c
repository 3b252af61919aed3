/* The "merge" key of the profile file (costmodels/profile_merge.h): parsing with key-path
 * errors and the merge CTA's time over slots per row, linear between the measured points
 * (GSL gsl_interp_linear). */
#include "costmodels/profile_merge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/profile_coresidency.h"

static const char *const merge_keys[] = {"rows_per_cta", "empty_cta_us", "notes", "curves",
                                         NULL};
static const char *const curve_keys[] = {"head_dim", "dtype", "slots", "time_us",
                                         "time_cold_us", NULL};

void av__merge_free(av__merge_t *m) {
  if (!m) return;
  for (int i = 0; i < m->n; i++) {
    gsl_interp_free(m->c[i].interp);
    gsl_interp_free(m->c[i].interp_cold);
  }
  free(m->c);
  memset(m, 0, sizeof *m);
}

static int read_dtype(const av_jctx_t *c, const json_t *obj, const char *path, av_dtype_t *out) {
  const char *name;
  char where[256];
  int rc = av_json_get_string(c, obj, path, "dtype", 1, NULL, &name);
  if (rc) return rc;
  if (strcmp(name, av_dtype_name(AV_DTYPE_FP16)) == 0) *out = AV_DTYPE_FP16;
  else if (strcmp(name, av_dtype_name(AV_DTYPE_BF16)) == 0) *out = AV_DTYPE_BF16;
  else {
    av_jpath_key(where, sizeof where, path, "dtype");
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown dtype '%s'; expected one of: %s, %s", name,
                        av_dtype_name(AV_DTYPE_FP16), av_dtype_name(AV_DTYPE_BF16));
  }
  return AV_OK;
}

static int read_curve(const av_jctx_t *c, const json_t *obj, const char *path,
                      av__merge_curve_t *t) {
  int rc;
  int64_t hd, *slots = NULL;
  size_t n = 0;
  char where[256], item[300];
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, curve_keys)) ||
      (rc = av_json_get_int(c, obj, path, "head_dim", 1, 0, 1, 1024, &hd)) ||
      (rc = read_dtype(c, obj, path, &t->dtype)))
    return rc;
  t->head_dim = (int)hd;
  if ((rc = av_json_get_int_array(c, obj, path, "slots", 1, 0, 1, 1 << 24, &slots, &n)))
    return rc;
  av_jpath_key(where, sizeof where, path, "slots");
  if (n > AV__MERGE_MAX_PTS)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, where, "at most %d points, got %zu",
                      AV__MERGE_MAX_PTS, n);
  for (size_t i = 1; !rc && i < n; i++)
    if (slots[i] <= slots[i - 1]) {
      av_jpath_index(item, sizeof item, where, i);
      rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                        "slots must be strictly increasing: %lld follows %lld",
                        (long long)slots[i], (long long)slots[i - 1]);
    }
  for (size_t i = 0; !rc && i < n; i++) t->slots[i] = (double)slots[i];
  free(slots);
  if (rc) return rc;
  t->n = (int)n;
  if ((rc = av__profile_read_numbers(c, obj, path, "time_us", n, 1e-6, 1e9, t->t))) return rc;
  /* optional (profiles before the cold measurement lack it): the warm curve stands in */
  if (json_object_get(obj, "time_cold_us"))
    rc = av__profile_read_numbers(c, obj, path, "time_cold_us", n, 1e-6, 1e9, t->cold);
  else
    memcpy(t->cold, t->t, sizeof t->t);
  if (rc) return rc;
  if (n >= 2) {
    t->interp = gsl_interp_alloc(gsl_interp_linear, n);
    t->interp_cold = gsl_interp_alloc(gsl_interp_linear, n);
    if (!t->interp || !t->interp_cold || gsl_interp_init(t->interp, t->slots, t->t, n) ||
        gsl_interp_init(t->interp_cold, t->slots, t->cold, n))
      return av_error_set(c->err, AV_ERR_INTERNAL, c->source, path,
                          "GSL could not set up the interpolation");
  }
  return AV_OK;
}

int av__merge_read(const av_jctx_t *c, const json_t *root, av__merge_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(root, "merge");
  if (!obj) return AV_OK;
  int rc;
  int64_t rows;
  if ((rc = av_json_expect_object(c, obj, "merge")) ||
      (rc = av_json_check_keys(c, obj, "merge", merge_keys)) ||
      (rc = av_json_get_int(c, obj, "merge", "rows_per_cta", 1, 0, 1, 1024, &rows)) ||
      (rc = av_json_get_double(c, obj, "merge", "empty_cta_us", 0, 0, 0, 1e6,
                               &out->empty_cta_us)))
    return rc;
  out->rows_per_cta = (int)rows;
  const json_t *cs = json_object_get(obj, "curves");
  if (!cs)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "merge.curves",
                        "missing key 'curves' (an array of per head-dim/dtype curves)");
  if ((rc = av_json_expect_array(c, cs, "merge.curves"))) return rc;
  out->c = calloc(json_array_size(cs) + 1, sizeof *out->c);
  if (!out->c) return av_error_set(c->err, AV_ERR_NOMEM, c->source, "merge", "out of memory");
  for (size_t i = 0; i < json_array_size(cs); i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "merge.curves", i);
    av__merge_curve_t *t = &out->c[out->n++];
    if ((rc = read_curve(c, json_array_get(cs, i), where, t))) return rc;
    for (int k = 0; k + 1 < out->n; k++)
      if (out->c[k].head_dim == t->head_dim && out->c[k].dtype == t->dtype)
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "duplicate curve (same head_dim and dtype as merge.curves[%d])", k);
  }
  return AV_OK;
}

/* One curve (times y over t->slots) at `slots`: linear inside, the last slope beyond. */
static double curve_at(const av__merge_curve_t *t, const double *y, const gsl_interp *ip,
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
  const av__merge_curve_t *t = NULL;
  for (int i = 0; m && i < m->n; i++)
    if (m->c[i].head_dim == head_dim && (!t || m->c[i].dtype == dtype)) t = &m->c[i];
  if (!t || t->n == 0) return 0;
  const double f = cold_frac < 0 ? 0 : cold_frac > 1 ? 1 : cold_frac;
  const double warm = curve_at(t, t->t, t->interp, slots);
  return f > 0 ? (1 - f) * warm + f * curve_at(t, t->cold, t->interp_cold, slots) : warm;
}
