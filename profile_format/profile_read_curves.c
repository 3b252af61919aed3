/* The profile document's curve keys (profile_format/profile_read.h): "coresidency" (per
 * variant, the slowdown at k CTAs sharing an SM) and "merge" (the merge CTA's time over
 * slots per row), with the variant and number readers every key shares. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile_format/profile_read.h"

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

int av__profile_read_dtype(const av_jctx_t *c, const json_t *obj, const char *path,
                           const char *key, av_dtype_t *out) {
  const char *name;
  char where[256];
  int rc = av_json_get_string(c, obj, path, key, 1, NULL, &name);
  if (rc) return rc;
  for (int d = AV_DTYPE_FP16; d <= AV_DTYPE_BF16; d++)
    if (strcmp(name, av_dtype_name((av_dtype_t)d)) == 0) {
      *out = (av_dtype_t)d;
      return AV_OK;
    }
  av_jpath_key(where, sizeof where, path, key);
  return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                      "unknown dtype '%s'; expected one of: %s, %s", name,
                      av_dtype_name(AV_DTYPE_FP16), av_dtype_name(AV_DTYPE_BF16));
}

int av__profile_read_tile(const av_jctx_t *c, const json_t *obj, const char *path,
                          int allow_merge, av_tile_t *tile, int *head_dim, av_dtype_t *dtype) {
  int rc;
  const char *kind;
  int64_t m, n, warps, hd;
  char where[256];
  if ((rc = av_json_get_string(c, obj, path, "kind", 1, NULL, &kind)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){path, "m", 1}, 0, 1, 4096, &m)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){path, "n", 1}, 0, 1, 65536, &n)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){path, "warps", 1}, 0, 1, 32, &warps)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){path, "head_dim", 1}, 0, 1, 1024, &hd)) ||
      (rc = av__profile_read_dtype(c, obj, path, "dtype", dtype)))
    return rc;
  av_jpath_key(where, sizeof where, path, "kind");
  if (av_kernel_kind_from_name(kind, &tile->kind) ||
      (!allow_merge && tile->kind == AV_KERNEL_MERGE))
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown kernel kind '%s'; expected one of: partial, persistent, "
                        "decode%s", kind, allow_merge ? ", merge" : "");
  tile->m_rows = (int)m;
  tile->n_tokens = (int)n;
  tile->warps = (int)warps;
  *head_dim = (int)hd;
  return AV_OK;
}

int av__profile_same_variant(const av_tile_t *a, int a_hd, av_dtype_t a_dt, const av_tile_t *b,
                             int b_hd, av_dtype_t b_dt) {
  return a->kind == b->kind && a->m_rows == b->m_rows && a->n_tokens == b->n_tokens &&
         a->warps == b->warps && a_hd == b_hd && a_dt == b_dt;
}

/* --- "coresidency" ---------------------------------------------------------------------- */

static const char *const cores_keys[] = {"kv_tokens", "notes", "variants", NULL};
static const char *const curve_keys[] = {"kind",        "m",        "n",
                                         "warps",       "head_dim", "dtype",
                                         "k",           "slowdown", "duration_us",
                                         "hbm_duration_us", "hbm_GBps", NULL};

/* k: 1, then strictly increasing; slowdown[0] = 1 (the lone CTA is the reference). */
static int read_curve(const av_jctx_t *c, const json_t *obj, const char *path,
                      av_profile_curve_t *t) {
  int rc;
  char where[256], item[300];
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, curve_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, 0, &t->tile, &t->head_dim, &t->dtype)))
    return rc;
  int64_t *k = NULL;
  size_t n = 0;
  if ((rc = av_json_get_int_array(c, obj, (av_json_field_t){path, "k", 1}, 0, 1,
                                  AV_PROFILE_CORES_MAX_K, &k, &n)))
    return rc;
  av_jpath_key(where, sizeof where, path, "k");
  if (n > AV_PROFILE_CORES_MAX_K)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                      "at most %d points, got %zu", AV_PROFILE_CORES_MAX_K, n);
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
  return AV_OK;
}

int av__profile_read_cores(const av_jctx_t *c, const json_t *root, av_profile_curves_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(root, "coresidency");
  if (!obj) return AV_OK;
  int rc;
  int64_t kv;
  if ((rc = av_json_expect_object(c, obj, "coresidency")) ||
      (rc = av_json_check_keys(c, obj, "coresidency", cores_keys)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){"coresidency", "kv_tokens", 0}, 0, 1,
                            INT64_C(1) << 40, &kv)))
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
    av_profile_curve_t *t = &out->c[out->n++];
    if ((rc = read_curve(c, json_array_get(vs, i), where, t))) return rc;
    for (int k = 0; k + 1 < out->n; k++)
      if (av__profile_same_variant(&out->c[k].tile, out->c[k].head_dim, out->c[k].dtype,
                                   &t->tile, t->head_dim, t->dtype))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "duplicate variant (same kind, m, n, warps, head_dim, dtype as "
                            "coresidency.variants[%d])", k);
  }
  return AV_OK;
}

/* --- "merge" ---------------------------------------------------------------------------- */

static const char *const merge_keys[] = {"rows_per_cta", "empty_cta_us", "notes", "curves",
                                         NULL};
static const char *const merge_curve_keys[] = {"head_dim", "dtype", "slots", "time_us",
                                               "time_cold_us", NULL};

static int read_merge_curve(const av_jctx_t *c, const json_t *obj, const char *path,
                            av_profile_merge_curve_t *t) {
  int rc;
  int64_t hd, *slots = NULL;
  size_t n = 0;
  char where[256], item[300];
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, merge_curve_keys)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){path, "head_dim", 1}, 0, 1, 1024, &hd)) ||
      (rc = av__profile_read_dtype(c, obj, path, "dtype", &t->dtype)))
    return rc;
  t->head_dim = (int)hd;
  if ((rc = av_json_get_int_array(c, obj, (av_json_field_t){path, "slots", 1}, 0, 1, 1 << 24,
                                  &slots, &n)))
    return rc;
  av_jpath_key(where, sizeof where, path, "slots");
  if (n > AV_PROFILE_MERGE_MAX_PTS)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, where, "at most %d points, got %zu",
                      AV_PROFILE_MERGE_MAX_PTS, n);
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
    return av__profile_read_numbers(c, obj, path, "time_cold_us", n, 1e-6, 1e9, t->cold);
  memcpy(t->cold, t->t, sizeof t->t);
  return AV_OK;
}

int av__profile_read_merge(const av_jctx_t *c, const json_t *root, av_profile_merges_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(root, "merge");
  if (!obj) return AV_OK;
  int rc;
  int64_t rows;
  if ((rc = av_json_expect_object(c, obj, "merge")) ||
      (rc = av_json_check_keys(c, obj, "merge", merge_keys)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){"merge", "rows_per_cta", 1}, 0, 1, 1024,
                            &rows)) ||
      (rc = av_json_get_double(c, obj, (av_json_field_t){"merge", "empty_cta_us", 0}, 0, 0, 1e6,
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
    av_profile_merge_curve_t *t = &out->c[out->n++];
    if ((rc = read_merge_curve(c, json_array_get(cs, i), where, t))) return rc;
    for (int k = 0; k + 1 < out->n; k++)
      if (out->c[k].head_dim == t->head_dim && out->c[k].dtype == t->dtype)
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "duplicate curve (same head_dim and dtype as merge.curves[%d])", k);
  }
  return AV_OK;
}
