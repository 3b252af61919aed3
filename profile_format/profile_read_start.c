/* The first-wave start waves (profile_format/profile_read.h): the profile document's "start"
 * key and, for profiles measured before it existed, the details document's "queue" key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile_format/profile_read.h"

static const char *const start_keys[] = {"kv_tokens", "notes", "variants", NULL};
static const char *const start_variant_keys[] = {"kind",  "m",    "n",   "warps",
                                                 "head_dim", "dtype", "ctas", "n_q",
                                                 "duration_us", NULL};
static const char *const queue_keys[] = {"items", "notes", "variants", NULL};
static const char *const queue_variant_keys[] = {
    "kind",  "m",        "n",           "warps",       "head_dim",        "dtype",
    "n_kv",  "first_us", "next_us",     "loaded_ctas", "loaded_first_us", "loaded_next_us",
    NULL};

void av_profile_starts_free(av_profile_starts_t *s) {
  if (!s) return;
  free(s->v);
  memset(s, 0, sizeof *s);
}

/* A strictly increasing array of 1..max_n positive integers at path.key. */
static int read_axis(const av_jctx_t *c, const json_t *obj, const char *path, const char *key,
                     int max_n, int64_t *out, int *n_out) {
  int64_t *v = NULL;
  size_t n = 0;
  char where[256], item[300];
  int rc = av_json_get_int_array(c, obj, (av_json_field_t){path, key, 1}, 0, 1, INT64_C(1) << 30,
                                 &v, &n);
  av_jpath_key(where, sizeof where, path, key);
  if (!rc && n > (size_t)max_n)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, where, "at most %d points, got %zu",
                      max_n, n);
  for (size_t i = 1; !rc && i < n; i++)
    if (v[i] <= v[i - 1]) {
      av_jpath_index(item, sizeof item, where, i);
      rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                        "must be strictly increasing: %lld follows %lld", (long long)v[i],
                        (long long)v[i - 1]);
    }
  for (size_t i = 0; !rc && i < n; i++) out[i] = v[i];
  if (!rc) *n_out = (int)n;
  free(v);
  return rc;
}

/* The array at `path` of exactly `want` entries; AV_ERR_MISMATCH naming what they are. */
static int expect_len(const av_jctx_t *c, const json_t *a, const char *path, size_t want,
                      const char *what) {
  int rc = av_json_expect_array(c, a, path);
  if (!rc && json_array_size(a) != want)
    rc = av_error_set(c->err, AV_ERR_MISMATCH, c->source, path,
                      "expected %zu entries (one per %s), got %zu", want, what,
                      json_array_size(a));
  return rc;
}

/* duration_us[wave size][query rows][KV length], every time positive. */
static int read_times(const av_jctx_t *c, const json_t *obj, const char *path,
                      av_profile_start_wave_t *v) {
  char where[256], a_path[300], b_path[320], item[340];
  av_jpath_key(where, sizeof where, path, "duration_us");
  const json_t *a = json_object_get(obj, "duration_us");
  if (!a)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "missing key 'duration_us' (per entry of ctas, per entry of n_q, per "
                        "entry of kv_tokens)");
  int rc = expect_len(c, a, where, (size_t)v->n, "entry of ctas");
  for (int i = 0; i < v->n && !rc; i++) {
    av_jpath_index(a_path, sizeof a_path, where, (size_t)i);
    const json_t *b = json_array_get(a, (size_t)i);
    rc = expect_len(c, b, a_path, (size_t)v->n_rows, "entry of n_q");
    for (int r = 0; r < v->n_rows && !rc; r++) {
      av_jpath_index(b_path, sizeof b_path, a_path, (size_t)r);
      const json_t *t = json_array_get(b, (size_t)r);
      rc = expect_len(c, t, b_path, (size_t)v->n_kv, "entry of kv_tokens");
      for (int j = 0; j < v->n_kv && !rc; j++) {
        av_jpath_index(item, sizeof item, b_path, (size_t)j);
        rc = av_json_as_double(c, json_array_get(t, (size_t)j), item, 1e-6, 1e6,
                               &v->dur_us[i][r][j]);
      }
    }
  }
  return rc;
}

/* The variants array at `path`, each read by `one`; duplicates rejected. */
static int read_variants(const av_jctx_t *c, const json_t *obj, const char *path,
                         const int64_t *kv, int n_kv, av_profile_starts_t *out,
                         int (*one)(const av_jctx_t *, const json_t *, const char *,
                                    const int64_t *, int, av_profile_start_wave_t *)) {
  char where[256];
  av_jpath_key(where, sizeof where, path, "variants");
  const json_t *vs = json_object_get(obj, "variants");
  if (!vs)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "missing key 'variants' (an array of per-variant measurements)");
  int rc = av_json_expect_array(c, vs, where);
  if (rc) return rc;
  out->v = calloc(json_array_size(vs) + 1, sizeof *out->v);
  if (!out->v) return av_error_set(c->err, AV_ERR_NOMEM, c->source, path, "out of memory");
  for (size_t i = 0; i < json_array_size(vs); i++) {
    char item[300];
    av_jpath_index(item, sizeof item, where, i);
    av_profile_start_wave_t *v = &out->v[out->n++];
    if ((rc = one(c, json_array_get(vs, i), item, kv, n_kv, v))) return rc;
    for (int k = 0; k + 1 < out->n; k++)
      if (av__profile_same_variant(&out->v[k].tile, out->v[k].head_dim, out->v[k].dtype,
                                   &v->tile, v->head_dim, v->dtype))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                            "duplicate variant (same kind, m, n, warps, head_dim, dtype as "
                            "%s[%d])", where, k);
  }
  return AV_OK;
}

static int read_start_variant(const av_jctx_t *c, const json_t *obj, const char *path,
                              const int64_t *kv, int n_kv, av_profile_start_wave_t *v) {
  int rc;
  int64_t ctas[AV_PROFILE_START_MAX_PTS], rows[AV_PROFILE_START_MAX_ROWS];
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, start_variant_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, 0, &v->tile, &v->head_dim, &v->dtype)) ||
      (rc = read_axis(c, obj, path, "ctas", AV_PROFILE_START_MAX_PTS, ctas, &v->n)) ||
      (rc = read_axis(c, obj, path, "n_q", AV_PROFILE_START_MAX_ROWS, rows, &v->n_rows)))
    return rc;
  for (int i = 0; i < v->n; i++) v->ctas[i] = (int32_t)ctas[i];
  for (int r = 0; r < v->n_rows; r++) v->rows[r] = (int32_t)rows[r];
  v->n_kv = n_kv;
  for (int j = 0; j < n_kv; j++) v->kv[j] = kv[j];
  /* alone, the CTA takes C(rows, kv): the model reads it from its table */
  for (int r = 0; r < v->n_rows; r++)
    for (int j = 0; j < n_kv; j++) v->lone_us[r][j] = NAN;
  return read_times(c, obj, path, v);
}

int av__profile_read_start(const av_jctx_t *c, const json_t *root, av_profile_starts_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(root, "start");
  if (!obj) return AV_OK;
  int rc, n_kv = 0;
  int64_t kv[AV_PROFILE_START_MAX_KV];
  if ((rc = av_json_expect_object(c, obj, "start")) ||
      (rc = av_json_check_keys(c, obj, "start", start_keys)) ||
      (rc = read_axis(c, obj, "start", "kv_tokens", AV_PROFILE_START_MAX_KV, kv, &n_kv)) ||
      (rc = read_variants(c, obj, "start", kv, n_kv, out, read_start_variant)))
    return rc;
  out->from = "start";
  return AV_OK;
}

static int read_queue_variant(const av_jctx_t *c, const json_t *obj, const char *path,
                              const int64_t *kv_unused, int n_unused, av_profile_start_wave_t *v) {
  (void)kv_unused;
  (void)n_unused;
  int rc;
  int64_t loaded;
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, queue_variant_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, 0, &v->tile, &v->head_dim, &v->dtype)) ||
      (rc = read_axis(c, obj, path, "n_kv", AV_PROFILE_START_MAX_KV, v->kv, &v->n_kv)) ||
      (rc = av_json_get_int(c, obj, (av_json_field_t){path, "loaded_ctas", 1}, 0, 1, INT32_MAX,
                            &loaded)) ||
      (rc = av__profile_read_numbers(c, obj, path, "first_us", (size_t)v->n_kv, 1e-6, 1e6,
                                     v->lone_us[0])) ||
      (rc = av__profile_read_numbers(c, obj, path, "loaded_first_us", (size_t)v->n_kv, 1e-6, 1e6,
                                     v->dur_us[0][0])))
    return rc;
  v->n = 1;
  v->ctas[0] = (int32_t)loaded;
  v->n_rows = 1;
  v->rows[0] = 1;  /* one-query items, GQA group 1 */
  return AV_OK;
}

int av_profile_read_queue(const av_jctx_t *c, const json_t *details, av_profile_starts_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(details, "queue");
  if (!obj) return AV_OK;
  int rc;
  if ((rc = av_json_expect_object(c, obj, "queue")) ||
      (rc = av_json_check_keys(c, obj, "queue", queue_keys)) ||
      (rc = read_variants(c, obj, "queue", NULL, 0, out, read_queue_variant)))
    return rc;
  out->from = "queue";
  return AV_OK;
}
