/* The "workloads" of an experiment file: workload specs (once, or once per point of their
 * sweep) and published collections, each built into batches at every head configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "pipeline/experiment_internal.h"
#include "pipeline/sweep.h"

static int fail_code(const av_jctx_t *c) {
  return c->err && c->err->code ? c->err->code : AV_ERR_SCHEMA;
}

static int add_batch(const av_jctx_t *c, av_experiment_t *e, int *cap, const char *name,
                     int spec, int heads, av_workload_t *w) {
  if (e->n_batches == *cap) {
    int ncap = *cap ? 2 * *cap : 16;
    av_exp_batch_t *nb = realloc(e->batches, (size_t)ncap * sizeof *nb);
    if (!nb) {
      av_workload_destroy(w);
      return av_error_set(c->err, AV_ERR_NOMEM, c->source, "workloads", "out of memory");
    }
    e->batches = nb;
    *cap = ncap;
  }
  av_exp_batch_t *b = &e->batches[e->n_batches++];
  memset(b, 0, sizeof *b);
  snprintf(b->name, sizeof b->name, "%s", name);
  b->spec_index = spec;
  b->heads_index = heads;
  b->w = w;
  snprintf(w->name, sizeof w->name, "%s", name);
  return AV_OK;
}

/* Builds `spec` once per head configuration (once when the spec names its own heads). */
static int build_spec(const av_jctx_t *c, const av_jctx_t *spec_ctx, av_experiment_t *e,
                      int *cap, const json_t *spec, const char *spec_path, const char *name,
                      int spec_index) {
  int own_heads = json_object_get(spec, "heads") != NULL;
  for (int j = 0; j < (own_heads ? 1 : e->n_heads); j++) {
    av_workload_t *w = av_workload_from_json(spec, &e->heads[j], spec_ctx, spec_path);
    if (!w) return fail_code(spec_ctx);
    if (add_batch(c, e, cap, name, spec_index, own_heads ? -1 : j, w)) return fail_code(c);
  }
  return AV_OK;
}

void av__experiment_resolve_path(char *out, size_t size, const char *exp_path, const char *rel) {
  const char *slash = strrchr(exp_path, '/');
  if (rel[0] == '/' || !slash)
    snprintf(out, size, "%s", rel);
  else
    snprintf(out, size, "%.*s/%s", (int)(slash - exp_path), exp_path, rel);
}

/* Name prefix of a collection's batches: the file stem up to its first '_' ("pat"). */
static void collection_prefix(char *out, size_t size, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strcspn(base, "_.");
  snprintf(out, size, "%.*s", (int)(n ? n : strlen(base)), base);
}

/* Every id a collection spec asks for (at ids_path) must be a tree of the file, once. */
static int check_ids(const av_jctx_t *c, const char *ids_path, const int64_t *ids,
                     size_t n_ids, const int64_t *tree_ids, size_t n_trees, const char *file) {
  int rc = AV_OK;
  for (size_t q = 0; rc == AV_OK && q < n_ids; q++) {
    char ip[160];
    av_jpath_index(ip, sizeof ip, ids_path, q);
    int hit = 0;
    for (size_t k = 0; k < n_trees; k++) hit |= tree_ids[k] == ids[q];
    for (size_t r = 0; r < q; r++)
      if (ids[r] == ids[q])
        rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, ip, "tree id %lld is listed twice",
                          (long long)ids[q]);
    if (rc == AV_OK && !hit)
      rc = av_error_set(c->err, AV_ERR_RANGE, c->source, ip,
                        "no tree with id %lld in %s (it has %zu trees)", (long long)ids[q],
                        file, n_trees);
  }
  return rc;
}

/* {"kind": "collection", "path": ..., "ids": [...], "prefix": ...}: the trees of a
 * published collection (the PAT/FastTree files in experiments/workloads/), each a levels
 * batch named <prefix>-<id>. */
static int expand_collection(const av_jctx_t *c, av_experiment_t *e, int *cap,
                             const json_t *spec, const char *where, int spec_index) {
  static const char *const keys[] = {"kind", "path", "ids", "prefix", NULL};
  static const char *const file_keys[] = {"source", "heads", "head_dim", "dtype",
                                          "kv_block", "trees", NULL};
  static const char *const tree_keys[] = {"id", "B", "L", NULL};
  const char *rel, *prefix;
  int64_t *ids = NULL;
  size_t n_ids = 0;
  char ids_path[128];
  av_jpath_key(ids_path, sizeof ids_path, where, "ids");
  if (av_json_check_keys(c, spec, where, keys) ||
      av_json_get_string(c, spec, where, "path", 1, NULL, &rel) ||
      av_json_get_string(c, spec, where, "prefix", 0, NULL, &prefix) ||
      av_json_get_int_array(c, spec, (av_json_field_t){where, "ids", 0}, 0, 0, INT32_MAX, &ids,
                            &n_ids))
    return fail_code(c);
  char file[1024], pfx[64];
  av__experiment_resolve_path(file, sizeof file, c->source, rel);
  snprintf(pfx, sizeof pfx, "%s", prefix ? prefix : "");
  if (!prefix) collection_prefix(pfx, sizeof pfx, rel);
  json_t *root = NULL;
  av_jctx_t fc = {.source = file, .err = c->err};
  char rel_path[128];
  av_jpath_key(rel_path, sizeof rel_path, where, "path");
  av_error_t lerr;
  av_error_clear(&lerr);
  int rc = av_json_load_file(file, &root, &lerr);
  if (rc == AV_ERR_IO) /* say which key named the missing file */
    av_error_set(c->err, rc, c->source, rel_path, "collection file %s: %s", file, lerr.message);
  else if (rc && c->err)
    *c->err = lerr;
  json_t *trees = NULL;
  if (rc == AV_OK &&
      (av_json_expect_object(&fc, root, "") || av_json_check_keys(&fc, root, "", file_keys)))
    rc = fail_code(&fc);
  if (rc == AV_OK) {
    trees = json_object_get(root, "trees");
    if (!trees)
      rc = av_error_set(c->err, AV_ERR_SCHEMA, file, "trees", "missing required key 'trees'");
    else if (av_json_expect_array(&fc, trees, "trees"))
      rc = fail_code(&fc);
  }
  int64_t block = 0;
  if (rc == AV_OK &&
      av_json_get_int(&fc, root, (av_json_field_t){"", "kv_block", 0}, 0, 1, 1 << 20, &block))
    rc = fail_code(&fc);
  size_t n_trees = trees ? json_array_size(trees) : 0;
  int64_t *tree_ids = calloc(n_trees ? n_trees : 1, sizeof *tree_ids);
  if (rc == AV_OK && !tree_ids) rc = av_error_set(c->err, AV_ERR_NOMEM, file, NULL, "out of memory");
  for (size_t k = 0; rc == AV_OK && k < n_trees; k++) {
    char tp[64];
    av_jpath_index(tp, sizeof tp, "trees", k);
    const json_t *t = json_array_get(trees, k);
    if (av_json_expect_object(&fc, t, tp) || av_json_check_keys(&fc, t, tp, tree_keys) ||
        av_json_get_int(&fc, t, (av_json_field_t){tp, "id", 1}, 0, 0, INT32_MAX, &tree_ids[k]))
      rc = fail_code(&fc);
  }
  if (rc == AV_OK) rc = check_ids(c, ids_path, ids, n_ids, tree_ids, n_trees, file);
  size_t n_sel = ids ? n_ids : n_trees;
  for (size_t q = 0; rc == AV_OK && q < n_sel; q++) {
    size_t k = 0;
    if (ids)
      while (tree_ids[k] != ids[q]) k++;
    else
      k = q;
    char tp[64], name[128];
    av_jpath_index(tp, sizeof tp, "trees", k);
    snprintf(name, sizeof name, "%s-%lld", pfx, (long long)tree_ids[k]);
    json_t *t = json_deep_copy(json_array_get(trees, k));
    json_object_del(t, "id");
    json_object_set_new(t, "kind", json_string("levels"));
    if (block) json_object_set_new(t, "block_size", json_integer(block));
    rc = build_spec(c, &fc, e, cap, t, tp, name, spec_index);
    json_decref(t);
  }
  free(tree_ids);
  free(ids);
  json_decref(root);
  return rc;
}

/* The points of a spec's sweep ("seeds" and "grid"), each built as the spec with the point's
 * values set, named <name>[k=v,...] (<name>[<index>] when that is too long). One copy of the
 * spec is rewritten point after point, so a 10^5-point sweep costs its batches, nothing more. */
static int expand_sweep(const av_jctx_t *c, av_experiment_t *e, int *cap, const json_t *spec,
                        const char *where, const char *name, int spec_index) {
  char gp[128], sp[128];
  av_jpath_key(gp, sizeof gp, where, "grid");
  av_jpath_key(sp, sizeof sp, where, "seeds");
  av_sweep_t sw;
  if (av_sweep_parse(c, json_object_get(spec, "grid"), gp, json_object_get(spec, "seeds"), sp,
                     &sw))
    return fail_code(c);
  for (int a = 0; a < sw.n_axes; a++)
    if (json_object_get(spec, sw.axes[a].key)) {
      char kp[256];
      av_jpath_key(kp, sizeof kp, where, sw.axes[a].key);
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, kp,
                          "'%s' is both set and swept; give it in one place",
                          sw.axes[a].key);
    }
  json_t *point = json_deep_copy(spec);
  if (!point) return av_error_set(c->err, AV_ERR_NOMEM, c->source, where, "out of memory");
  json_object_del(point, "grid");
  json_object_del(point, "seeds");
  int rc = AV_OK;
  for (int64_t p = 0; rc == AV_OK && p < sw.n_points; p++) {
    char label[160], full[300];
    av_sweep_label(&sw, p, label, sizeof label);
    snprintf(full, sizeof full, "%s[%s]", name, label);
    if (strlen(full) >= sizeof e->batches->name)
      snprintf(full, sizeof full, "%s[%lld]", name, (long long)p);
    if (av_sweep_apply(&sw, p, point))
      rc = av_error_set(c->err, AV_ERR_NOMEM, c->source, where, "out of memory");
    else if ((rc = build_spec(c, c, e, cap, point, where, full, spec_index)))
      av_sweep_blame(&sw, c->err, where, full);
  }
  json_decref(point);
  return rc;
}

/* A workload spec: one batch per head configuration, or per point of its sweep. */
static int expand_spec(const av_jctx_t *c, av_experiment_t *e, int *cap, const json_t *spec,
                       const char *where, int spec_index) {
  const json_t *nm = json_object_get(spec, "name"), *kind = json_object_get(spec, "kind");
  char name[128];
  if (json_is_string(nm))
    snprintf(name, sizeof name, "%s", json_string_value(nm));
  else
    snprintf(name, sizeof name, "%s-%d", json_is_string(kind) ? json_string_value(kind) : "workload",
             spec_index);
  if (json_object_get(spec, "grid") || json_object_get(spec, "seeds"))
    return expand_sweep(c, e, cap, spec, where, name, spec_index);
  return build_spec(c, c, e, cap, spec, where, name, spec_index);
}

int av__experiment_parse_workloads(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  const json_t *v = json_object_get(root, "workloads");
  if (!v)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "workloads",
                        "missing required key 'workloads' (a list of workload specs)");
  if (av_json_expect_array(c, v, "workloads")) return fail_code(c);
  if (json_array_size(v) == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "workloads",
                        "expected at least one workload");
  e->n_specs = (int)json_array_size(v);
  int cap = 0;
  for (int i = 0; i < e->n_specs; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "workloads", (size_t)i);
    const json_t *spec = json_array_get(v, (size_t)i);
    if (av_json_expect_object(c, spec, where)) return fail_code(c);
    const json_t *kind = json_object_get(spec, "kind");
    int rc;
    if (json_is_string(kind) && strcmp(json_string_value(kind), "collection") == 0) {
      rc = expand_collection(c, e, &cap, spec, where, i);
    } else {
      rc = expand_spec(c, e, &cap, spec, where, i);
    }
    if (rc) return rc;
  }
  return AV_OK;
}

