/* The profile document's reader (profile_format/profile_read.h): the top-level keys and each
 * variant's C(n_q, n) grid, then the optional co-residency, merge and start keys
 * (profile_read_curves.c, profile_read_start.c). */
#include "profile_format/profile_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A strictly increasing positive grid axis at `path`.key. Caller frees *vals. */
static int read_axis(const av_jctx_t *c, const json_t *obj, const char *path, const char *key,
                     int64_t **vals, size_t *n) {
  int rc = av_json_get_int_array(c, obj, (av_json_field_t){path, key, 1}, 0, 1, INT64_C(1) << 40,
                                 vals, n);
  if (rc) return rc;
  char where[256], item[256];
  av_jpath_key(where, sizeof where, path, key);
  if (*n < 2)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "a grid axis needs at least 2 points to interpolate, got %zu", *n);
  for (size_t i = 1; i < *n; i++)
    if ((*vals)[i] <= (*vals)[i - 1]) {
      av_jpath_index(item, sizeof item, where, i);
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                          "grid must be strictly increasing: %lld follows %lld",
                          (long long)(*vals)[i], (long long)(*vals)[i - 1]);
    }
  return AV_OK;
}

/* time_us: nq rows of n columns, each a positive number. Fills t->time_us. */
static int read_times(const av_jctx_t *c, const json_t *obj, const char *path,
                      av_profile_grid_t *t) {
  char where[256], row_path[256], item[256];
  av_jpath_key(where, sizeof where, path, "time_us");
  const json_t *rows = json_object_get(obj, "time_us");
  if (!rows)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "missing key 'time_us' (an array of %zu rows of %zu times)", t->nx,
                        t->ny);
  if (av_json_expect_array(c, rows, where)) return c->err ? c->err->code : AV_ERR_SCHEMA;
  if (json_array_size(rows) != t->nx)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, where,
                        "expected %zu rows (one per n_q), got %zu", t->nx,
                        json_array_size(rows));
  for (size_t i = 0; i < t->nx; i++) {
    const json_t *row = json_array_get(rows, i);
    av_jpath_index(row_path, sizeof row_path, where, i);
    if (av_json_expect_array(c, row, row_path)) return c->err ? c->err->code : AV_ERR_SCHEMA;
    if (json_array_size(row) != t->ny)
      return av_error_set(c->err, AV_ERR_MISMATCH, c->source, row_path,
                          "expected %zu times (one per n_kv), got %zu", t->ny,
                          json_array_size(row));
    for (size_t j = 0; j < t->ny; j++) {
      av_jpath_index(item, sizeof item, row_path, j);
      double v;
      int rc = av_json_as_double(c, json_array_get(row, j), item, 1e-6, 1e9, &v);
      if (rc) return rc;
      t->time_us[j * t->nx + i] = v;
    }
  }
  return AV_OK;
}

/* The tile keys are those of kernels/variants.json; the grid's KV axis is "n_kv" (FlashForge's
 * n) because "n" already names the tile's KV width. */
static const char *const variant_keys[] = {"kind", "m", "n", "warps", "head_dim", "dtype",
                                           "n_q", "n_kv", "time_us", NULL};

/* One entry of "variants": its key, grid and times. */
static int read_grid(const av_jctx_t *c, const json_t *obj, const char *path,
                     av_profile_grid_t *t) {
  int rc;
  if ((rc = av_json_expect_object(c, obj, path)) ||
      (rc = av_json_check_keys(c, obj, path, variant_keys)) ||
      (rc = av__profile_read_tile(c, obj, path, 1, &t->tile, &t->head_dim, &t->dtype)))
    return rc;
  int64_t *nq = NULL, *nk = NULL;
  size_t nx = 0, ny = 0;
  if ((rc = read_axis(c, obj, path, "n_q", &nq, &nx)) ||
      (rc = read_axis(c, obj, path, "n_kv", &nk, &ny))) {
    free(nq);
    free(nk);
    return rc;
  }
  t->nx = nx;
  t->ny = ny;
  t->n_q = malloc(sizeof(int64_t) * (nx + ny));
  t->time_us = malloc(sizeof(double) * nx * ny);
  if (t->n_q) {
    t->n_kv = t->n_q + nx;
    memcpy(t->n_q, nq, sizeof(int64_t) * nx);
    memcpy(t->n_kv, nk, sizeof(int64_t) * ny);
  }
  free(nq);
  free(nk);
  if (!t->n_q || !t->time_us)
    return av_error_set(c->err, AV_ERR_NOMEM, c->source, path, "out of memory");
  return read_times(c, obj, path, t);
}

static const char *const top_keys[] = {"gpu",   "variants", "command", "notes", "coresidency",
                                        "merge", "start",    "added", NULL};

static int read_grids(const av_jctx_t *c, const json_t *root, av_profile_doc_t *d) {
  int rc;
  const json_t *vs = json_object_get(root, "variants");
  if (!vs)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "variants",
                        "missing key 'variants' (an array of per-variant tables)");
  if ((rc = av_json_expect_array(c, vs, "variants"))) return rc;
  d->t = calloc(json_array_size(vs) + 1, sizeof *d->t);
  if (!d->t) return av_error_set(c->err, AV_ERR_NOMEM, c->source, "variants", "out of memory");
  for (size_t i = 0; i < json_array_size(vs); i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "variants", i);
    av_profile_grid_t *t = &d->t[d->n++];
    if ((rc = read_grid(c, json_array_get(vs, i), where, t))) return rc;
    for (int k = 0; k + 1 < d->n; k++)
      if (av__profile_same_variant(&d->t[k].tile, d->t[k].head_dim, d->t[k].dtype, &t->tile,
                                   t->head_dim, t->dtype))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "duplicate variant (same kind, m, n, warps, head_dim, dtype as "
                            "variants[%d])", k);
  }
  return AV_OK;
}

int av_profile_read(const av_jctx_t *c, const json_t *root, av_profile_doc_t *out) {
  memset(out, 0, sizeof *out);
  int rc;
  const char *gpu;
  if ((rc = av_json_expect_object(c, root, "")) ||
      (rc = av_json_check_keys(c, root, "", top_keys)) ||
      (rc = av_json_get_string(c, root, "", "gpu", 1, NULL, &gpu)))
    return rc;
  snprintf(out->gpu, sizeof out->gpu, "%s", gpu);
  if ((rc = read_grids(c, root, out))) return rc;
  /* Optional (profiles before the co-residency step lack it: the engine then models CTAs
   * sharing an SM as it did, each at its lone rate). */
  if ((rc = av__profile_read_cores(c, root, &out->cores))) return rc;
  /* Optional too: without it the engine charges merge CTAs and empty persistent CTAs with
   * the spec's figures. */
  if ((rc = av__profile_read_merge(c, root, &out->merge))) return rc;
  /* Optional (the start step); the cost model falls back on the queue step. */
  return av__profile_read_start(c, root, &out->start);
}

void av_profile_doc_free(av_profile_doc_t *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) {
    free(d->t[i].n_q);
    free(d->t[i].time_us);
  }
  free(d->t);
  free(d->cores.c);
  free(d->merge.c);
  av_profile_starts_free(&d->start);
  memset(d, 0, sizeof *d);
}
