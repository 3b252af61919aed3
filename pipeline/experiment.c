/* Experiment file loading (schema in docs/experiments.md). Everything is validated and every
 * batch built here, before `anvil run` plans anything, so a bad file fails fast, with the key
 * path of the mistake, and never leaves partial results behind. */
#include "pipeline/experiment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"

static const char *const k_top_keys[] = {"name",       "description", "gpu",      "gpus",
                                         "sim",        "heads",       "head_dim", "dtype",
                                         "cost_model", "workloads",   "schedulers", NULL};
static const char *const k_dtype_names[] = {"fp16", "bf16", NULL};

static int fail_code(const av_jctx_t *c) {
  return c->err && c->err->code ? c->err->code : AV_ERR_SCHEMA;
}

/* --- small pieces ------------------------------------------------------------------ */

static int parse_name(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  const char *name;
  if (av_json_get_string(c, root, "", "name", 1, NULL, &name)) return fail_code(c);
  size_t n = strlen(name);
  int ok = n > 0 && n < sizeof e->name && name[0] != '.';
  for (size_t i = 0; ok && i < n; i++) {
    char ch = name[i];
    ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '-' || ch == '_' || ch == '.';
  }
  if (!ok)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "name",
                        "'%s' is not a valid experiment name; expected 1-127 letters, digits, "
                        "'-', '_' or '.' (it names the output directory out/<name>)",
                        name);
  snprintf(e->name, sizeof e->name, "%s", name);
  return AV_OK;
}

static int parse_sim(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  const char *sim;
  if (av_json_get_string(c, root, "", "sim", 0, "engine", &sim)) return fail_code(c);
  return av_sim_model_lookup(sim, c->source, "sim", &e->sim, c->err);
}

static void resolve_path(char *out, size_t size, const char *exp_path, const char *rel);

/* Validates a GPU name against the specs on disk, then loads it. A path (a '/' or ".json")
 * names the user's own spec file, relative to the experiment file's directory. */
static int load_gpu(const av_jctx_t *c, const json_t *v, const char *path, av_gpu_t *out) {
  if (!json_is_string(v))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, path,
                        "expected a GPU name or spec file path (a string), got %s",
                        av_json_type_name(v));
  const char *name = json_string_value(v);
  if (av_gpu_is_path(name)) {
    char file[1024];
    resolve_path(file, sizeof file, c->source, name);
    FILE *f = fopen(file, "rb");
    if (!f)
      return av_error_set(c->err, AV_ERR_IO, c->source, path,
                          "GPU spec file %s cannot be opened (a value with '/' or ending in "
                          "\".json\" is a path, relative to the experiment file)",
                          file);
    fclose(f);
    return av_gpu_load_file(file, out, c->err);
  }
  char **names = NULL;
  int n = 0, found = 0;
  int rc = av_gpu_list(NULL, &names, &n, c->err);
  if (rc) return rc;
  for (int i = 0; i < n; i++) found |= strcmp(names[i], name) == 0;
  if (!found) {
    char list[1024];
    av_names_join(list, sizeof list, (const char *const *)names, (size_t)n);
    rc = av_error_set(c->err, AV_ERR_NAME, c->source, path,
                      "unknown GPU '%s'; expected one of: %s, or a spec file path", name,
                      n ? list : "(none found)");
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  if (rc) return rc;
  return av_gpu_load(name, NULL, out, c->err);
}

static int parse_gpus(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  const json_t *one = json_object_get(root, "gpu");
  const json_t *many = json_object_get(root, "gpus");
  if (one && many)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "gpus",
                        "give either \"gpu\" or \"gpus\", not both");
  if (many) {
    if (av_json_expect_array(c, many, "gpus")) return fail_code(c);
    if (json_array_size(many) == 0)
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "gpus",
                          "expected a non-empty array of GPU names");
  }
  e->n_gpus = many ? (int)json_array_size(many) : 1;
  e->gpus = calloc((size_t)e->n_gpus, sizeof *e->gpus);
  if (!e->gpus) return av_error_set(c->err, AV_ERR_NOMEM, c->source, "gpus", "out of memory");
  if (!many) {
    json_t *def = json_string("H200-SXM");
    int rc = load_gpu(c, one ? one : def, "gpu", &e->gpus[0]);
    json_decref(def);
    return rc;
  }
  for (int i = 0; i < e->n_gpus; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "gpus", (size_t)i);
    for (int j = 0; j < i; j++)
      if (json_equal(json_array_get(many, (size_t)j), json_array_get(many, (size_t)i)))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "GPU '%s' is listed twice",
                            json_string_value(json_array_get(many, (size_t)i)));
    int rc = load_gpu(c, json_array_get(many, (size_t)i), where, &e->gpus[i]);
    if (rc) return rc;
  }
  return AV_OK;
}

static int parse_one_heads(const av_jctx_t *c, const json_t *v, const char *where,
                           av_heads_t *h) {
  if (!json_is_array(v) || json_array_size(v) != 2)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected [query_heads, kv_heads] such as [32, 8], got %s",
                        json_is_array(v) ? "an array of another length" : av_json_type_name(v));
  int64_t q, kv;
  char p0[96], p1[96];
  av_jpath_index(p0, sizeof p0, where, 0);
  av_jpath_index(p1, sizeof p1, where, 1);
  if (av_json_as_int(c, json_array_get(v, 0), p0, 1, 1024, &q) ||
      av_json_as_int(c, json_array_get(v, 1), p1, 1, 1024, &kv))
    return fail_code(c);
  if (q % kv != 0)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "%lld query heads are not a multiple of %lld KV heads (GQA needs "
                        "query_heads = group x kv_heads)",
                        (long long)q, (long long)kv);
  h->hq = (int)q;
  h->hkv = (int)kv;
  return AV_OK;
}

/* "heads", "head_dim" and "dtype": the head configurations every batch is crossed with. */
static int parse_heads(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  int64_t d;
  const char *dtype;
  if (av_json_get_int(c, root, "", "head_dim", 0, 128, INT32_MIN, INT32_MAX, &d))
    return fail_code(c);
  if (d != 64 && d != 128 && d != 256)
    return av_error_set(c->err, AV_ERR_UNSUPPORTED, c->source, "head_dim",
                        "unsupported head dim %lld; expected one of: 64, 128, 256",
                        (long long)d);
  if (av_json_get_string(c, root, "", "dtype", 0, "fp16", &dtype)) return fail_code(c);
  int dt = -1;
  for (int i = 0; k_dtype_names[i]; i++)
    if (strcmp(dtype, k_dtype_names[i]) == 0) dt = i;
  if (dt < 0)
    return av_error_set(c->err, AV_ERR_NAME, c->source, "dtype",
                        "unknown dtype '%s'; expected one of: fp16, bf16", dtype);
  const json_t *hv = json_object_get(root, "heads");
  if (hv && !json_is_array(hv))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "heads",
                        "expected a list of [query_heads, kv_heads] pairs such as [[32, 8]], "
                        "got %s",
                        av_json_type_name(hv));
  if (hv && json_array_size(hv) == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "heads",
                        "expected a non-empty array of [query_heads, kv_heads] pairs");
  e->n_heads = hv ? (int)json_array_size(hv) : 1;
  e->heads = calloc((size_t)e->n_heads, sizeof *e->heads);
  if (!e->heads) return av_error_set(c->err, AV_ERR_NOMEM, c->source, "heads", "out of memory");
  for (int i = 0; i < e->n_heads; i++) {
    av_heads_t *h = &e->heads[i];
    h->hq = 32;
    h->hkv = 8;
    h->head_dim = (int)d;
    h->dtype = (av_dtype_t)dt;
    if (!hv) break;
    char where[64];
    av_jpath_index(where, sizeof where, "heads", (size_t)i);
    if (parse_one_heads(c, json_array_get(hv, (size_t)i), where, h)) return fail_code(c);
  }
  return AV_OK;
}

static int parse_cost_model(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  static const char *const keys[] = {"name", "params", NULL};
  const json_t *v = json_object_get(root, "cost_model");
  const char *name = "roofline";
  const json_t *params = NULL;
  if (v && json_is_string(v)) {
    name = json_string_value(v);
  } else if (v) {
    if (!json_is_object(v))
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "cost_model",
                          "expected a cost model name or {\"name\": ..., \"params\": {...}}, "
                          "got %s",
                          av_json_type_name(v));
    if (av_json_check_keys(c, v, "cost_model", keys) ||
        av_json_get_string(c, v, "cost_model", "name", 1, NULL, &name))
      return fail_code(c);
    params = json_object_get(v, "params");
  }
  const char *where = v && json_is_object(v) ? "cost_model.name" : "cost_model";
  if (av_costmodel_lookup(name, c->source, where, &e->cost_ops, c->err)) return fail_code(c);
  return av_params_from_json(&e->cost_params, e->cost_ops->params, params, c,
                             "cost_model.params");
}

static int parse_one_sched(const av_jctx_t *c, const json_t *v, const char *where,
                           av_exp_sched_t *s) {
  static const char *const keys[] = {"name", "label", "params", NULL};
  const char *name, *label = NULL;
  const json_t *params = NULL;
  char npath[128], ppath[128];
  av_jpath_key(npath, sizeof npath, where, "name");
  av_jpath_key(ppath, sizeof ppath, where, "params");
  if (json_is_string(v)) {
    name = json_string_value(v);
    snprintf(npath, sizeof npath, "%s", where);
  } else if (json_is_object(v)) {
    if (av_json_check_keys(c, v, where, keys) ||
        av_json_get_string(c, v, where, "name", 1, NULL, &name) ||
        av_json_get_string(c, v, where, "label", 0, NULL, &label))
      return fail_code(c);
    params = json_object_get(v, "params");
  } else {
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected a scheduler name or {\"name\": ..., \"label\": ..., "
                        "\"params\": {...}}, got %s",
                        av_json_type_name(v));
  }
  if (av_scheduler_lookup(name, c->source, npath, &s->ops, c->err)) return fail_code(c);
  if (label && (!label[0] || strlen(label) >= sizeof s->label)) {
    char lpath[128];
    av_jpath_key(lpath, sizeof lpath, where, "label");
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, lpath,
                        "expected a label of 1 to %zu characters", sizeof s->label - 1);
  }
  snprintf(s->label, sizeof s->label, "%s", label ? label : s->ops->name);
  return av_params_from_json(&s->params, s->ops->params, params, c, ppath);
}

static int parse_schedulers(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  const json_t *v = json_object_get(root, "schedulers");
  if (!v)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "schedulers",
                        "missing required key 'schedulers' (a list such as "
                        "[{\"name\": \"query_centric\"}])");
  if (av_json_expect_array(c, v, "schedulers")) return fail_code(c);
  if (json_array_size(v) == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "schedulers",
                        "expected at least one scheduler");
  e->n_scheds = (int)json_array_size(v);
  e->scheds = calloc((size_t)e->n_scheds, sizeof *e->scheds);
  if (!e->scheds)
    return av_error_set(c->err, AV_ERR_NOMEM, c->source, "schedulers", "out of memory");
  for (int i = 0; i < e->n_scheds; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "schedulers", (size_t)i);
    if (parse_one_sched(c, json_array_get(v, (size_t)i), where, &e->scheds[i]))
      return fail_code(c);
    for (int j = 0; j < i; j++)
      if (strcmp(e->scheds[j].label, e->scheds[i].label) == 0)
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "label '%s' is used by schedulers[%d] too; give each entry its "
                            "own \"label\"",
                            e->scheds[i].label, j);
  }
  return AV_OK;
}

/* --- workloads ----------------------------------------------------------------------- */

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

/* Opens a collection file relative to the experiment file's directory. */
static void resolve_path(char *out, size_t size, const char *exp_path, const char *rel) {
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
      av_json_get_int_array(c, spec, where, "ids", 0, 0, 0, INT32_MAX, &ids, &n_ids))
    return fail_code(c);
  char file[1024], pfx[64];
  resolve_path(file, sizeof file, c->source, rel);
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
  if (rc == AV_OK && av_json_get_int(&fc, root, "", "kv_block", 0, 0, 1, 1 << 20, &block))
    rc = fail_code(&fc);
  size_t n_trees = trees ? json_array_size(trees) : 0;
  int64_t *tree_ids = calloc(n_trees ? n_trees : 1, sizeof *tree_ids);
  if (rc == AV_OK && !tree_ids) rc = av_error_set(c->err, AV_ERR_NOMEM, file, NULL, "out of memory");
  for (size_t k = 0; rc == AV_OK && k < n_trees; k++) {
    char tp[64];
    av_jpath_index(tp, sizeof tp, "trees", k);
    const json_t *t = json_array_get(trees, k);
    if (av_json_expect_object(&fc, t, tp) || av_json_check_keys(&fc, t, tp, tree_keys) ||
        av_json_get_int(&fc, t, tp, "id", 1, 0, 0, INT32_MAX, &tree_ids[k]))
      rc = fail_code(&fc);
  }
  /* Every requested id must exist, once. */
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

static int parse_workloads(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
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
      const json_t *nm = json_object_get(spec, "name");
      char name[128];
      if (json_is_string(nm))
        snprintf(name, sizeof name, "%s", json_string_value(nm));
      else
        snprintf(name, sizeof name, "%s-%d",
                 json_is_string(kind) ? json_string_value(kind) : "workload", i);
      rc = build_spec(c, c, e, &cap, spec, where, name, i);
    }
    if (rc) return rc;
  }
  return AV_OK;
}

/* --- entry points ------------------------------------------------------------------- */

int av_experiment_from_json(const json_t *root, const char *path, av_experiment_t **out,
                            av_error_t *err) {
  *out = NULL;
  av_experiment_t *e = calloc(1, sizeof *e);
  if (!e) return av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  snprintf(e->path, sizeof e->path, "%s", path);
  av_jctx_t c = {.source = e->path, .err = err};
  /* Order: structure and names first (cheap, most common mistakes), batches last. */
  int rc = av_json_expect_object(&c, root, "");
  if (!rc) rc = av_json_check_keys(&c, root, "", k_top_keys);
  if (!rc) {
    const char *desc;
    rc = av_json_get_string(&c, root, "", "description", 0, NULL, &desc);
  }
  if (!rc) rc = parse_name(&c, root, e);
  if (!rc) rc = parse_sim(&c, root, e);
  if (!rc) rc = parse_gpus(&c, root, e);
  if (!rc) rc = parse_heads(&c, root, e);
  if (!rc) rc = parse_cost_model(&c, root, e);
  if (!rc) rc = parse_schedulers(&c, root, e);
  if (!rc) rc = parse_workloads(&c, root, e);
  if (rc) {
    av_experiment_destroy(e);
    return rc;
  }
  *out = e;
  return AV_OK;
}

int av_experiment_load(const char *path, av_experiment_t **out, av_error_t *err) {
  json_t *root = NULL;
  *out = NULL;
  int rc = av_json_load_file(path, &root, err);
  if (rc) return rc;
  rc = av_experiment_from_json(root, path, out, err);
  json_decref(root);
  return rc;
}

void av_experiment_destroy(av_experiment_t *e) {
  if (!e) return;
  for (int i = 0; i < e->n_batches; i++) av_workload_destroy(e->batches[i].w);
  free(e->batches);
  free(e->scheds);
  free(e->heads);
  free(e->gpus);
  free(e);
}
