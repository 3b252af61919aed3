/* First-wave start cost measurements (costmodels/profile_start.h): the profile file's "start"
 * key and, for profiles measured before it existed, the details file's "queue" key, parsed
 * with key-path errors; and the cost at any number of CTAs starting together, linear between
 * the measured wave sizes. */
#include "costmodels/profile_start.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodels/profile_coresidency.h"

static const char *const start_keys[] = {"kv_tokens", "notes", "variants", NULL};
static const char *const start_variant_keys[] = {"kind",  "m",    "n",   "warps",
                                                 "head_dim", "dtype", "ctas", "n_q",
                                                 "duration_us", NULL};
static const char *const queue_keys[] = {"items", "notes", "variants", NULL};
static const char *const queue_variant_keys[] = {
    "kind",  "m",        "n",           "warps",       "head_dim",        "dtype",
    "n_kv",  "first_us", "next_us",     "loaded_ctas", "loaded_first_us", "loaded_next_us",
    NULL};

void av__start_free(av__start_t *s) {
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
  int rc = av_json_get_int_array(c, obj, path, key, 1, 0, 1, INT64_C(1) << 30, &v, &n);
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
                      av__start_variant_t *v) {
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

static int same_variant(const av__start_variant_t *a, const av__start_variant_t *b) {
  return a->tile.kind == b->tile.kind && a->tile.m_rows == b->tile.m_rows &&
         a->tile.n_tokens == b->tile.n_tokens && a->tile.warps == b->tile.warps &&
         a->head_dim == b->head_dim && a->dtype == b->dtype;
}

/* The variants array at `path`, each read by `one`; duplicates rejected. */
static int read_variants(const av_jctx_t *c, const json_t *obj, const char *path,
                         const int64_t *kv, int n_kv, av__start_t *out,
                         int (*one)(const av_jctx_t *, const json_t *, const char *,
                                    const int64_t *, int, av__start_variant_t *)) {
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
    av__start_variant_t *v = &out->v[out->n++];
    if ((rc = one(c, json_array_get(vs, i), item, kv, n_kv, v))) return rc;
    for (int k = 0; k + 1 < out->n; k++)
      if (same_variant(&out->v[k], v))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                            "duplicate variant (same kind, m, n, warps, head_dim, dtype as "
                            "%s[%d])", where, k);
  }
  return AV_OK;
}

static int read_start_variant(const av_jctx_t *c, const json_t *obj, const char *path,
                              const int64_t *kv, int n_kv, av__start_variant_t *v) {
  int rc;
  int64_t ctas[AV__START_MAX_PTS], rows[AV__START_MAX_ROWS];
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, start_variant_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, &v->tile, &v->head_dim, &v->dtype)) ||
      (rc = read_axis(c, obj, path, "ctas", AV__START_MAX_PTS, ctas, &v->n)) ||
      (rc = read_axis(c, obj, path, "n_q", AV__START_MAX_ROWS, rows, &v->n_rows)))
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

int av__start_read(const av_jctx_t *c, const json_t *root, av__start_t *out) {
  memset(out, 0, sizeof *out);
  const json_t *obj = json_object_get(root, "start");
  if (!obj) return AV_OK;
  int rc, n_kv = 0;
  int64_t kv[AV__START_MAX_KV];
  if ((rc = av_json_expect_object(c, obj, "start")) ||
      (rc = av_json_check_keys(c, obj, "start", start_keys)) ||
      (rc = read_axis(c, obj, "start", "kv_tokens", AV__START_MAX_KV, kv, &n_kv)) ||
      (rc = read_variants(c, obj, "start", kv, n_kv, out, read_start_variant)))
    return rc;
  out->from = "start";
  return AV_OK;
}

static int read_queue_variant(const av_jctx_t *c, const json_t *obj, const char *path,
                              const int64_t *kv_unused, int n_unused, av__start_variant_t *v) {
  (void)kv_unused;
  (void)n_unused;
  int rc;
  int64_t loaded;
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, queue_variant_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, &v->tile, &v->head_dim, &v->dtype)) ||
      (rc = read_axis(c, obj, path, "n_kv", AV__START_MAX_KV, v->kv, &v->n_kv)) ||
      (rc = av_json_get_int(c, obj, path, "loaded_ctas", 1, 0, 1, INT32_MAX, &loaded)) ||
      (rc = av__profile_read_numbers(c, obj, path, "first_us", (size_t)v->n_kv, 1e-6, 1e6,
                                     v->lone_us[0])) ||
      (rc = av__profile_read_numbers(c, obj, path, "loaded_first_us", (size_t)v->n_kv, 1e-6,
                                     1e6, v->dur_us[0][0])))
    return rc;
  v->n = 1;
  v->ctas[0] = (int32_t)loaded;
  v->n_rows = 1;
  v->rows[0] = 1;  /* one-query items, GQA group 1 */
  return AV_OK;
}

int av__start_read_queue(const av_jctx_t *c, const json_t *details, av__start_t *out) {
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

const av__start_variant_t *av__start_find(const av__start_t *s, const av_tile_t *tile,
                                          int head_dim, av_dtype_t dtype) {
  const av__start_variant_t *best = NULL;
  double best_d = 0;
  for (int i = 0; s && i < s->n; i++) {
    const av__start_variant_t *v = &s->v[i];
    double d = av__profile_tile_distance(&v->tile, v->head_dim, v->dtype, tile, head_dim, dtype);
    if (!best || d < best_d) {
      best = v;
      best_d = d;
    }
  }
  return best;
}

/* Row r's start cost at `ctas` CTAs (linear through (0, 0), av__start_cost). */
static double cost_at(const av__start_variant_t *v, int r, double x) {
  double x0 = 0, y0 = 0;
  for (int i = 0; i < v->n; i++) {
    double x1 = v->ctas[i], y1 = v->delta_us[i][r];
    if (x <= x1 || i == v->n - 1) return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    x0 = x1;
    y0 = y1;
  }
  return 0;
}

double av__start_cost(const av__start_t *s, const av_tile_t *tile, int head_dim,
                      av_dtype_t dtype, int32_t ctas, int32_t rows) {
  const av__start_variant_t *v = av__start_find(s, tile, head_dim, dtype);
  if (!v || ctas <= 0) return 0;
  int r = 0;
  while (r + 1 < v->n_rows && v->rows[r + 1] <= rows) r++;
  double y = cost_at(v, r, (double)ctas);
  if (r + 1 < v->n_rows && rows > v->rows[r]) {
    double a = log((double)rows / v->rows[r]) / log((double)v->rows[r + 1] / v->rows[r]);
    y += a * (cost_at(v, r + 1, (double)ctas) - y);
  }
  return y > 0 ? y : 0;
}

/* Bytes one profiled CTA moves for its item of `rows` one-query rows over kv tokens: K and
 * V, the query rows, and its outputs (partial: O and lse in fp32; decode: O in the dtype). */
static double item_bytes(const av__start_variant_t *v, int32_t rows, int64_t kv) {
  const double d = v->head_dim, el = av_dtype_bytes(v->dtype);
  const double out = v->tile.kind == AV_KERNEL_DECODE ? d * el : d * 4 + 4;
  return (double)kv * 2 * d * el + rows * (d * el + out);
}

/* Whether KV length j of v enters the start cost: lengths up to AV__START_SHORT_TOKENS (all of
 * the start step's), else the shortest alone. A longer item's wave is bandwidth-bound (the
 * queue step's 512-token wave moves 5-10x the start cost's worth of bytes at B), so the
 * difference there measures the bandwidth model's error more than the start. */
static int short_enough(const av__start_variant_t *v, int j) {
  return v->kv[j] <= AV__START_SHORT_TOKENS || j == 0;
}

/* One point's start cost: the wave's CTA time over the lone one's, less the longer streaming
 * the engine gives it, averaged over the short KV lengths. */
static double derive_point(const av__start_variant_t *v, int p, int r,
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
        s->v[i].delta_us[p][r] = derive_point(&s->v[i], p, r, env);
}

int av__start_discount(const av__start_t *s, av__cores_t *cores, int sm_count) {
  if (!s || s->n == 0) return AV_OK;
  for (int i = 0; i < cores->n; i++) {
    av__cores_curve_t *c = &cores->c[i];
    const int last = c->n - 1;
    if (!c->has_dur || c->n < 2 || c->s[last] < 1.001) continue;
    const double T = (c->dur[last] - c->dur[0]) / (c->s[last] - 1);
    double d[AV__CORES_MAX_K], s_new[AV__CORES_MAX_K];
    for (int k = 0; k < c->n; k++)
      d[k] = av__start_cost(s, &c->tile, c->head_dim, c->dtype, (int32_t)c->k[k] * sm_count, 1);
    if (!(T > d[0])) continue;
    for (int k = 0; k < c->n; k++) {
      double x = (c->s[k] * T - d[k]) / (T - d[0]);
      s_new[k] = k == 0 ? 1.0 : x < 0.5 ? 0.5 : x;
    }
    if (av__cores_set(c, s_new)) return AV_ERR_INTERNAL;
  }
  return AV_OK;
}
