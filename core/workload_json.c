/* Workload specs in JSON: one object per batch, read into any builder, and the explicit
 * form written back. Every error names the key path the caller gave (`workloads[1]`) plus
 * the key inside the spec (`workloads[1].L[2]`).
 *
 * JSON schema of a workload spec (copied into docs/experiments.md):
 *
 *   Keys of every kind (all optional except "kind"):
 *     "kind":       one of levels, kary, degenerate, ratio, random, block_table, explicit
 *     "name":       label shown in tables (1 to 127 characters; default: derived
 *                   from the shape, e.g. "levels B=[1,4,16] L=[128,256,1024]")
 *     "heads":      [hq, hkv] query and KV heads, hq a multiple of hkv (default [32, 8]
 *                   or the caller's defaults)
 *     "head_dim":   64, 128 or 256 (default 128)
 *     "dtype":      "fp16" or "bf16" (default "fp16")
 *     "block_size": paged-KV block size in tokens, 1..1048576 (default 16)
 *   Unknown keys are errors that list the valid ones.
 *
 *   levels (PAT / FastTree notation): B[i] nodes at level i (the last entry is the batch
 *     size), L[i] tokens per node of level i; B must not decrease; the children of level i
 *     are spread evenly over the nodes of level i-1 (the first B[i] % B[i-1] parents take
 *     one more); one request per node of the last level.
 *       {"kind": "levels", "B": [1, 4, 16], "L": [128, 256, 1024]}
 *   kary (FlashForge §6.1 2T..5T): a full `arity`-ary tree with `depth` levels; "L" holds
 *     one length per level or a single length for all; "requests_per_leaf" (default 1)
 *     requests end at each leaf.
 *       {"kind": "kary", "arity": 2, "depth": 4, "L": [4096, 1024, 512, 256]}
 *   degenerate (FlashForge §6.1 DT): like kary, but only the first node of each level has
 *     children; every other node is a leaf with one request.
 *       {"kind": "degenerate", "arity": 2, "depth": 5, "L": [1024]}
 *   ratio (FlashForge §6.1): "batch" requests of "context" tokens each, sharing a root of
 *     round(shared_ratio * context) tokens, shared_ratio in [0, 1].
 *       {"kind": "ratio", "batch": 64, "context": 120000, "shared_ratio": 0.9}
 *   random: a seeded random forest, identical on every machine. "seed" (default 0),
 *     "min_depth"/"max_depth" in 1..16 (default 1/4), "max_requests" (default 64),
 *     "max_children" (default 4), "min_len"/"max_len" node lengths drawn log-uniformly
 *     (default 16/4096). The depth is drawn in [min_depth, max_depth] (capped at
 *     max_requests: a chain needs a request per level) and the request count in
 *     [depth, max_requests]. Requests may end at inner nodes.
 *       {"kind": "random", "seed": 7, "max_depth": 6, "max_requests": 512}
 *   block_table (what a serving engine holds): "requests" lists each request's physical
 *     KV block ids, either as a plain array or as an object {"blocks": [...],
 *     "block_size": 16, "last_block_tokens": 5}; "last_block_tokens" (1..block_size, or 0 =
 *     full, the default) is how many tokens the last block holds. A request's
 *     "block_size" must equal the spec's "block_size" and every other request's. The forest
 *     is the radix tree of the id sequences: equal prefixes share nodes, and divergence
 *     inside a node splits it. A block id reached through two different prefixes is an
 *     error.
 *       {"kind": "block_table", "block_size": 16,
 *        "requests": [[0, 1, 2], {"blocks": [0, 1, 3], "last_block_tokens": 5}]}
 *   explicit: "nodes" lists {"parent": p, "kv_len": n} with parent -1 for a root or an
 *     earlier node; "requests" lists, per request, the node its KV path ends at (any node).
 *       {"kind": "explicit", "nodes": [{"parent": -1, "kv_len": 512},
 *        {"parent": 0, "kv_len": 64}], "requests": [1, 1, 0]}
 *
 * An empty batch (no requests) is an error for every kind. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"
#include "core/workload_internal.h"

#define COMMON_KEYS "kind", "name", "heads", "head_dim", "dtype", "block_size"

static const char *const kind_names[] = {"levels", "kary",        "degenerate", "ratio",
                                         "random", "block_table", "explicit",   NULL};
static const char *const levels_keys[] = {COMMON_KEYS, "B", "L", NULL};
static const char *const kary_keys[] = {COMMON_KEYS, "arity", "depth", "L",
                                        "requests_per_leaf", NULL};
static const char *const degenerate_keys[] = {COMMON_KEYS, "arity", "depth", "L", NULL};
static const char *const ratio_keys[] = {COMMON_KEYS, "batch", "context", "shared_ratio", NULL};
static const char *const random_keys[] = {COMMON_KEYS,    "seed",         "min_depth",
                                          "max_depth",    "max_requests", "max_children",
                                          "min_len",      "max_len",      NULL};
static const char *const block_table_keys[] = {COMMON_KEYS, "requests", NULL};
static const char *const explicit_keys[] = {COMMON_KEYS, "nodes", "requests", NULL};
static const char *const *const kind_keys[] = {levels_keys, kary_keys,        degenerate_keys,
                                               ratio_keys,  random_keys,      block_table_keys,
                                               explicit_keys};

/* What the common keys say: heads and block size. */
typedef struct spec_common {
  av_heads_t heads;
  int64_t block_size;
  int block_size_given;
} spec_common_t;

static int errcode(const av_jctx_t *c, int fallback) {
  return c->err && c->err->code ? c->err->code : fallback;
}

static int read_common(const av_jctx_t *c, const json_t *spec, const char *path,
                       spec_common_t *out) {
  char where[256];
  json_t *hv = json_object_get(spec, "heads");
  if (hv) {
    av_jpath_key(where, sizeof where, path, "heads");
    if (!json_is_array(hv) || json_array_size(hv) != 2)
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                          "expected [hq, hkv], an array of two integers, got %s",
                          json_is_array(hv) ? "an array of another size" : av_json_type_name(hv));
    int64_t h[2];
    for (size_t i = 0; i < 2; i++) {
      char item[256];
      av_jpath_index(item, sizeof item, where, i);
      if (av_json_as_int(c, json_array_get(hv, i), item, 1, 4096, &h[i]))
        return errcode(c, AV_ERR_SCHEMA);
    }
    out->heads.hq = (int)h[0];
    out->heads.hkv = (int)h[1];
  }
  int64_t d;
  if (av_json_get_int(c, spec, (av_json_field_t){path, "head_dim", 0}, out->heads.head_dim, 1,
                      1 << 20, &d))
    return errcode(c, AV_ERR_SCHEMA);
  out->heads.head_dim = (int)d;
  const char *dt;
  if (av_json_get_string(c, spec, path, "dtype", 0, av_dtype_name(out->heads.dtype), &dt))
    return errcode(c, AV_ERR_SCHEMA);
  if (strcmp(dt, "fp16") == 0) {
    out->heads.dtype = AV_DTYPE_FP16;
  } else if (strcmp(dt, "bf16") == 0) {
    out->heads.dtype = AV_DTYPE_BF16;
  } else {
    av_jpath_key(where, sizeof where, path, "dtype");
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown dtype '%s'; expected one of: fp16, bf16", dt);
  }
  out->block_size_given = json_object_get(spec, "block_size") != NULL;
  if (av_json_get_int(c, spec, (av_json_field_t){path, "block_size", 0}, 16, 1,
                      AV_WL_MAX_BLOCK_SIZE, &out->block_size))
    return errcode(c, AV_ERR_SCHEMA);
  av__wloc_t loc = {.source = c->source, .path = path, .err = c->err};
  return av__heads_check(&out->heads, &loc);
}

static av_workload_t *read_levels(const av_jctx_t *c, const json_t *spec, const char *path,
                                  const spec_common_t *sc) {
  int64_t *B = NULL, *L = NULL;
  size_t nB = 0, nL = 0;
  av_workload_t *w = NULL;
  if (av_json_get_int_array(c, spec, (av_json_field_t){path, "B", 1}, 0, 1, AV_WL_MAX_NODES, &B,
                            &nB) ||
      av_json_get_int_array(c, spec, (av_json_field_t){path, "L", 1}, 0, 1, AV_WL_MAX_NODE_TOKENS,
                            &L, &nL))
    goto done;
  if (nB != nL) {
    char where[256];
    av_jpath_key(where, sizeof where, path, "L");
    av_error_set(c->err, AV_ERR_MISMATCH, c->source, where,
                 "L has %zu entries but B has %zu; expected one length per level", nL, nB);
    goto done;
  }
  if (nB > AV_WL_MAX_NODES) nB = AV_WL_MAX_NODES + 1; /* the builder reports the total */
  av__wloc_t loc = {.source = c->source, .path = path, .err = c->err};
  w = av__workload_levels(B, L, (int)nB, &sc->heads, &loc);
done:
  free(B);
  free(L);
  return w;
}

/* kary and degenerate share arity/depth/L. */
static av_workload_t *read_tree(const av_jctx_t *c, const json_t *spec, const char *path,
                                const spec_common_t *sc, int degenerate) {
  int64_t arity, depth, per_leaf = 1, *L = NULL;
  size_t nL = 0;
  av_workload_t *w = NULL;
  if (av_json_get_int(c, spec, (av_json_field_t){path, "arity", 1}, 0, 1, AV_WL_MAX_NODES,
                      &arity) ||
      av_json_get_int(c, spec, (av_json_field_t){path, "depth", 1}, 0, 1, 64, &depth) ||
      (!degenerate && av_json_get_int(c, spec, (av_json_field_t){path, "requests_per_leaf", 0}, 1,
                                      1, AV_WL_MAX_REQUESTS, &per_leaf)) ||
      av_json_get_int_array(c, spec, (av_json_field_t){path, "L", 1}, 0, 1, AV_WL_MAX_NODE_TOKENS,
                            &L, &nL))
    goto done;
  if (nL > (1u << 30)) nL = 1u << 30; /* reported as a mismatch with depth */
  av__wloc_t loc = {.source = c->source, .path = path, .err = c->err};
  if (degenerate)
    w = av__workload_degenerate((int)arity, (int)depth, L, (int)nL, &sc->heads, &loc);
  else
    w = av__workload_kary((int)arity, (int)depth, L, (int)nL, (int)per_leaf, &sc->heads, &loc);
done:
  free(L);
  return w;
}

static av_workload_t *read_ratio(const av_jctx_t *c, const json_t *spec, const char *path,
                                 const spec_common_t *sc) {
  int64_t batch, context;
  double ratio;
  if (av_json_get_int(c, spec, (av_json_field_t){path, "batch", 1}, 0, 1, AV_WL_MAX_REQUESTS,
                      &batch) ||
      av_json_get_int(c, spec, (av_json_field_t){path, "context", 1}, 0, 1, AV_WL_MAX_NODE_TOKENS,
                      &context) ||
      av_json_get_double(c, spec, (av_json_field_t){path, "shared_ratio", 1}, 0, 0.0, 1.0, &ratio))
    return NULL;
  av__wloc_t loc = {.source = c->source, .path = path, .err = c->err};
  return av__workload_ratio(batch, context, ratio, &sc->heads, &loc);
}

static av_workload_t *read_random(const av_jctx_t *c, const json_t *spec, const char *path,
                                  const spec_common_t *sc) {
  int64_t seed, v[6];
  static const char *const keys[6] = {"min_depth",    "max_depth", "max_requests",
                                      "max_children", "min_len",   "max_len"};
  static const int64_t defs[6] = {1, 4, 64, 4, 16, 4096};
  static const int64_t maxs[6] = {AV_WL_MAX_DEPTH, AV_WL_MAX_DEPTH, AV_WL_MAX_REQUESTS,
                                  1 << 16,         AV_WL_MAX_NODE_TOKENS,
                                  AV_WL_MAX_NODE_TOKENS};
  if (av_json_get_int(c, spec, (av_json_field_t){path, "seed", 0}, 0, 0, INT64_MAX, &seed))
    return NULL;
  for (int i = 0; i < 6; i++)
    if (av_json_get_int(c, spec, (av_json_field_t){path, keys[i], 0}, defs[i], 1, maxs[i], &v[i]))
      return NULL;
  av_random_spec_t rs = {.seed = (uint64_t)seed,
                         .min_depth = (int)v[0],
                         .max_depth = (int)v[1],
                         .max_requests = (int)v[2],
                         .max_children = (int)v[3],
                         .min_len = v[4],
                         .max_len = v[5]};
  av__wloc_t loc = {.source = c->source, .path = path, .err = c->err};
  return av__workload_random(&rs, &sc->heads, &loc);
}

static av_workload_t *read_explicit(const av_jctx_t *c, const json_t *spec, const char *path,
                                    const spec_common_t *sc) {
  static const char *const node_keys[] = {"parent", "kv_len", NULL};
  char where[256], item[256];
  av_jpath_key(where, sizeof where, path, "nodes");
  json_t *nodes = json_object_get(spec, "nodes");
  if (!nodes) {
    av_error_set(c->err, AV_ERR_SCHEMA, c->source, where, "missing required key 'nodes'");
    return NULL;
  }
  if (av_json_expect_array(c, nodes, where)) return NULL;
  size_t n = json_array_size(nodes);
  if (n > AV_WL_MAX_NODES) {
    av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                 "%zu nodes; at most %d are supported", n, AV_WL_MAX_NODES);
    return NULL;
  }
  int64_t *reqs = NULL;
  size_t nr = 0;
  /* An empty list is read, then rejected by finalize as an empty batch. */
  if (av_json_get_int_array(c, spec, (av_json_field_t){path, "requests", 1}, 1, 0, AV_WL_MAX_NODES,
                            &reqs, &nr))
    return NULL;
  if (nr > AV_WL_MAX_REQUESTS) nr = AV_WL_MAX_REQUESTS + 1;
  av_workload_t *w = av_workload_create((int32_t)n, (int32_t)(nr <= AV_WL_MAX_REQUESTS ? nr : 0));
  if (!w) {
    free(reqs);
    av_error_set(c->err, AV_ERR_NOMEM, c->source, where, "out of memory");
    return NULL;
  }
  w->heads = sc->heads;
  for (size_t r = 0; r < nr && r < (size_t)w->n_requests; r++) w->request_node[r] = (int32_t)reqs[r];
  free(reqs);
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_array_get(nodes, i);
    int64_t parent, len;
    av_jpath_index(item, sizeof item, where, i);
    if (av_json_expect_object(c, o, item) || av_json_check_keys(c, o, item, node_keys) ||
        av_json_get_int(c, o, (av_json_field_t){item, "parent", 1}, 0, -1, AV_WL_MAX_NODES,
                        &parent) ||
        av_json_get_int(c, o, (av_json_field_t){item, "kv_len", 1}, 0, 1, AV_WL_MAX_NODE_TOKENS,
                        &len)) {
      av_workload_destroy(w);
      return NULL;
    }
    w->nodes[i].parent = (int32_t)parent;
    w->nodes[i].kv_len_tokens = len;
  }
  av__wloc_t loc = {.source = c->source, .path = path, .err = c->err};
  if (nr > AV_WL_MAX_REQUESTS) {
    av__wl_error(&loc, AV_ERR_RANGE, "requests", "more than %d requests; at most %d are supported",
                 AV_WL_MAX_REQUESTS, AV_WL_MAX_REQUESTS);
  } else if (av__workload_finalize(w, &loc) == AV_OK) {
    av__workload_set_name(w, "explicit %" PRId32 " nodes %" PRId32 " requests", w->n_nodes,
                          w->n_requests);
    return w;
  }
  av_workload_destroy(w);
  return NULL;
}

static av_workload_t *read_block_table(const av_jctx_t *c, const json_t *spec,
                                       const char *path, const spec_common_t *sc);

av_workload_t *av_workload_from_json(const json_t *spec, const av_heads_t *defaults,
                                     const av_jctx_t *c, const char *path) {
  av_jctx_t none = {.source = NULL, .err = NULL};
  if (!c) c = &none;
  if (!path) path = "";
  char where[256];
  if (!spec || av_json_expect_object(c, spec, path)) {
    if (!spec) av_error_set(c->err, AV_ERR_SCHEMA, c->source, path, "missing workload spec");
    return NULL;
  }
  const char *kind;
  if (av_json_get_string(c, spec, path, "kind", 1, NULL, &kind)) return NULL;
  int k = 0;
  while (kind_names[k] && strcmp(kind_names[k], kind) != 0) k++;
  if (!kind_names[k]) {
    char names[256];
    av_names_join(names, sizeof names, kind_names, 0);
    av_jpath_key(where, sizeof where, path, "kind");
    av_error_set(c->err, AV_ERR_NAME, c->source, where,
                 "unknown workload kind '%s'; expected one of: %s", kind, names);
    return NULL;
  }
  if (av_json_check_keys(c, spec, path, kind_keys[k])) return NULL;
  const char *name;
  if (av_json_get_string(c, spec, path, "name", 0, NULL, &name)) return NULL;
  /* An empty label would name no row of a table, and the explicit form, which leaves out an
   * empty name, would load back under a derived one. */
  if (name && (!name[0] || strlen(name) >= sizeof ((av_workload_t *)0)->name)) {
    av_jpath_key(where, sizeof where, path, "name");
    av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                 "name is %zu characters long; expected 1 to %zu", strlen(name),
                 sizeof ((av_workload_t *)0)->name - 1);
    return NULL;
  }
  av_heads_t hbuf;
  spec_common_t sc = {.heads = *av__heads_or_default(defaults, &hbuf)};
  if (read_common(c, spec, path, &sc)) return NULL;
  av_workload_t *w = NULL;
  switch (k) {
    case 0: w = read_levels(c, spec, path, &sc); break;
    case 1: w = read_tree(c, spec, path, &sc, 0); break;
    case 2: w = read_tree(c, spec, path, &sc, 1); break;
    case 3: w = read_ratio(c, spec, path, &sc); break;
    case 4: w = read_random(c, spec, path, &sc); break;
    case 5: w = read_block_table(c, spec, path, &sc); break;
    default: w = read_explicit(c, spec, path, &sc); break;
  }
  if (!w) return NULL;
  if (k != 5) w->block_size_tokens = (int)sc.block_size;
  if (name) snprintf(w->name, sizeof w->name, "%s", name);
  return w;
}

json_t *av_workload_to_json(const av_workload_t *w) {
  if (!w) return NULL;
  json_t *nodes = json_array(), *reqs = json_array();
  json_t *o = json_object();
  int bad = !nodes || !reqs || !o;
  for (int32_t i = 0; !bad && i < w->n_nodes; i++) {
    json_t *n = json_pack("{s:I,s:I}", "parent", (json_int_t)w->nodes[i].parent, "kv_len",
                          (json_int_t)w->nodes[i].kv_len_tokens);
    bad |= !n || json_array_append_new(nodes, n) != 0;
  }
  for (int32_t r = 0; !bad && r < w->n_requests; r++)
    bad |= json_array_append_new(reqs, json_integer(w->request_node[r])) != 0;
  if (!bad) {
    bad |= json_object_set_new(o, "kind", json_string("explicit")) != 0;
    if (w->name[0]) bad |= json_object_set_new(o, "name", json_string(w->name)) != 0;
    bad |= json_object_set_new(o, "heads", json_pack("[i,i]", w->heads.hq, w->heads.hkv)) != 0;
    bad |= json_object_set_new(o, "head_dim", json_integer(w->heads.head_dim)) != 0;
    bad |= json_object_set_new(o, "dtype", json_string(av_dtype_name(w->heads.dtype))) != 0;
    bad |= json_object_set_new(o, "block_size", json_integer(w->block_size_tokens)) != 0;
    bad |= json_object_set(o, "nodes", nodes) != 0;
    bad |= json_object_set(o, "requests", reqs) != 0;
  }
  json_decref(nodes);
  json_decref(reqs);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* --- block_table ------------------------------------------------------------------- */

static const char *const bt_request_keys[] = {"blocks", "block_size", "last_block_tokens", NULL};

/* One block size per batch: the spec's "block_size", else the first request that gives
 * one, else the default; every request that gives one must agree with it. */
static int bt_block_size(const av_jctx_t *c, const json_t *reqs, const char *where,
                         const char *path, const spec_common_t *sc, int64_t *bs) {
  char item[256], auth[256];
  int have = sc->block_size_given;
  *bs = sc->block_size;
  av_jpath_key(auth, sizeof auth, path, "block_size");
  for (size_t i = 0; i < json_array_size(reqs); i++) {
    json_t *r = json_array_get(reqs, i);
    av_jpath_index(item, sizeof item, where, i);
    if (json_is_array(r)) continue;
    if (!json_is_object(r))
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, item,
                          "expected an array of block ids or an object {\"blocks\": [...]}, "
                          "got %s",
                          av_json_type_name(r));
    if (av_json_check_keys(c, r, item, bt_request_keys)) return errcode(c, AV_ERR_SCHEMA);
    if (!json_object_get(r, "block_size")) continue;
    int64_t v;
    if (av_json_get_int(c, r, (av_json_field_t){item, "block_size", 1}, 0, 1, AV_WL_MAX_BLOCK_SIZE,
                        &v))
      return errcode(c, AV_ERR_SCHEMA);
    if (!have) {
      have = 1;
      *bs = v;
      av_jpath_key(auth, sizeof auth, item, "block_size");
    } else if (v != *bs) {
      char here[256];
      av_jpath_key(here, sizeof here, item, "block_size");
      return av_error_set(c->err, AV_ERR_MISMATCH, c->source, here,
                          "block size %" PRId64 " does not match block size %" PRId64
                          " set by %s; all requests of a batch use one block size",
                          v, *bs, auth);
    }
  }
  return AV_OK;
}

/* A plain list of block ids at `where` (caller frees *out). */
static int bt_ids(const av_jctx_t *c, const json_t *arr, const char *where, int64_t **out,
                  size_t *n) {
  *n = json_array_size(arr);
  *out = NULL;
  if (*n == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected a non-empty array of block ids");
  *out = malloc(*n * sizeof **out);
  if (!*out) return av_error_set(c->err, AV_ERR_NOMEM, c->source, where, "out of memory");
  for (size_t j = 0; j < *n; j++) {
    char item[256];
    av_jpath_index(item, sizeof item, where, j);
    if (av_json_as_int(c, json_array_get(arr, j), item, 0, INT64_MAX, &(*out)[j]))
      return errcode(c, AV_ERR_SCHEMA);
  }
  return AV_OK;
}

static av_workload_t *read_block_table(const av_jctx_t *c, const json_t *spec,
                                       const char *path, const spec_common_t *sc) {
  char where[256], item[256];
  av_jpath_key(where, sizeof where, path, "requests");
  json_t *reqs = json_object_get(spec, "requests");
  int64_t bs;
  if (!reqs) {
    av_error_set(c->err, AV_ERR_SCHEMA, c->source, where, "missing required key 'requests'");
    return NULL;
  }
  if (av_json_expect_array(c, reqs, where)) return NULL;
  size_t n = json_array_size(reqs);
  if (n == 0) {
    av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                 "empty batch: no requests; expected at least one block list");
    return NULL;
  }
  if (n > AV_WL_MAX_REQUESTS) {
    av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                 "%zu requests; at most %d are supported", n, AV_WL_MAX_REQUESTS);
    return NULL;
  }
  if (bt_block_size(c, reqs, where, path, sc, &bs)) return NULL;
  int64_t **lists = calloc(n, sizeof *lists);
  int32_t *nb = calloc(n, sizeof *nb), *lbt = calloc(n, sizeof *lbt);
  unsigned char *objform = calloc(n, 1);
  av_workload_t *w = NULL;
  int bad = !lists || !nb || !lbt || !objform;
  if (bad) av_error_set(c->err, AV_ERR_NOMEM, c->source, where, "out of memory");
  for (size_t i = 0; !bad && i < n; i++) {
    json_t *r = json_array_get(reqs, i), *ids = r;
    size_t k = 0;
    int64_t last = 0;
    av_jpath_index(item, sizeof item, where, i);
    if (json_is_object(r)) {
      objform[i] = 1;
      char bw[256];
      av_jpath_key(bw, sizeof bw, item, "blocks");
      ids = json_object_get(r, "blocks");
      bad = av_json_get_int(c, r, (av_json_field_t){item, "last_block_tokens", 0}, 0, 0, bs,
                            &last) != AV_OK;
      if (!bad && !ids)
        bad = av_error_set(c->err, AV_ERR_SCHEMA, c->source, bw,
                           "missing required key 'blocks'") != AV_OK;
      if (!bad) bad = av_json_expect_array(c, ids, bw) || bt_ids(c, ids, bw, &lists[i], &k);
    } else {
      bad = bt_ids(c, ids, item, &lists[i], &k) != AV_OK;
    }
    if (!bad && k > AV_WL_MAX_BLOCKS)
      bad = av_error_set(c->err, AV_ERR_RANGE, c->source, item,
                         "%zu blocks; at most %d are supported", k, AV_WL_MAX_BLOCKS) != AV_OK;
    nb[i] = (int32_t)k;
    lbt[i] = (int32_t)last;
  }
  if (!bad) {
    av__wloc_t loc = {.source = c->source, .path = path, .err = c->err,
                      .bt_object_form = objform};
    av__bt_ids_t ids = {.lists = (const int64_t *const *)lists};
    w = av__workload_block_table(&ids, nb, (int32_t)n, (int)bs, lbt, &sc->heads, &loc);
  }
  for (size_t i = 0; lists && i < n; i++) free(lists[i]);
  free(lists);
  free(nb);
  free(lbt);
  free(objform);
  return w;
}
