/* Experiment file loading (schema in docs/experiments.md). Everything is validated and every
 * batch built here, before `anvil run` plans anything, so a bad file fails fast, with the key
 * path of the mistake, and never leaves partial results behind. */
#include "pipeline/experiment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "pipeline/experiment_internal.h"
#include "pipeline/sweep.h"
#include "selectors/selectors.h"

static const char *const k_top_keys[] = {"name",       "description", "gpu",      "gpus",
                                         "sim",        "heads",       "head_dim", "dtype",
                                         "cost_model", "workloads",   "schedulers", "limits",
                                         "launch",     "kv_copy",     NULL};
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
  if (av_sim_model_lookup(sim, c->source, "sim", &e->sim, c->err)) return fail_code(c);
  const char *launch;
  if (av_json_get_string(c, root, "", "launch", 0, "streams", &launch)) return fail_code(c);
  if (av_launch_model_from_name(launch, &e->launch))
    return av_error_set(c->err, AV_ERR_NAME, c->source, "launch",
                        "unknown launch model '%s'; expected \"streams\" (each launch issued by "
                        "the host on its stream), \"graph\" (the plan replayed as one CUDA "
                        "graph) or \"pdl\" (streams, the merge a programmatic dependent "
                        "launch)", launch);
  const char *copy;
  if (av_json_get_string(c, root, "", "kv_copy", 0, "tma", &copy)) return fail_code(c);
  if (av_kv_copy_from_name(copy, &e->kv_copy))
    return av_error_set(c->err, AV_ERR_NAME, c->source, "kv_copy",
                        "unknown KV copy '%s'; expected \"tma\" (whole pages by TMA where the "
                        "GPU and cache allow it, else cp.async) or \"cp_async\" (token-exact "
                        "cp.async everywhere)", copy);
  return AV_OK;
}

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
    av__experiment_resolve_path(file, sizeof file, c->source, name);
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
  if (av_json_get_int(c, root, (av_json_field_t){"", "head_dim", 0}, 128, INT32_MIN, INT32_MAX, &d))
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

/* One scheduler entry at point `point` of its sweep `sw` (no sweep: one point). A swept
 * entry's variants are labelled <label>[k=v,...]. */
static int parse_one_sched(const av_jctx_t *c, const json_t *v, const char *where,
                           const av_sweep_t *sw, int64_t point, av_exp_sched_t *s) {
  static const char *const keys[] = {"name", "label", "params", "grid", NULL};
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
                        "\"params\": {...}, \"grid\": {...}}, got %s",
                        av_json_type_name(v));
  }
  if (av_scheduler_lookup(name, c->source, npath, &s->ops, c->err)) return fail_code(c);
  char full[256], point_label[160];
  snprintf(full, sizeof full, "%s", label ? label : s->ops->name);
  if (sw->n_axes) {
    av_sweep_label(sw, point, point_label, sizeof point_label);
    size_t n = strlen(full);
    snprintf(full + n, sizeof full - n, "[%s]", point_label);
  }
  if ((label && !label[0]) || strlen(full) >= sizeof s->label) {
    char lpath[128];
    av_jpath_key(lpath, sizeof lpath, where, "label");
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, lpath,
                        "expected a label of 1 to %zu characters%s%s", sizeof s->label - 1,
                        sw->n_axes ? ", with the swept values: " : "", sw->n_axes ? full : "");
  }
  snprintf(s->label, sizeof s->label, "%s", full);
  if (!sw->n_axes) return av_params_from_json(&s->params, s->ops->params, params, c, ppath);
  if (params && av_json_expect_object(c, params, ppath)) return fail_code(c);
  json_t *merged = params ? json_deep_copy(params) : json_object();
  for (int a = 0; a < sw->n_axes; a++)
    if (json_object_get(merged, sw->axes[a].key)) {
      json_decref(merged);
      char kp[256];
      av_jpath_key(kp, sizeof kp, ppath, sw->axes[a].key);
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, kp,
                          "'%s' is both set and swept (\"grid\"); give it in one place",
                          sw->axes[a].key);
    }
  int rc = av_sweep_apply(sw, point, merged);
  if (!rc) rc = av_params_from_json(&s->params, s->ops->params, merged, c, ppath);
  json_decref(merged);
  if (rc) av_sweep_blame(sw, c->err, ppath, s->label);
  return rc;
}

/* The scheduler entries, each once or once per point of its "grid". */
static int parse_schedulers(const av_jctx_t *c, const json_t *root, av_experiment_t *e) {
  const json_t *v = json_object_get(root, "schedulers");
  if (!v)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "schedulers",
                        "missing required key 'schedulers' (a list such as "
                        "[{\"name\": \"query_centric\"}])");
  if (av_json_expect_array(c, v, "schedulers")) return fail_code(c);
  size_t n = json_array_size(v);
  if (n == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "schedulers",
                        "expected at least one scheduler");
  av_sweep_t *sw = calloc(n, sizeof *sw);
  if (!sw) return av_error_set(c->err, AV_ERR_NOMEM, c->source, "schedulers", "out of memory");
  int64_t total = 0;
  int rc = AV_OK;
  for (size_t i = 0; rc == AV_OK && i < n; i++) {
    const json_t *entry = json_array_get(v, i);
    char where[64], gp[96];
    av_jpath_index(where, sizeof where, "schedulers", i);
    av_jpath_key(gp, sizeof gp, where, "grid");
    rc = av_sweep_parse(c, json_is_object(entry) ? json_object_get(entry, "grid") : NULL, gp,
                        NULL, NULL, &sw[i]);
    total += sw[i].n_points;
    if (!rc && total > AV_MAX_SCHED_VARIANTS)
      rc = av_error_set(c->err, AV_ERR_RANGE, c->source, gp,
                        "the scheduler grids make %lld variants; at most %d",
                        (long long)total, AV_MAX_SCHED_VARIANTS);
  }
  e->scheds = rc ? NULL : calloc((size_t)total, sizeof *e->scheds);
  if (!rc && !e->scheds)
    rc = av_error_set(c->err, AV_ERR_NOMEM, c->source, "schedulers", "out of memory");
  for (size_t i = 0; rc == AV_OK && i < n; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "schedulers", i);
    for (int64_t p = 0; rc == AV_OK && p < sw[i].n_points; p++) {
      av_exp_sched_t *s = &e->scheds[e->n_scheds];
      rc = parse_one_sched(c, json_array_get(v, i), where, &sw[i], p, s);
      for (int j = 0; rc == AV_OK && j < e->n_scheds; j++)
        if (strcmp(e->scheds[j].label, s->label) == 0)
          rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "label '%s' is used by schedulers[%d] too; give each entry its "
                            "own \"label\"",
                            s->label, e->scheds[j].entry);
      s->entry = (int)i;
      if (!rc) e->n_scheds++;
    }
  }
  free(sw);
  return rc;
}

/* --- entry points ------------------------------------------------------------------- */

int av_experiment_from_json(const json_t *root, const char *path, av_experiment_t **out,
                            av_error_t *err) {
  *out = NULL;
  /* schedulers are found by name, `auto` among them */
  int rc = av_selectors_register(err);
  if (rc) return rc;
  av_experiment_t *e = calloc(1, sizeof *e);
  if (!e) return av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  snprintf(e->path, sizeof e->path, "%s", path);
  av_jctx_t c = {.source = e->path, .err = err};
  /* Order: structure and names first (cheap, most common mistakes), batches last. */
  rc = av_json_expect_object(&c, root, "");
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
  if (!rc) rc = av__experiment_parse_limits(&c, root, e);
  if (!rc) rc = av__experiment_parse_workloads(&c, root, e);
  if (!rc) rc = av__experiment_check_limits(&c, e);
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
