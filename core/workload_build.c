/* Regular forests: PAT/FastTree levels (B = nodes per level, L = tokens per node), full
 * k-ary trees and degenerate trees (FlashForge §6.1: 2T..5T and DT), and the two-level
 * shared-prefix ratio workload (FlashForge §6.1 "varying shared prefix ratio"). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/workload.h"
#include "core/workload_internal.h"

/* Fills levels that the caller validated: level i has B[i] nodes of L[i] tokens; the
 * children of level i are spread over the B[i-1] parents as evenly as possible, the first
 * B[i] % B[i-1] parents taking one more, each parent's children contiguous. Each node of
 * the last level gets `per_leaf` requests. */
static av_workload_t *build_levels(const int64_t *B, const int64_t *L, int n, int per_leaf,
                                   const av_heads_t *heads, const av__wloc_t *loc) {
  int64_t total = 0;
  for (int i = 0; i < n; i++) total += B[i];
  av_workload_t *w = av_workload_create((int32_t)total, (int32_t)(B[n - 1] * per_leaf));
  if (!w) {
    av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory building %" PRId64 " nodes", total);
    return NULL;
  }
  w->heads = *heads;
  int32_t first = 0, prev_first = 0; /* first node index of this and the previous level */
  for (int i = 0; i < n; i++) {
    int64_t q = i ? B[i] / B[i - 1] : 0, r = i ? B[i] % B[i - 1] : 0, big = r * (q + 1);
    for (int64_t j = 0; j < B[i]; j++) {
      av_node_t *u = &w->nodes[first + j];
      u->kv_len_tokens = L[i];
      if (i == 0) {
        u->parent = -1;
      } else {
        int64_t p = j < big ? j / (q + 1) : r + (j - big) / q;
        u->parent = (int32_t)(prev_first + p);
      }
    }
    prev_first = first;
    first += (int32_t)B[i];
  }
  for (int64_t j = 0; j < B[n - 1]; j++)
    for (int k = 0; k < per_leaf; k++)
      w->request_node[j * per_leaf + k] = (int32_t)(prev_first + j);
  if (av__workload_finalize(w, loc)) {
    av_workload_destroy(w);
    return NULL;
  }
  return w;
}

av_workload_t *av__workload_levels(const int64_t *B, const int64_t *L, int n_levels,
                                   const av_heads_t *heads, const av__wloc_t *loc) {
  char rel[32];
  if (n_levels < 1) {
    av__wl_error(loc, AV_ERR_SCHEMA, "B", "no levels; expected B and L with one entry per level");
    return NULL;
  }
  int64_t total = 0;
  for (int i = 0; i < n_levels; i++) {
    snprintf(rel, sizeof rel, "B[%d]", i);
    if (B[i] < 1 || B[i] > AV_WL_MAX_NODES) {
      av__wl_error(loc, AV_ERR_RANGE, rel,
                   "%" PRId64 " nodes is out of range; expected an integer in [1, %d]", B[i],
                   AV_WL_MAX_NODES);
      return NULL;
    }
    if (i > 0 && B[i] < B[i - 1]) {
      av__wl_error(loc, AV_ERR_SCHEMA, rel,
                   "level %d has %" PRId64 " nodes, fewer than the %" PRId64
                   " nodes of level %d; every node needs at least one child, so B must not "
                   "decrease",
                   i, B[i], B[i - 1], i - 1);
      return NULL;
    }
    total += B[i];
    if (total > AV_WL_MAX_NODES) {
      av__wl_error(loc, AV_ERR_RANGE, "B",
                   "the levels have more than %d nodes in total; at most %d are supported",
                   AV_WL_MAX_NODES, AV_WL_MAX_NODES);
      return NULL;
    }
    snprintf(rel, sizeof rel, "L[%d]", i);
    if (L[i] < 1 || L[i] > AV_WL_MAX_NODE_TOKENS) {
      av__wl_error(loc, AV_ERR_RANGE, rel,
                   "node length %" PRId64 " is out of range; expected an integer in [1, %d]",
                   L[i], AV_WL_MAX_NODE_TOKENS);
      return NULL;
    }
  }
  if (B[n_levels - 1] > AV_WL_MAX_REQUESTS) {
    snprintf(rel, sizeof rel, "B[%d]", n_levels - 1);
    av__wl_error(loc, AV_ERR_RANGE, rel,
                 "batch size %" PRId64 " (the last level) is out of range; at most %d requests "
                 "are supported",
                 B[n_levels - 1], AV_WL_MAX_REQUESTS);
    return NULL;
  }
  if (av__heads_check(heads, loc)) return NULL;
  av_workload_t *w = build_levels(B, L, n_levels, 1, heads, loc);
  if (w) {
    char bs[64], ls[64];
    av__wl_format_list(bs, sizeof bs, B, n_levels);
    av__wl_format_list(ls, sizeof ls, L, n_levels);
    av__workload_set_name(w, "levels B=%s L=%s", bs, ls);
  }
  return w;
}

/* Per-level lengths of kary/degenerate: one per level, or one for every level. */
static int check_lengths(const int64_t *L, int n_L, int depth, const av__wloc_t *loc,
                         int64_t *out) {
  if (n_L != depth && n_L != 1)
    return av__wl_error(loc, AV_ERR_MISMATCH, "L",
                        "L has %d entries but the tree has %d levels; expected one length per "
                        "level or a single length for all",
                        n_L, depth);
  for (int i = 0; i < depth; i++) {
    int64_t len = L[n_L == 1 ? 0 : i];
    if (len < 1 || len > AV_WL_MAX_NODE_TOKENS) {
      char rel[32];
      snprintf(rel, sizeof rel, "L[%d]", n_L == 1 ? 0 : i);
      return av__wl_error(loc, AV_ERR_RANGE, rel,
                          "node length %" PRId64 " is out of range; expected an integer in "
                          "[1, %d]",
                          len, AV_WL_MAX_NODE_TOKENS);
    }
    out[i] = len;
  }
  return AV_OK;
}

static int check_shape(int arity, int depth, const av__wloc_t *loc) {
  if (arity < 1 || arity > AV_WL_MAX_NODES)
    return av__wl_error(loc, AV_ERR_RANGE, "arity",
                        "arity %d is out of range; expected an integer in [1, %d]", arity,
                        AV_WL_MAX_NODES);
  if (depth < 1 || depth > 64)
    return av__wl_error(loc, AV_ERR_RANGE, "depth",
                        "depth %d is out of range; expected an integer in [1, 64]", depth);
  return AV_OK;
}

av_workload_t *av__workload_kary(int arity, int depth, const int64_t *L, int n_L,
                                 int requests_per_leaf, const av_heads_t *heads,
                                 const av__wloc_t *loc) {
  if (check_shape(arity, depth, loc)) return NULL;
  int64_t B[64], len[64], total = 0, width = 1;
  if (check_lengths(L, n_L, depth, loc, len)) return NULL;
  for (int i = 0; i < depth; i++) {
    if (i) width *= arity;
    B[i] = width;
    total += width;
    if (total > AV_WL_MAX_NODES) {
      av__wl_error(loc, AV_ERR_RANGE, NULL,
                   "a %d-ary tree of depth %d has more than %d nodes; at most %d are supported",
                   arity, depth, AV_WL_MAX_NODES, AV_WL_MAX_NODES);
      return NULL;
    }
  }
  if (requests_per_leaf < 1 || requests_per_leaf > AV_WL_MAX_REQUESTS ||
      width * requests_per_leaf > AV_WL_MAX_REQUESTS) {
    av__wl_error(loc, AV_ERR_RANGE, "requests_per_leaf",
                 "%d requests on each of %" PRId64 " leaves is out of range; expected at least "
                 "1 and at most %d requests in total",
                 requests_per_leaf, width, AV_WL_MAX_REQUESTS);
    return NULL;
  }
  if (av__heads_check(heads, loc)) return NULL;
  av_workload_t *w = build_levels(B, len, depth, requests_per_leaf, heads, loc);
  if (w) av__workload_set_name(w, "kary %d-ary depth %d", arity, depth);
  return w;
}

/* FlashForge §6.1 DT: "only the left nodes have children": level i >= 1 holds `arity`
 * children of the first node of level i-1; every other node is a leaf with one request. */
av_workload_t *av__workload_degenerate(int arity, int depth, const int64_t *L, int n_L,
                                       const av_heads_t *heads, const av__wloc_t *loc) {
  if (check_shape(arity, depth, loc)) return NULL;
  int64_t len[64];
  if (check_lengths(L, n_L, depth, loc, len)) return NULL;
  int64_t n_nodes = 1 + (int64_t)arity * (depth - 1);
  if (n_nodes > AV_WL_MAX_NODES) {
    av__wl_error(loc, AV_ERR_RANGE, NULL,
                 "a degenerate tree of arity %d and depth %d has %" PRId64
                 " nodes; at most %d are supported",
                 arity, depth, n_nodes, AV_WL_MAX_NODES);
    return NULL;
  }
  /* Leaves: the root alone for depth 1; else arity-1 per inner level plus the last level. */
  int64_t n_req = depth == 1 ? 1 : (int64_t)(arity - 1) * (depth - 2) + arity;
  if (n_req > AV_WL_MAX_REQUESTS) {
    av__wl_error(loc, AV_ERR_RANGE, NULL,
                 "a degenerate tree of arity %d and depth %d has %" PRId64
                 " leaves; at most %d requests are supported",
                 arity, depth, n_req, AV_WL_MAX_REQUESTS);
    return NULL;
  }
  if (av__heads_check(heads, loc)) return NULL;
  av_workload_t *w = av_workload_create((int32_t)n_nodes, (int32_t)n_req);
  if (!w) {
    av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory");
    return NULL;
  }
  w->heads = *heads;
  w->nodes[0].parent = -1;
  w->nodes[0].kv_len_tokens = len[0];
  int32_t r = 0;
  for (int i = 1; i < depth; i++) {
    int32_t first = 1 + (int32_t)arity * (i - 1), parent = i == 1 ? 0 : first - arity;
    for (int k = 0; k < arity; k++) {
      w->nodes[first + k].parent = parent;
      w->nodes[first + k].kv_len_tokens = len[i];
      if (k > 0 || i == depth - 1) w->request_node[r++] = first + k;
    }
  }
  if (depth == 1) w->request_node[r++] = 0;
  if (av__workload_finalize(w, loc)) {
    av_workload_destroy(w);
    return NULL;
  }
  av__workload_set_name(w, "degenerate %d-ary depth %d", arity, depth);
  return w;
}

/* Two-level tree: a root of round(ratio * context) shared tokens and one suffix of the
 * rest per request. Ratio 0 gives `batch` independent roots, ratio 1 one root that every
 * request ends at. (FlashForge §6.1 measures the ratio over the tree's tokens; here it is
 * over each request's context, which is what a serving engine sees per request.) */
av_workload_t *av__workload_ratio(int64_t batch, int64_t context_tokens, double shared_ratio,
                                  const av_heads_t *heads, const av__wloc_t *loc) {
  if (batch < 1 || batch > AV_WL_MAX_REQUESTS) {
    av__wl_error(loc, AV_ERR_RANGE, "batch",
                 "batch %" PRId64 " is out of range; expected an integer in [1, %d]", batch,
                 AV_WL_MAX_REQUESTS);
    return NULL;
  }
  if (context_tokens < 1 || context_tokens > AV_WL_MAX_NODE_TOKENS) {
    av__wl_error(loc, AV_ERR_RANGE, "context",
                 "context %" PRId64 " is out of range; expected an integer in [1, %d] tokens",
                 context_tokens, AV_WL_MAX_NODE_TOKENS);
    return NULL;
  }
  if (!(shared_ratio >= 0.0 && shared_ratio <= 1.0)) {
    av__wl_error(loc, AV_ERR_RANGE, "shared_ratio",
                 "shared ratio %g is out of range; expected a number in [0, 1]", shared_ratio);
    return NULL;
  }
  if (av__heads_check(heads, loc)) return NULL;
  int64_t shared = llround(shared_ratio * (double)context_tokens);
  int64_t suffix = context_tokens - shared;
  int32_t n_nodes = (int32_t)(shared == 0 ? batch : suffix == 0 ? 1 : batch + 1);
  av_workload_t *w = av_workload_create(n_nodes, (int32_t)batch);
  if (!w) {
    av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory");
    return NULL;
  }
  w->heads = *heads;
  for (int32_t r = 0; r < (int32_t)batch; r++) {
    if (shared == 0) {
      w->nodes[r].parent = -1;
      w->nodes[r].kv_len_tokens = suffix;
      w->request_node[r] = r;
    } else if (suffix == 0) {
      w->request_node[r] = 0;
    } else {
      w->nodes[r + 1].parent = 0;
      w->nodes[r + 1].kv_len_tokens = suffix;
      w->request_node[r] = r + 1;
    }
  }
  if (shared > 0) w->nodes[0].kv_len_tokens = shared;
  if (av__workload_finalize(w, loc)) {
    av_workload_destroy(w);
    return NULL;
  }
  av__workload_set_name(w, "ratio batch %" PRId64 " context %" PRId64 " shared %g", batch,
                        context_tokens, shared_ratio);
  return w;
}

/* --- public entry points: messages name the arguments ----------------------------- */


av_workload_t *av_workload_from_levels(const int64_t *B, const int64_t *L, int n_levels,
                                       const av_heads_t *heads, av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  heads = av__heads_or_default(heads, &hbuf);
  return av__workload_levels(B, L, n_levels, heads, &loc);
}

av_workload_t *av_workload_from_kary(int arity, int depth, const int64_t *L, int n_L,
                                     int requests_per_leaf, const av_heads_t *heads,
                                     av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  heads = av__heads_or_default(heads, &hbuf);
  return av__workload_kary(arity, depth, L, n_L, requests_per_leaf, heads, &loc);
}

av_workload_t *av_workload_degenerate(int arity, int depth, const int64_t *L, int n_L,
                                      const av_heads_t *heads, av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  heads = av__heads_or_default(heads, &hbuf);
  return av__workload_degenerate(arity, depth, L, n_L, heads, &loc);
}

av_workload_t *av_workload_from_ratio(int64_t batch, int64_t context_tokens,
                                      double shared_ratio, const av_heads_t *heads,
                                      av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  heads = av__heads_or_default(heads, &hbuf);
  return av__workload_ratio(batch, context_tokens, shared_ratio, heads, &loc);
}
