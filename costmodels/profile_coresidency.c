/* Co-residency curves of the profile file (costmodels/profile_coresidency.h): parsing with
 * key-path errors, and the slowdown at k co-resident CTAs, linear in k between the measured
 * points (GSL gsl_interp_linear). Why a curve at all: CTAs sharing an SM share its issue
 * slots, load/store units and shared-memory bandwidth, so each streams slower than alone even
 * when HBM has room (docs/validation.md, "Co-residency"). */
#include "costmodels/profile_coresidency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const cores_keys[] = {"kv_tokens", "notes", "variants", NULL};
static const char *const curve_keys[] = {"kind",        "m",        "n",
                                         "warps",       "head_dim", "dtype",
                                         "k",           "slowdown", "duration_us",
                                         "hbm_duration_us", "hbm_GBps", NULL};

void av__cores_free(av__cores_t *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) gsl_interp_free(s->c[i].interp);
  free(s->c);
  s->c = NULL;
  s->n = 0;
}

int av__profile_read_numbers(const av_jctx_t *c, const json_t *obj, const char *path,
                        const char *key, size_t want, double lo, double hi, double *out) {
  char where[256], item[300];
  av_jpath_key(where, sizeof where, path, key);
  const json_t *a = json_object_get(obj, key);
  if (!a)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "missing key '%s' (an array of %zu numbers)", key, want);
  int rc = av_json_expect_array(c, a, where);
  if (rc) return rc;
  if (json_array_size(a) != want)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, where,
                        "expected %zu numbers (one per point of the curve), got %zu", want,
                        json_array_size(a));
  for (size_t i = 0; i < want; i++) {
    double v;
    av_jpath_index(item, sizeof item, where, i);
    if ((rc = av_json_as_double(c, json_array_get(a, i), item, lo, hi, &v))) return rc;
    if (out) out[i] = v;
  }
  return AV_OK;
}

int av__profile_read_tile(const av_jctx_t *c, const json_t *obj, const char *path,
                          av_tile_t *tile, int *head_dim, av_dtype_t *dtype) {
  int rc;
  const char *kind, *dt;
  int64_t m, n, warps, hd;
  char where[256];
  if ((rc = av_json_get_string(c, obj, path, "kind", 1, NULL, &kind)) ||
      (rc = av_json_get_int(c, obj, path, "m", 1, 0, 1, 4096, &m)) ||
      (rc = av_json_get_int(c, obj, path, "n", 1, 0, 1, 65536, &n)) ||
      (rc = av_json_get_int(c, obj, path, "warps", 1, 0, 1, 32, &warps)) ||
      (rc = av_json_get_int(c, obj, path, "head_dim", 1, 0, 1, 1024, &hd)) ||
      (rc = av_json_get_string(c, obj, path, "dtype", 1, NULL, &dt)))
    return rc;
  av_jpath_key(where, sizeof where, path, "kind");
  if (av_kernel_kind_from_name(kind, &tile->kind) || tile->kind == AV_KERNEL_MERGE)
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown kernel kind '%s'; expected one of: partial, persistent, "
                        "decode", kind);
  av_jpath_key(where, sizeof where, path, "dtype");
  if (strcmp(dt, av_dtype_name(AV_DTYPE_FP16)) == 0) *dtype = AV_DTYPE_FP16;
  else if (strcmp(dt, av_dtype_name(AV_DTYPE_BF16)) == 0) *dtype = AV_DTYPE_BF16;
  else
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown dtype '%s'; expected one of: %s, %s", dt,
                        av_dtype_name(AV_DTYPE_FP16), av_dtype_name(AV_DTYPE_BF16));
  tile->m_rows = (int)m;
  tile->n_tokens = (int)n;
  tile->warps = (int)warps;
  *head_dim = (int)hd;
  return AV_OK;
}

double av__profile_tile_distance(const av_tile_t *a, int a_hd, av_dtype_t a_dt,
                                 const av_tile_t *b, int b_hd, av_dtype_t b_dt) {
  return fabs(log((double)a->m_rows / fmax(b->m_rows, 1))) +
         fabs(log((double)a->n_tokens / fmax(b->n_tokens, 1))) +
         (a->warps != b->warps ? 10.0 : 0.0) + (a->kind != b->kind ? 100.0 : 0.0) +
         (a_hd != b_hd || a_dt != b_dt ? 1000.0 : 0.0);
}

/* k: 1, then strictly increasing; slowdown[0] = 1 (the lone CTA is the reference). */
static int read_curve(const av_jctx_t *c, const json_t *obj, const char *path,
                      av__cores_curve_t *t) {
  int rc;
  char where[256], item[300];
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, curve_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, &t->tile, &t->head_dim, &t->dtype)))
    return rc;
  int64_t *k = NULL;
  size_t n = 0;
  if ((rc = av_json_get_int_array(c, obj, path, "k", 1, 0, 1, AV__CORES_MAX_K, &k, &n)))
    return rc;
  av_jpath_key(where, sizeof where, path, "k");
  if (n > AV__CORES_MAX_K)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                      "at most %d points, got %zu", AV__CORES_MAX_K, n);
  else if (k[0] != 1)
    rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                      "must start at 1 (the lone CTA the slowdowns are relative to), got %lld",
                      (long long)k[0]);
  for (size_t i = 1; !rc && i < n; i++)
    if (k[i] <= k[i - 1]) {
      av_jpath_index(item, sizeof item, where, i);
      rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                        "k must be strictly increasing: %lld follows %lld", (long long)k[i],
                        (long long)k[i - 1]);
    }
  for (size_t i = 0; !rc && i < n; i++) t->k[i] = (double)k[i];
  free(k);
  if (rc) return rc;
  t->n = (int)n;
  if ((rc = av__profile_read_numbers(c, obj, path, "slowdown", n, 0.5, 20.0, t->s))) return rc;
  av_jpath_key(where, sizeof where, path, "slowdown");
  av_jpath_index(item, sizeof item, where, 0);
  if (fabs(t->s[0] - 1.0) > 1e-6)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, item,
                        "the slowdown at k = 1 must be 1 (a lone CTA against itself), got %g",
                        t->s[0]);
  static const char *const optional[] = {"duration_us", "hbm_duration_us", "hbm_GBps"};
  for (int i = 0; i < 3; i++)
    if (json_object_get(obj, optional[i]) &&
        (rc = av__profile_read_numbers(c, obj, path, optional[i], n, 1e-6, 1e9,
                                       i == 0 ? t->dur : NULL)))
      return rc;
  t->has_dur = json_object_get(obj, "duration_us") != NULL;
  if (av__cores_set(t, t->s))
    return av_error_set(c->err, AV_ERR_INTERNAL, c->source, path,
                        "GSL could not set up the interpolation");
  return AV_OK;
}

int av__cores_set(av__cores_curve_t *t, const double *s) {
  if (s != t->s) memcpy(t->s, s, sizeof(double) * (size_t)t->n);
  if (t->n < 2) return AV_OK;
  if (!t->interp) t->interp = gsl_interp_alloc(gsl_interp_linear, (size_t)t->n);
  if (!t->interp || gsl_interp_init(t->interp, t->k, t->s, (size_t)t->n)) return AV_ERR_INTERNAL;
  return AV_OK;
}

static int same_curve(const av__cores_curve_t *a, const av__cores_curve_t *b) {
  return a->tile.kind == b->tile.kind && a->tile.m_rows == b->tile.m_rows &&
         a->tile.n_tokens == b->tile.n_tokens && a->tile.warps == b->tile.warps &&
         a->head_dim == b->head_dim && a->dtype == b->dtype;
}

int av__cores_read(const av_jctx_t *c, const json_t *root, av__cores_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(root, "coresidency");
  if (!obj) return AV_OK;
  int rc;
  int64_t kv;
  if ((rc = av_json_expect_object(c, obj, "coresidency")) ||
      (rc = av_json_check_keys(c, obj, "coresidency", cores_keys)) ||
      (rc = av_json_get_int(c, obj, "coresidency", "kv_tokens", 0, 0, 1, INT64_C(1) << 40, &kv)))
    return rc;
  const json_t *vs = json_object_get(obj, "variants");
  if (!vs)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "coresidency.variants",
                        "missing key 'variants' (an array of per-variant curves)");
  if ((rc = av_json_expect_array(c, vs, "coresidency.variants"))) return rc;
  out->c = calloc(json_array_size(vs) + 1, sizeof *out->c);
  if (!out->c)
    return av_error_set(c->err, AV_ERR_NOMEM, c->source, "coresidency", "out of memory");
  for (size_t i = 0; i < json_array_size(vs); i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "coresidency.variants", i);
    av__cores_curve_t *t = &out->c[out->n++];
    if ((rc = read_curve(c, json_array_get(vs, i), where, t))) return rc;
    for (int k = 0; k + 1 < out->n; k++)
      if (same_curve(&out->c[k], t))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "duplicate variant (same kind, m, n, warps, head_dim, dtype as "
                            "coresidency.variants[%d])", k);
  }
  return AV_OK;
}

/* Exact key, else the nearest: a different kind, head dim or dtype weighs more than any
 * difference in (m, n) (log distance), as the profile model's nearest_table does. */
static const av__cores_curve_t *find_curve(const av__cores_t *s, const av_tile_t *tile,
                                           int head_dim, av_dtype_t dtype) {
  const av__cores_curve_t *best = NULL;
  double best_d = 0;
  for (int i = 0; i < s->n; i++) {
    const av__cores_curve_t *t = &s->c[i];
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
  const av__cores_curve_t *t = find_curve(s, tile, head_dim, dtype);
  if (t->n == 1 || k <= 1) return k <= 1 ? 1.0 : t->s[0];
  double x = (double)k;
  int last = t->n - 1;
  if (x <= t->k[last]) return gsl_interp_eval(t->interp, t->k, t->s, x, NULL);
  /* beyond the variant's occupancy (CTAs of other launches on the SM): the last slope on */
  double slope = (t->s[last] - t->s[last - 1]) / (t->k[last] - t->k[last - 1]);
  return t->s[last] + fmax(slope, 0.0) * (x - t->k[last]);
}
