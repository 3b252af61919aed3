/* profile: FlashForge §5.2's profile-based estimator. A profile file holds, per kernel
 * variant, measured CTA times C(n_q, n) on a grid of query rows n_q (queries x GQA group)
 * and KV tokens n ("n_kv" in the file) (Eq. 6);
 * between grid points we interpolate bilinearly in (log n_q, log n) with GSL; outside the
 * grid n_q is clamped, n below the grid is clamped and n above it is extrapolated linearly
 * from the last two columns (decode attention is memory-bound there, FlashForge Table 2:
 * "cost scales almost linearly with n"). */
#include <gsl/gsl_interp2d.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodels/costmodel.h"
#include "costmodels/costmodel_internal.h"
#include "costmodels/profile_coresidency.h"
#include "costmodels/profile_merge.h"
#include "costmodels/profile_start.h"
#include "profile_format/profile_read.h"

static const av_param_def_t profile_params[] = {
    {.name = "path", .type = AV_PARAM_STRING, .def = "",
     .help = "profile JSON file; empty = <data dir>/profiles/<gpu>.json"},
    {.name = "check_gpu", .type = AV_PARAM_BOOL, .def = "true",
     .help = "reject a profile whose \"gpu\" is not the experiment's GPU spec"},
    {.name = NULL},
};

typedef struct {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  size_t nx, ny;          /* n_q points, n points */
  double *x, *y, *z;      /* log n_q, log n, times (z[j*nx + i] = C(n_q[i], n[j])) */
  double *n_lin;          /* the n grid itself, for extrapolation */
  gsl_interp2d *interp;
} profile_table_t;

typedef struct {
  av_profile_doc_t doc;   /* as read; the tables borrow its times */
  int n;
  profile_table_t *t;
  av__cores_t cores;      /* the optional co-residency curves (profile_coresidency.h) */
  av__merge_t merge;      /* the optional merge curves and empty-CTA time (profile_merge.h) */
  av__start_t start;      /* the first-wave start cost, when measured (profile_start.h) */
} profile_state_t;

static void profile_destroy(void *state) {
  profile_state_t *s = state;
  if (!s) return;
  for (int i = 0; i < s->n; i++) {
    gsl_interp2d_free(s->t[i].interp);
    free(s->t[i].x);
  }
  free(s->t);
  av__cores_free(&s->cores);
  av__merge_free(&s->merge);
  av__start_free(&s->start);
  av_profile_doc_free(&s->doc);
  free(s);
}

/* Table t from grid g (whose times it borrows): log axes and the GSL interpolator. */
static int table_setup(profile_table_t *t, const av_profile_grid_t *g, const char *source,
                       const char *path, av_error_t *err) {
  const size_t nx = g->nx, ny = g->ny;
  t->tile = g->tile;
  t->head_dim = g->head_dim;
  t->dtype = g->dtype;
  t->nx = nx;
  t->ny = ny;
  /* one allocation: x[nx], y[ny], n_lin[ny] */
  t->x = malloc(sizeof(double) * (nx + 2 * ny));
  if (!t->x) return av_error_set(err, AV_ERR_NOMEM, source, path, "out of memory");
  t->y = t->x + nx;
  t->n_lin = t->y + ny;
  t->z = g->time_us;
  for (size_t i = 0; i < nx; i++) t->x[i] = log((double)g->n_q[i]);
  for (size_t j = 0; j < ny; j++) {
    t->y[j] = log((double)g->n_kv[j]);
    t->n_lin[j] = (double)g->n_kv[j];
  }
  t->interp = gsl_interp2d_alloc(gsl_interp2d_bilinear, nx, ny);
  if (!t->interp || gsl_interp2d_init(t->interp, t->x, t->y, t->z, nx, ny))
    return av_error_set(err, AV_ERR_INTERNAL, source, path,
                        "GSL could not set up the interpolation");
  return AV_OK;
}

static int same_key(const profile_table_t *a, const profile_table_t *b) {
  return a->tile.kind == b->tile.kind && a->tile.m_rows == b->tile.m_rows &&
         a->tile.n_tokens == b->tile.n_tokens && a->tile.warps == b->tile.warps &&
         a->head_dim == b->head_dim && a->dtype == b->dtype;
}

static const profile_table_t *find_table(const profile_state_t *s, const av_tile_t *tile,
                                         int head_dim, av_dtype_t dtype) {
  profile_table_t key = {.tile = *tile, .head_dim = head_dim, .dtype = dtype};
  for (int i = 0; i < s->n; i++)
    if (same_key(&s->t[i], &key)) return &s->t[i];
  return NULL;
}

/* The document as read, checked against the experiment's GPU, becomes the model's state:
 * tables with their interpolation, curves, merge and start measurements. */
static int profile_setup(av_profile_doc_t *d, const av_cost_env_t *env, int check_gpu,
                         const char *source, profile_state_t *s, av_error_t *err) {
  /* A profile measured on one GPU is never applied to another. */
  if (check_gpu && strcmp(d->gpu, env->gpu->name) != 0)
    return av_error_set(err, AV_ERR_MISMATCH, source, "gpu",
                        "profile was measured on '%s' but the experiment's GPU is '%s'; "
                        "profile this GPU or set check_gpu=false", d->gpu, env->gpu->name);
  s->t = calloc((size_t)d->n + 1, sizeof *s->t);
  if (!s->t) return av_error_set(err, AV_ERR_NOMEM, source, "variants", "out of memory");
  for (int i = 0; i < d->n; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "variants", (size_t)i);
    int rc = table_setup(&s->t[s->n++], &d->t[i], source, where, err);
    if (rc) return rc;
  }
  int rc = av__cores_setup(&s->cores, &d->cores, source, err);
  if (!rc) rc = av__merge_setup(&s->merge, &d->merge, source, err);
  if (!rc) rc = av__start_setup(&s->start, &d->start, source, err);
  return rc;
}

/* Every compiled variant the batch can use must have a table: a scheduler may pick any. Wide
 * tiles (AV_TILE_WIDE_ROWS) are offered only on request, so profiles measured before they
 * existed stay usable; a plan naming one such profile lacks is estimated from the nearest
 * table (nearest_table) until `anvil profile` measures it. */
static int check_coverage(const av_jctx_t *c, const av_cost_env_t *env,
                          const profile_state_t *s) {
  const av_heads_t *h = env->heads;
  int found = 0;
  for (int i = 0; i < s->n; i++)
    found |= s->t[i].head_dim == h->head_dim && s->t[i].dtype == h->dtype;
  if (!found)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "variants",
                        "no variant for head_dim %d, %s", h->head_dim, av_dtype_name(h->dtype));
  for (int i = 0; env->variants && i < env->variants->n; i++) {
    const av_variant_t *v = &env->variants->v[i];
    if (v->tile.kind == AV_KERNEL_MERGE || v->head_dim != h->head_dim ||
        v->dtype != h->dtype || v->sm_arch != env->gpu->sm_arch ||
        v->tile.m_rows >= AV_TILE_WIDE_ROWS)
      continue;
    if (!find_table(s, &v->tile, h->head_dim, h->dtype))
      return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "variants",
                          "missing variant %s m=%d n=%d warps=%d (head_dim %d, %s), which "
                          "the kernels compile; profile it",
                          av_kernel_kind_name(v->tile.kind), v->tile.m_rows, v->tile.n_tokens,
                          v->tile.warps, h->head_dim, av_dtype_name(h->dtype));
  }
  return AV_OK;
}

static int start_setup(profile_state_t *s, const av_cost_env_t *env, const char *path,
                       av_error_t *err);

/* The profile's "path", else the GPU's own under the data directory. */
static void profile_data_file(const av_params_t *p, const av_gpu_t *gpu, char *path, size_t n) {
  const char *given = av_params_string(p, "path");
  if (given && given[0])
    snprintf(path, n, "%s", given);
  else
    snprintf(path, n, "%s/profiles/%s.json", av_data_dir(), gpu->name);
}

static int profile_create(const av_params_t *p, const av_cost_env_t *env, void **state,
                          av_error_t *err) {
  char path[1024];
  profile_data_file(p, env->gpu, path, sizeof path);
  json_t *root = NULL;
  int rc = av_json_load_file(path, &root, err);
  if (rc) return rc;
  profile_state_t *s = av__cost_alloc_state(sizeof *s, "profile", err);
  if (!s) {
    json_decref(root);
    return AV_ERR_NOMEM;
  }
  av_jctx_t c = {.source = path, .err = err};
  rc = av_profile_read(&c, root, &s->doc);
  if (!rc) rc = profile_setup(&s->doc, env, av_params_bool(p, "check_gpu"), path, s, err);
  if (!rc) rc = check_coverage(&c, env, s);
  json_decref(root);
  if (!rc) rc = start_setup(s, env, path, err);
  if (rc) {
    profile_destroy(s);
    return rc;
  }
  *state = s;
  return AV_OK;
}

/* Without a variants table a scheduler may name a tile the profile lacks: use the profiled
 * variant of the same kind nearest in (m, n) (then any kind), so estimates stay defined. */
static const profile_table_t *nearest_table(const profile_state_t *s, const av_tile_t *tile,
                                            const av_heads_t *h) {
  const profile_table_t *best = NULL;
  double best_d = 0;
  for (int i = 0; i < s->n; i++) {
    const profile_table_t *t = &s->t[i];
    if (t->head_dim != h->head_dim || t->dtype != h->dtype) continue;
    double d = fabs(log((double)t->tile.m_rows / fmax(tile->m_rows, 1))) +
               fabs(log((double)t->tile.n_tokens / fmax(tile->n_tokens, 1))) +
               (t->tile.kind != tile->kind ? 100.0 : 0.0);
    if (!best || d < best_d) {
      best = t;
      best_d = d;
    }
  }
  return best ? best : &s->t[0];
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* C_est(n_q, n) for one table: bilinear in (log n_q, log n) inside, the policy above outside. */
static double table_time(const profile_table_t *t, double rows, double kv) {
  double x = clampd(log(fmax(rows, 1.0)), t->x[0], t->x[t->nx - 1]);
  double n_last = t->n_lin[t->ny - 1];
  if (kv <= n_last) {
    double y = clampd(log(fmax(kv, 1.0)), t->y[0], t->y[t->ny - 1]);
    return gsl_interp2d_eval(t->interp, t->x, t->y, t->z, x, y, NULL, NULL);
  }
  double n_prev = t->n_lin[t->ny - 2];
  double t_last = gsl_interp2d_eval(t->interp, t->x, t->y, t->z, x, t->y[t->ny - 1], NULL, NULL);
  double t_prev = gsl_interp2d_eval(t->interp, t->x, t->y, t->z, x, t->y[t->ny - 2], NULL, NULL);
  return t_last + (kv - n_last) * (t_last - t_prev) / (n_last - n_prev);
}

/* --- the first-wave start cost (costmodels/profile_start.h) ---------------------------- */
/* KV tokens between which the lone CTA's streaming bound is read: those of sim/engine.c's
 * item_calibrate, so the derivation charges exactly what the engine will. */
#define CAL_N1 8192
#define CAL_N2 16384

static void start_lone(const void *ctx, const av_profile_start_wave_t *v, int32_t rows, int64_t kv,
                       double *time_us, double *cap) {
  const profile_state_t *s = ctx;
  const av_heads_t h = {.hq = 1, .hkv = 1, .head_dim = v->head_dim, .dtype = v->dtype};
  const profile_table_t *t = find_table(s, &v->tile, v->head_dim, v->dtype);
  if (!t) t = nearest_table(s, &v->tile, &h);
  const double token_bytes = 2.0 * v->head_dim * av_dtype_bytes(v->dtype);
  const double dt = table_time(t, rows, CAL_N2) - table_time(t, rows, CAL_N1);
  *time_us = table_time(t, rows, (double)kv);
  *cap = dt > 0 ? (CAL_N2 - CAL_N1) * token_bytes / dt : 0;
}

/* Where the profile's `<base>.details.json` is, for profile file `path`. */
static void details_path(const char *path, char *out, size_t n) {
  size_t len = strlen(path);
  if (len >= 5 && strcmp(path + len - 5, ".json") == 0) len -= 5;
  snprintf(out, n, "%.*s.details.json", (int)len, path);
}

/* The start cost from the profile's "start" key, else (profiles measured without the start
 * step) from the queue step in the details file next to it, else none; then the co-residency
 * curves discounted by it (profile_start.h). A details file that cannot be read is no start
 * cost; one whose queue key is malformed is an error naming it. */
static int start_setup(profile_state_t *s, const av_cost_env_t *env, const char *path,
                       av_error_t *err) {
  int rc = AV_OK;
  if (s->start.n == 0) {
    char dpath[1100];
    details_path(path, dpath, sizeof dpath);
    json_t *d = NULL;
    av_error_t ignore;
    av_error_clear(&ignore);
    if (access(dpath, R_OK) == 0 && av_json_load_file(dpath, &d, &ignore) == AV_OK) {
      av_jctx_t c = {.source = dpath, .err = err};
      av_profile_starts_t q;
      rc = av_profile_read_queue(&c, d, &q);
      av__start_free(&s->start);
      if (!rc) rc = av__start_setup(&s->start, &q, dpath, err);
      av_profile_starts_free(&q);
      json_decref(d);
    }
  }
  if (rc || s->start.n == 0) return rc;
  const av__start_env_t se = {.hbm_bytes_per_us = av_gpu_hbm_bw_GBps(env->gpu) * 1e3,
                              .sm_count = env->gpu->sm_count > 0 ? env->gpu->sm_count : 1,
                              .cores = &s->cores, .lone = start_lone, .ctx = s};
  av__start_derive(&s->start, &se);
  if (av__start_discount(&s->start, &s->cores, se.sm_count))
    return av_error_set(err, AV_ERR_INTERNAL, path, "coresidency",
                        "GSL could not set up the interpolation");
  return AV_OK;
}

/* The queries that are not an attention item: a merge CTA (n_q = partial states per row,
 * rows = its rows) and a persistent CTA with nothing to do (n_q = 0, no KV). time_us 0 when
 * the profile did not measure them: the engine then falls back on the spec. */
static void merge_estimate(const profile_state_t *s, const av_heads_t *h,
                           const av_cost_query_t *q, av_item_cost_t *out) {
  memset(out, 0, sizeof *out);
  if (q->tile.kind != AV_KERNEL_MERGE) {
    out->time_us = s->merge.empty_cta_us;
    return;
  }
  const double d = h->head_dim, rows = q->rows > 0 ? q->rows : 1;
  out->time_us =
      av__merge_time(&s->merge, h->head_dim, h->dtype, (double)q->n_q, q->cold_frac);
  out->hbm_bytes = rows * ((double)q->n_q * (d + 1) * 4 + d * av_dtype_bytes(h->dtype));
}

static void profile_estimate(const void *state, const av_cost_env_t *env,
                             const av_cost_query_t *q, av_item_cost_t *out) {
  const profile_state_t *s = state;
  const av_heads_t *h = env->heads;
  if (q->tile.kind == AV_KERNEL_MERGE || (q->n_q == 0 && q->kv_tokens == 0)) {
    merge_estimate(s, h, q, out);
    return;
  }
  const profile_table_t *t = find_table(s, &q->tile, h->head_dim, h->dtype);
  if (!t) t = nearest_table(s, &q->tile, h);
  av__cost_item_traffic(h, q, out);
  out->time_us = table_time(t, (double)q->rows, (double)q->kv_tokens);
  if (q->coresident > 0)
    out->slowdown = av__cores_slowdown(&s->cores, &q->tile, h->head_dim, h->dtype, q->coresident);
  if (q->starting > 0)
    out->start_us =
        av__start_cost(&s->start, &q->tile, h->head_dim, h->dtype, q->starting, q->rows);
}

const av_costmodel_ops_t av_cost_profile = {
    .name = "profile",
    .description = "FlashForge 5.2: measured C(n_q, n) per variant, GSL bilinear in log space",
    .params = profile_params,
    .create = profile_create,
    .destroy = profile_destroy,
    .estimate = profile_estimate,
    .flags = AV_COST_MEASURED_CTAS | AV_COST_CORESIDENCY | AV_COST_START | AV_COST_MERGE,
    .data_file = profile_data_file,
};
