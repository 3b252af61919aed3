/* Plan files ("anvil-plan/1"): the plan plus the explicit form of its workload, so a plan file
 * is checkable on its own. Slots are not stored: they follow from item order (PARTIAL items
 * take consecutive slots), which is what makes save -> load -> save byte-identical. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"

#define AV_PLAN_FORMAT "anvil-plan/1"

static const char *const kind_names[] = {"partial", "persistent", "decode", "merge", NULL};

/* Adds v under k; remembers a failure (v NULL or no memory) in *bad. */
static void put(json_t *o, const char *k, json_t *v, int *bad) {
  if (!v || json_object_set_new(o, k, v)) *bad = 1;
}
static void push(json_t *a, json_t *v, int *bad) {
  if (!v || json_array_append_new(a, v)) *bad = 1;
}

static json_t *launch_to_json(const av_launch_t *l, int *bad) {
  json_t *o = json_object();
  if (!o) {
    *bad = 1;
    return NULL;
  }
  put(o, "stream", json_integer(l->stream), bad);
  put(o, "kind", json_string(av_kernel_kind_name(l->tile.kind)), bad);
  put(o, "m", json_integer(l->tile.m_rows), bad);
  put(o, "n", json_integer(l->tile.n_tokens), bad);
  put(o, "warps", json_integer(l->tile.warps), bad);
  put(o, "persistent_ctas", json_integer(l->persistent_ctas), bad);
  return o;
}

static json_t *item_to_json(const av_plan_t *p, const av_item_t *it, int *bad) {
  json_t *o = json_object(), *q = json_array(), *segs = json_array();
  if (!o || !q || !segs) {
    json_decref(o);
    json_decref(q);
    json_decref(segs);
    *bad = 1;
    return NULL;
  }
  for (int32_t k = 0; k < it->n_q; k++) push(q, json_integer(p->item_queries[it->q_begin + k]), bad);
  for (int32_t s = 0; s < it->n_seg; s++) {
    const av_segment_t *sg = &p->segments[it->seg_begin + s];
    push(segs, json_pack("[iII]", (int)sg->node, (json_int_t)sg->begin, (json_int_t)sg->end), bad);
  }
  put(o, "launch", json_integer(it->launch), bad);
  put(o, "queries", q, bad);
  put(o, "segments", segs, bad);
  put(o, "output", json_string(it->output == AV_OUT_FINAL ? "final" : "partial"), bad);
  put(o, "cta", json_integer(it->cta), bad);
  put(o, "order", json_integer(it->order), bad);
  return o;
}

/* Caller owns the result; NULL when out of memory. */
json_t *av_plan_to_json(const av_plan_t *p, const av_workload_t *w) {
  int bad = 0;
  json_t *root = json_object(), *launches = json_array(), *items = json_array(),
         *merge = json_array();
  char hash[32];
  snprintf(hash, sizeof hash, "%016" PRIx64, p->workload_hash);
  if (!root || !launches || !items || !merge) bad = 1;
  for (int32_t l = 0; l < p->n_launches && !bad; l++)
    push(launches, launch_to_json(&p->launches[l], &bad), &bad);
  for (int32_t i = 0; i < p->n_items && !bad; i++)
    push(items, item_to_json(p, &p->items[i], &bad), &bad);
  for (int32_t r = 0; r < p->n_requests && !bad && p->merge_offsets; r++) {
    json_t *list = json_array();
    for (int32_t k = p->merge_offsets[r]; list && k < p->merge_offsets[r + 1]; k++)
      push(list, json_integer(p->merge_slots[k]), &bad);
    push(merge, list, &bad);
  }
  if (bad) {
    json_decref(root);
    json_decref(launches);
    json_decref(items);
    json_decref(merge);
    return NULL;
  }
  put(root, "format", json_string(AV_PLAN_FORMAT), &bad);
  put(root, "scheduler", json_string(p->scheduler), &bad);
  put(root, "params", json_string(p->params), &bad);
  if (p->launch_model != AV_LAUNCH_STREAMS) /* plans issued on streams keep their old form */
    put(root, "launch_model", json_string(av_launch_model_name(p->launch_model)), &bad);
  put(root, "workload", av_workload_to_json(w), &bad);
  put(root, "workload_hash", json_string(hash), &bad);
  put(root, "launches", launches, &bad);
  put(root, "items", items, &bad);
  put(root, "merge", merge, &bad);
  if (bad) {
    json_decref(root);
    return NULL;
  }
  return root;
}

/* --- loading ------------------------------------------------------------------------ */

static int err_code(const av_jctx_t *c, int fallback) {
  return c->err && c->err->code ? c->err->code : fallback;
}

/* The value of "workload_hash": 1 to 16 hex digits. */
static int read_hash(const av_jctx_t *c, const json_t *root, uint64_t *out) {
  const char *text;
  if (av_json_get_string(c, root, "", "workload_hash", 1, NULL, &text))
    return err_code(c, AV_ERR_SCHEMA);
  size_t n = strlen(text);
  int ok = n >= 1 && n <= 16;
  for (size_t i = 0; ok && i < n; i++)
    ok = (text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f') ||
         (text[i] >= 'A' && text[i] <= 'F');
  if (!ok)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "workload_hash",
                        "expected 1 to 16 hex digits, got \"%s\"", text);
  *out = strtoull(text, NULL, 16);
  return AV_OK;
}

static int check_hash(const av_jctx_t *c, const json_t *root, const av_workload_t *w) {
  uint64_t h = 0;
  int rc = read_hash(c, root, &h);
  if (rc) return rc;
  uint64_t actual = av_workload_hash(w);
  if (h != actual)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "workload_hash",
                        "plan file does not match its workload: workload_hash is %016" PRIx64
                        " but the workload hashes to %016" PRIx64,
                        h, actual);
  return AV_OK;
}

static int read_string_field(const av_jctx_t *c, const json_t *root, const char *key,
                             char *dst, size_t size) {
  const char *s;
  if (av_json_get_string(c, root, "", key, 0, "", &s)) return err_code(c, AV_ERR_SCHEMA);
  if (strlen(s) >= size)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, key,
                        "is %zu characters long; at most %zu are allowed", strlen(s), size - 1);
  snprintf(dst, size, "%s", s);
  return AV_OK;
}

static int read_launch(const av_jctx_t *c, const json_t *o, const char *path, av_plan_t *p) {
  static const char *const keys[] = {"stream", "kind", "m", "n", "warps", "persistent_ctas",
                                     NULL};
  if (av_json_expect_object(c, o, path) || av_json_check_keys(c, o, path, keys))
    return err_code(c, AV_ERR_SCHEMA);
  int64_t stream, m, n, warps, pers;
  const char *kind;
  av_tile_t tile;
  if (av_json_get_int(c, o, (av_json_field_t){path, "stream", 1}, 0, 0, INT32_MAX, &stream) ||
      av_json_get_string(c, o, path, "kind", 1, NULL, &kind) ||
      av_json_get_int(c, o, (av_json_field_t){path, "m", 1}, 0, 1, INT32_MAX, &m) ||
      av_json_get_int(c, o, (av_json_field_t){path, "n", 1}, 0, 1, INT32_MAX, &n) ||
      av_json_get_int(c, o, (av_json_field_t){path, "warps", 1}, 0, 1, 64, &warps) ||
      av_json_get_int(c, o, (av_json_field_t){path, "persistent_ctas", 0}, 0, 0, INT32_MAX, &pers))
    return err_code(c, AV_ERR_SCHEMA);
  if (av_kernel_kind_from_name(kind, &tile.kind)) {
    char where[256], names[128];
    av_jpath_key(where, sizeof where, path, "kind");
    av_names_join(names, sizeof names, kind_names, 0);
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown kernel kind '%s'; expected one of: %s", kind, names);
  }
  tile.m_rows = (int)m;
  tile.n_tokens = (int)n;
  tile.warps = (int)warps;
  if (av_plan_add_launch(p, (int32_t)stream, &tile, (int32_t)pers) < 0)
    return av_error_set(c->err, AV_ERR_NOMEM, c->source, path, "out of memory");
  return AV_OK;
}

/* Segments [[node, begin, end], ...], each range-checked against the workload's nodes. */
static int read_segments(const av_jctx_t *c, const json_t *arr, const char *path,
                         const av_workload_t *w, av_segment_t **out, size_t *n_out) {
  if (av_json_expect_array(c, arr, path)) return err_code(c, AV_ERR_SCHEMA);
  size_t n = json_array_size(arr);
  if (n == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, path,
                        "expected a non-empty array of [node, begin, end]");
  av_segment_t *segs = malloc(n * sizeof *segs);
  if (!segs) return av_error_set(c->err, AV_ERR_NOMEM, c->source, path, "out of memory");
  for (size_t s = 0; s < n; s++) {
    char where[256], e[3][256];
    const json_t *t = json_array_get(arr, s);
    av_jpath_index(where, sizeof where, path, s);
    for (int k = 0; k < 3; k++) av_jpath_index(e[k], sizeof e[k], where, (size_t)k);
    int64_t node, begin, end;
    int rc = AV_OK;
    if (!json_is_array(t) || json_array_size(t) != 3)
      rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected [node, begin, end], got %s", av_json_type_name(t));
    if (!rc) rc = av_json_as_int(c, json_array_get(t, 0), e[0], 0, w->n_nodes - 1, &node);
    int64_t len = rc ? 0 : w->nodes[node].kv_len_tokens;
    if (!rc) rc = av_json_as_int(c, json_array_get(t, 1), e[1], 0, len - 1, &begin);
    if (!rc) rc = av_json_as_int(c, json_array_get(t, 2), e[2], begin + 1, len, &end);
    if (rc) {
      free(segs);
      return rc;
    }
    segs[s] = (av_segment_t){(int32_t)node, begin, end};
  }
  *out = segs;
  *n_out = n;
  return AV_OK;
}

static int read_item(const av_jctx_t *c, const json_t *o, const char *path,
                     const av_workload_t *w, av_plan_t *p) {
  static const char *const keys[] = {"launch", "queries", "segments", "output", "cta", "order",
                                     NULL};
  if (av_json_expect_object(c, o, path) || av_json_check_keys(c, o, path, keys))
    return err_code(c, AV_ERR_SCHEMA);
  int64_t launch, cta, order, *q = NULL;
  size_t nq = 0, nseg = 0;
  av_segment_t *segs = NULL;
  const char *output;
  char where[256];
  av_jpath_key(where, sizeof where, path, "segments");
  int rc = AV_OK;
  if (p->n_launches == 0)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, path,
                      "items need a launch, but \"launches\" is empty");
  if (!rc)
    rc = av_json_get_int(c, o, (av_json_field_t){path, "launch", 1}, 0, 0, p->n_launches - 1,
                         &launch);
  int pers = rc ? 0 : p->launches[launch].persistent_ctas;
  if (!rc)
    rc = av_json_get_int_array(c, o, (av_json_field_t){path, "queries", 1}, 0, 0, w->n_requests - 1,
                               &q, &nq);
  if (!rc && !json_object_get(o, "segments"))
    rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, where, "missing required key 'segments'");
  if (!rc) rc = read_segments(c, json_object_get(o, "segments"), where, w, &segs, &nseg);
  if (!rc) rc = av_json_get_string(c, o, path, "output", 1, NULL, &output);
  /* Persistent launches need a queue position; other launches have none (-1). */
  if (!rc)
    rc = av_json_get_int(c, o, (av_json_field_t){path, "cta", pers > 0}, -1, pers > 0 ? 0 : -1,
                         pers > 0 ? pers - 1 : -1, &cta);
  if (!rc)
    rc = av_json_get_int(c, o, (av_json_field_t){path, "order", pers > 0}, -1, pers > 0 ? 0 : -1,
                         pers > 0 ? INT32_MAX : -1, &order);
  av_output_t out = AV_OUT_FINAL;
  if (!rc && strcmp(output, "final") && strcmp(output, "partial")) {
    av_jpath_key(where, sizeof where, path, "output");
    rc = av_error_set(c->err, AV_ERR_NAME, c->source, where,
                      "unknown output '%s'; expected one of: final, partial", output);
  }
  if (!rc && strcmp(output, "partial") == 0) out = AV_OUT_PARTIAL;
  if (!rc && nq > INT32_MAX / 2)
    rc = av_error_set(c->err, AV_ERR_RANGE, c->source, path, "too many queries");
  int32_t *q32 = rc ? NULL : malloc((nq + 1) * sizeof *q32);
  if (!rc && !q32) rc = av_error_set(c->err, AV_ERR_NOMEM, c->source, path, "out of memory");
  for (size_t k = 0; !rc && k < nq; k++) q32[k] = (int32_t)q[k];
  if (!rc &&
      av_plan_add_item(p, (int32_t)launch, (av_item_work_t){q32, (int32_t)nq, segs, (int32_t)nseg},
                       out, (int32_t)cta, (int32_t)order) < 0)
    rc = av_error_set(c->err, AV_ERR_NOMEM, c->source, path, "out of memory");
  free(q);
  free(q32);
  free(segs);
  return rc;
}

/* "merge": one list of slots per request. Absent: slot order (the default). */
static int read_merge(const av_jctx_t *c, const json_t *root, av_plan_t *p) {
  const json_t *m = json_object_get(root, "merge");
  if (!m) return AV_OK;
  if (av_json_expect_array(c, m, "merge")) return err_code(c, AV_ERR_SCHEMA);
  if (json_array_size(m) != (size_t)p->n_requests)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "merge",
                        "has %zu lists; the workload has %d requests (one list each)",
                        json_array_size(m), p->n_requests);
  int32_t *off = malloc(((size_t)p->n_requests + 1) * sizeof *off);
  size_t total = 0;
  for (size_t r = 0; r < json_array_size(m); r++) total += json_array_size(json_array_get(m, r));
  int32_t *slots = malloc((total + 1) * sizeof *slots);
  int rc = off && slots ? AV_OK
                        : av_error_set(c->err, AV_ERR_NOMEM, c->source, "merge", "out of memory");
  if (!rc) off[0] = 0;
  for (int32_t r = 0; !rc && r < p->n_requests; r++) {
    char where[64];
    const json_t *list = json_array_get(m, (size_t)r);
    av_jpath_index(where, sizeof where, "merge", (size_t)r);
    rc = av_json_expect_array(c, list, where) ? err_code(c, AV_ERR_SCHEMA) : AV_OK;
    off[r + 1] = off[r];
    for (size_t k = 0; !rc && k < json_array_size(list); k++) {
      char at[80];
      int64_t s;
      av_jpath_index(at, sizeof at, where, k);
      rc = av_json_as_int(c, json_array_get(list, k), at, 0, (int64_t)p->n_slots - 1, &s);
      if (!rc) slots[off[r + 1]++] = (int32_t)s;
    }
  }
  if (!rc) rc = av_plan_set_merge(p, off, slots, c->err);
  free(off);
  free(slots);
  return rc;
}

static int read_body(const json_t *root, const av_jctx_t *c, const av_workload_t *w,
                     av_plan_t *p) {
  const json_t *arr = json_object_get(root, "launches");
  if (!arr)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "launches",
                        "missing required key 'launches'");
  if (av_json_expect_array(c, arr, "launches")) return err_code(c, AV_ERR_SCHEMA);
  for (size_t l = 0; l < json_array_size(arr); l++) {
    char where[64];
    av_jpath_index(where, sizeof where, "launches", l);
    int rc = read_launch(c, json_array_get(arr, l), where, p);
    if (rc) return rc;
  }
  arr = json_object_get(root, "items");
  if (!arr)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "items", "missing required key 'items'");
  if (av_json_expect_array(c, arr, "items")) return err_code(c, AV_ERR_SCHEMA);
  for (size_t i = 0; i < json_array_size(arr); i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "items", i);
    int rc = read_item(c, json_array_get(arr, i), where, w, p);
    if (rc) return rc;
  }
  int rc = read_merge(c, root, p);
  return rc ? rc : av_plan_finalize(p, c->err);
}

static const char *const top_keys[] = {"format", "scheduler", "params", "launch_model",
                                       "workload", "workload_hash", "launches", "items",
                                       "merge", NULL};

/* Optional "launch_model": "streams" (the default), "graph" or "pdl". */
static int read_launch_model(const av_jctx_t *c, const json_t *root, av_plan_t *p) {
  const char *name;
  if (av_json_get_string(c, root, "", "launch_model", 0, "streams", &name))
    return err_code(c, AV_ERR_SCHEMA);
  if (av_launch_model_from_name(name, &p->launch_model))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "launch_model",
                        "unknown launch model '%s'; expected \"streams\", \"graph\" or \"pdl\"",
                        name);
  return AV_OK;
}

static int check_top(const json_t *root, const av_jctx_t *c) {
  const char *format;
  if (av_json_expect_object(c, root, "") || av_json_check_keys(c, root, "", top_keys) ||
      av_json_get_string(c, root, "", "format", 1, NULL, &format))
    return err_code(c, AV_ERR_SCHEMA);
  if (strcmp(format, AV_PLAN_FORMAT))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "format",
                        "unsupported plan format '%s'; expected \"" AV_PLAN_FORMAT "\"", format);
  return AV_OK;
}

/* The plan of `root` for workload w (already built). *p_out: caller owns. */
int av_plan_from_json(const json_t *root, const av_jctx_t *c, const av_workload_t *w,
                      av_plan_t **p_out) {
  *p_out = NULL;
  int rc = check_top(root, c);
  if (!rc) rc = check_hash(c, root, w);
  if (rc) return rc;
  av_plan_t *p = av_plan_create(w, "");
  if (!p) return av_error_set(c->err, AV_ERR_NOMEM, c->source, NULL, "out of memory");
  rc = read_string_field(c, root, "scheduler", p->scheduler, sizeof p->scheduler);
  if (!rc) rc = read_string_field(c, root, "params", p->params, sizeof p->params);
  if (!rc) rc = read_launch_model(c, root, p);
  if (!rc) rc = read_body(root, c, w, p);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  *p_out = p;
  return AV_OK;
}

/* Loads the file, rebuilds the embedded workload and the plan against it. */
int av_plan_from_doc(const json_t *root, const av_jctx_t *c, av_plan_t **p_out,
                     av_workload_t **w_out) {
  *p_out = NULL;
  *w_out = NULL;
  av_workload_t *w = NULL;
  int rc = check_top(root, c);
  if (!rc && !json_object_get(root, "workload"))
    rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, "workload",
                      "missing required key 'workload'");
  if (!rc) {
    w = av_workload_from_json(json_object_get(root, "workload"), NULL, c, "workload");
    if (!w) rc = err_code(c, AV_ERR_SCHEMA);
  }
  if (!rc) rc = av_plan_from_json(root, c, w, p_out);
  if (rc) {
    av_workload_destroy(w);
    return rc;
  }
  *w_out = w;
  return AV_OK;
}

int av_plan_load(const char *path, av_plan_t **p_out, av_workload_t **w_out, av_error_t *err) {
  *p_out = NULL;
  *w_out = NULL;
  json_t *root;
  int rc = av_json_load_file(path, &root, err);
  if (rc) return rc;
  av_jctx_t c = {.source = path, .err = err};
  rc = av_plan_from_doc(root, &c, p_out, w_out);
  json_decref(root);
  return rc;
}
