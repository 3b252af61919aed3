/* The workload forest (DESIGN §Data model): ownership, validation and derived fields
 * (depth, share, path offsets, per-node request lists), identity (equality, stable hash)
 * and the figures of `anvil describe` (unique vs query-centric KV bytes, bandwidth floor). */
#include "core/workload.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload_internal.h"
#include "core/gpu.h"

const char *av_dtype_name(av_dtype_t t) {
  switch (t) {
    case AV_DTYPE_FP16: return "fp16";
    case AV_DTYPE_BF16: return "bf16";
  }
  return "unknown";
}

void av__wl_path(const av__wloc_t *loc, const char *rel, char *out, size_t size) {
  const char *prefix = loc && loc->path ? loc->path : "";
  if (!rel || !rel[0])
    snprintf(out, size, "%s", prefix);
  else if (!prefix[0] || rel[0] == '[')
    snprintf(out, size, "%s%s", prefix, rel);
  else
    snprintf(out, size, "%s.%s", prefix, rel);
}

int av__wl_error(const av__wloc_t *loc, int code, const char *rel, const char *fmt, ...) {
  if (!loc || !loc->err || loc->err->code != AV_OK) return code;
  char path[256], msg[768];
  av__wl_path(loc, rel, path, sizeof path);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return av_error_set(loc->err, code, loc->source, path, "%s", msg);
}

void av__workload_set_name(av_workload_t *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(w->name, sizeof w->name, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof w->name) memcpy(w->name + sizeof w->name - 4, "...", 4);
}

void av__wl_format_list(char *out, size_t size, const int64_t *v, int n) {
  size_t used = (size_t)snprintf(out, size, "[");
  for (int i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%" PRId64, i ? "," : "", v[i]);
  if (used < size) used += (size_t)snprintf(out + used, size - used, "]");
  if (used >= size && size >= 5) memcpy(out + size - 5, "...]", 5);
}

const av_heads_t *av__heads_or_default(const av_heads_t *h, av_heads_t *buf) {
  if (h) return h;
  *buf = (av_heads_t){.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  return buf;
}

int av__heads_check(const av_heads_t *h, const av__wloc_t *loc) {
  if (h->hq < 1 || h->hkv < 1)
    return av__wl_error(loc, AV_ERR_RANGE, "heads",
                        "heads (%d, %d) must both be >= 1; expected [hq, hkv]", h->hq, h->hkv);
  if (h->hq % h->hkv != 0)
    return av__wl_error(loc, AV_ERR_MISMATCH, "heads",
                        "hq %d is not a multiple of hkv %d; the GQA group hq/hkv must be an "
                        "integer",
                        h->hq, h->hkv);
  if (h->head_dim != 64 && h->head_dim != 128 && h->head_dim != 256)
    return av__wl_error(loc, AV_ERR_UNSUPPORTED, "head_dim",
                        "unsupported head dim %d; expected one of: 64, 128, 256", h->head_dim);
  if (h->dtype != AV_DTYPE_FP16 && h->dtype != AV_DTYPE_BF16)
    return av__wl_error(loc, AV_ERR_UNSUPPORTED, "dtype",
                        "unsupported dtype %d; expected one of: fp16, bf16", (int)h->dtype);
  return AV_OK;
}

static void free_derived(av_workload_t *w) {
  free(w->request_kv_tokens);
  free(w->node_req_offsets);
  free(w->node_reqs);
  w->request_kv_tokens = NULL;
  w->node_req_offsets = NULL;
  w->node_reqs = NULL;
}

av_workload_t *av_workload_create(int32_t n_nodes, int32_t n_requests) {
  if (n_nodes < 0 || n_nodes > AV_WL_MAX_NODES || n_requests < 0 ||
      n_requests > AV_WL_MAX_REQUESTS)
    return NULL;
  av_workload_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->heads = (av_heads_t){.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  w->block_size_tokens = 16;
  w->n_nodes = n_nodes;
  w->n_requests = n_requests;
  w->nodes = calloc(n_nodes ? (size_t)n_nodes : 1, sizeof *w->nodes);
  w->request_node = calloc(n_requests ? (size_t)n_requests : 1, sizeof *w->request_node);
  if (!w->nodes || !w->request_node) {
    av_workload_destroy(w);
    return NULL;
  }
  for (int32_t i = 0; i < n_nodes; i++) {
    w->nodes[i].parent = -1;
    w->nodes[i].first_child = w->nodes[i].next_sibling = -1;
  }
  return w;
}

void av_workload_destroy(av_workload_t *w) {
  if (!w) return;
  free_derived(w);
  free(w->nodes);
  free(w->request_node);
  free(w);
}

/* Checks what a hand-filled workload can get wrong; returns AV_OK or the error. */
static int validate(const av_workload_t *w, const av__wloc_t *loc) {
  char rel[64];
  if (av__heads_check(&w->heads, loc)) return loc->err ? loc->err->code : AV_ERR_RANGE;
  if (w->block_size_tokens < 1 || w->block_size_tokens > AV_WL_MAX_BLOCK_SIZE)
    return av__wl_error(loc, AV_ERR_RANGE, "block_size",
                        "block size %d is out of range; expected an integer in [1, %d]",
                        w->block_size_tokens, AV_WL_MAX_BLOCK_SIZE);
  if (w->n_requests < 1)
    return av__wl_error(loc, AV_ERR_SCHEMA, "requests",
                        "empty batch: no requests; expected at least one request");
  if (w->n_requests > AV_WL_MAX_REQUESTS)
    return av__wl_error(loc, AV_ERR_RANGE, "requests",
                        "%" PRId32 " requests; at most %d are supported", w->n_requests,
                        AV_WL_MAX_REQUESTS);
  if (w->n_nodes < 1)
    return av__wl_error(loc, AV_ERR_SCHEMA, "nodes",
                        "empty forest: no nodes; expected at least one node");
  if (w->n_nodes > AV_WL_MAX_NODES)
    return av__wl_error(loc, AV_ERR_RANGE, "nodes",
                        "%" PRId32 " nodes; at most %d are supported", w->n_nodes,
                        AV_WL_MAX_NODES);
  for (int32_t i = 0; i < w->n_nodes; i++) {
    const av_node_t *u = &w->nodes[i];
    if (u->parent < -1 || u->parent >= i) {
      snprintf(rel, sizeof rel, "nodes[%" PRId32 "].parent", i);
      if (i == 0)
        return av__wl_error(loc, AV_ERR_SCHEMA, rel,
                            "parent %" PRId32 " of node 0 must be -1 (a root)", u->parent);
      return av__wl_error(loc, AV_ERR_SCHEMA, rel,
                          "parent %" PRId32 " of node %" PRId32
                          " must be -1 (a root) or an earlier node in [0, %" PRId32
                          "]; parents precede children",
                          u->parent, i, i - 1);
    }
    if (u->kv_len_tokens < 1 || u->kv_len_tokens > AV_WL_MAX_NODE_TOKENS) {
      snprintf(rel, sizeof rel, "nodes[%" PRId32 "].kv_len", i);
      return av__wl_error(loc, AV_ERR_RANGE, rel,
                          "node length %" PRId64 " is out of range; expected [1, %d] tokens",
                          u->kv_len_tokens, AV_WL_MAX_NODE_TOKENS);
    }
  }
  for (int32_t r = 0; r < w->n_requests; r++) {
    if (w->request_node[r] < 0 || w->request_node[r] >= w->n_nodes) {
      snprintf(rel, sizeof rel, "requests[%" PRId32 "]", r);
      return av__wl_error(loc, AV_ERR_RANGE, rel,
                          "request %" PRId32 " points at node %" PRId32
                          ", which does not exist; expected a node in [0, %" PRId32 "]",
                          r, w->request_node[r], w->n_nodes - 1);
    }
  }
  return AV_OK;
}

/* Depth, path offsets, sibling lists and max_depth; checks the path-length cap. */
static int derive_tree(av_workload_t *w, const av__wloc_t *loc) {
  char rel[64];
  w->max_depth = 0;
  for (int32_t i = 0; i < w->n_nodes; i++) {
    av_node_t *u = &w->nodes[i];
    u->first_child = u->next_sibling = -1;
    u->share = 0;
    if (u->parent < 0) {
      u->depth = 0;
      u->path_offset_tokens = 0;
    } else {
      const av_node_t *p = &w->nodes[u->parent];
      u->depth = p->depth + 1;
      u->path_offset_tokens = p->path_offset_tokens + p->kv_len_tokens;
    }
    if (u->path_offset_tokens + u->kv_len_tokens > AV_WL_MAX_PATH_TOKENS) {
      snprintf(rel, sizeof rel, "nodes[%" PRId32 "]", i);
      return av__wl_error(loc, AV_ERR_RANGE, rel,
                          "the KV path ending at node %" PRId32 " has %" PRId64
                          " tokens; at most %" PRId64 " are supported",
                          i, u->path_offset_tokens + u->kv_len_tokens, AV_WL_MAX_PATH_TOKENS);
    }
    if (u->depth + 1 > w->max_depth) w->max_depth = u->depth + 1;
  }
  for (int32_t i = w->n_nodes - 1; i >= 0; i--) {
    av_node_t *u = &w->nodes[i];
    if (u->parent < 0) continue;
    u->next_sibling = w->nodes[u->parent].first_child;
    w->nodes[u->parent].first_child = i;
  }
  return AV_OK;
}

/* Shares and the per-node request lists (requests in index order within each node). */
static int derive_requests(av_workload_t *w, const av__wloc_t *loc) {
  int64_t share_sum = 0;
  for (int32_t r = 0; r < w->n_requests; r++)
    share_sum += w->nodes[w->request_node[r]].depth + 1;
  if (share_sum > AV_WL_MAX_SHARE_SUM)
    return av__wl_error(loc, AV_ERR_RANGE, "requests",
                        "the request paths visit %" PRId64
                        " nodes in total (sum of shares); at most %d are supported",
                        share_sum, AV_WL_MAX_SHARE_SUM);
  int64_t *kv = malloc((size_t)w->n_requests * sizeof *kv);
  int32_t *off = calloc((size_t)w->n_nodes + 1, sizeof *off);
  int32_t *reqs = malloc((size_t)(share_sum ? share_sum : 1) * sizeof *reqs);
  if (!kv || !off || !reqs) {
    free(kv);
    free(off);
    free(reqs);
    return av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory finalizing the workload");
  }
  for (int32_t r = 0; r < w->n_requests; r++) {
    const av_node_t *last = &w->nodes[w->request_node[r]];
    kv[r] = last->path_offset_tokens + last->kv_len_tokens;
    for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) w->nodes[u].share++;
  }
  for (int32_t i = 0; i < w->n_nodes; i++) {
    if (w->nodes[i].share == 0) {
      free(kv);
      free(off);
      free(reqs);
      char rel[64];
      snprintf(rel, sizeof rel, "nodes[%" PRId32 "]", i);
      return av__wl_error(loc, AV_ERR_SCHEMA, rel,
                          "node %" PRId32 " is on no request's path; every node needs a "
                          "request that ends at it or below it",
                          i);
    }
    off[i + 1] = off[i] + w->nodes[i].share;
  }
  /* Fill by a cursor per node; requests arrive in index order, so lists come out sorted. */
  int32_t *cur = malloc((size_t)w->n_nodes * sizeof *cur);
  if (!cur) {
    free(kv);
    free(off);
    free(reqs);
    return av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory finalizing the workload");
  }
  memcpy(cur, off, (size_t)w->n_nodes * sizeof *cur);
  for (int32_t r = 0; r < w->n_requests; r++)
    for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) reqs[cur[u]++] = r;
  free(cur);
  free_derived(w);
  w->request_kv_tokens = kv;
  w->node_req_offsets = off;
  w->node_reqs = reqs;
  return AV_OK;
}

int av__workload_finalize(av_workload_t *w, const av__wloc_t *loc) {
  if (!w) return av__wl_error(loc, AV_ERR_INTERNAL, NULL, "no workload to finalize");
  int rc = validate(w, loc);
  if (!rc) rc = derive_tree(w, loc);
  if (!rc) rc = derive_requests(w, loc);
  return rc;
}

int av_workload_finalize(av_workload_t *w, av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  return av__workload_finalize(w, &loc);
}

/* A planner clones its batch at every reused decode step: the arrays are copied into fresh
 * allocations, not first zeroed and initialised as av_workload_create does. */
av_workload_t *av_workload_clone(const av_workload_t *w) {
  if (!w) return NULL;
  av_workload_t *c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = *w;
  c->request_kv_tokens = NULL;
  c->node_req_offsets = NULL;
  c->node_reqs = NULL;
  c->nodes = malloc((w->n_nodes ? (size_t)w->n_nodes : 1) * sizeof *c->nodes);
  c->request_node = malloc((w->n_requests ? (size_t)w->n_requests : 1) * sizeof *c->request_node);
  if (!c->nodes || !c->request_node) {
    av_workload_destroy(c);
    return NULL;
  }
  memcpy(c->nodes, w->nodes, (size_t)w->n_nodes * sizeof *c->nodes);
  memcpy(c->request_node, w->request_node, (size_t)w->n_requests * sizeof *c->request_node);
  if (w->node_req_offsets && w->request_kv_tokens && w->node_reqs) {
    int32_t total = w->node_req_offsets[w->n_nodes];
    c->request_kv_tokens = malloc((size_t)(w->n_requests ? w->n_requests : 1) * sizeof(int64_t));
    c->node_req_offsets = malloc(((size_t)w->n_nodes + 1) * sizeof(int32_t));
    c->node_reqs = malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    if (!c->request_kv_tokens || !c->node_req_offsets || !c->node_reqs) {
      av_workload_destroy(c);
      return NULL;
    }
    memcpy(c->request_kv_tokens, w->request_kv_tokens, (size_t)w->n_requests * sizeof(int64_t));
    memcpy(c->node_req_offsets, w->node_req_offsets, ((size_t)w->n_nodes + 1) * sizeof(int32_t));
    memcpy(c->node_reqs, w->node_reqs, (size_t)total * sizeof(int32_t));
  }
  return c;
}

int av_workload_equal(const av_workload_t *a, const av_workload_t *b) {
  if (a == b) return 1;
  if (!a || !b) return 0;
  if (a->n_nodes != b->n_nodes || a->n_requests != b->n_requests) return 0;
  if (a->heads.hq != b->heads.hq || a->heads.hkv != b->heads.hkv ||
      a->heads.head_dim != b->heads.head_dim || a->heads.dtype != b->heads.dtype)
    return 0;
  for (int32_t i = 0; i < a->n_nodes; i++)
    if (a->nodes[i].parent != b->nodes[i].parent ||
        a->nodes[i].kv_len_tokens != b->nodes[i].kv_len_tokens)
      return 0;
  for (int32_t r = 0; r < a->n_requests; r++)
    if (a->request_node[r] != b->request_node[r]) return 0;
  return 1;
}

/* FNV-1a over a fixed little-endian encoding, so the hash is the same on every machine.
 * A zero byte only multiplies by the prime, so the high zero bytes of a small value are one
 * multiplication by a power of it (mod 2^64, the same hash in fewer dependent steps). */
static const uint64_t k_fnv_prime_pow[9] = {
    0x0000000000000001ull, 0x00000100000001b3ull, 0x000366000002e329ull,
    0x08a97b0004e7feabull, 0x9ffaac085635bc91ull, 0x0caee32a7d4f6a63ull,
    0xdc966432edf1c639ull, 0xc5527b8a51d3d2dbull, 0x1efac7090aef4a21ull};

static uint64_t fnv_u64(uint64_t h, uint64_t v) {
  int n = 0; /* bytes up to the highest nonzero one */
  for (uint64_t x = v; x; x >>= 8) n++;
  for (int i = 0; i < n; i++) {
    h ^= (v >> (8 * i)) & 0xffu;
    h *= 0x100000001b3ull;
  }
  return h * k_fnv_prime_pow[8 - n];
}

uint64_t av_workload_hash(const av_workload_t *w) {
  uint64_t h = 0xcbf29ce484222325ull;
  if (!w) return h;
  h = fnv_u64(h, (uint64_t)w->heads.hq);
  h = fnv_u64(h, (uint64_t)w->heads.hkv);
  h = fnv_u64(h, (uint64_t)w->heads.head_dim);
  h = fnv_u64(h, (uint64_t)w->heads.dtype);
  h = fnv_u64(h, (uint64_t)w->n_nodes);
  for (int32_t i = 0; i < w->n_nodes; i++) {
    h = fnv_u64(h, (uint64_t)(int64_t)w->nodes[i].parent);
    h = fnv_u64(h, (uint64_t)w->nodes[i].kv_len_tokens);
  }
  h = fnv_u64(h, (uint64_t)w->n_requests);
  for (int32_t r = 0; r < w->n_requests; r++) h = fnv_u64(h, (uint64_t)w->request_node[r]);
  return h;
}

/* Bytes per KV token: K and V, all hkv heads, head_dim elements each. */
static double kv_bytes_per_token(const av_heads_t *h) {
  return (double)h->hkv * h->head_dim * 2.0 * av_dtype_bytes(h->dtype);
}

void av_workload_stats(const av_workload_t *w, av_workload_stats_t *out) {
  memset(out, 0, sizeof *out);
  if (!w || w->n_nodes < 1) return;
  out->requests = w->n_requests;
  out->nodes = w->n_nodes;
  out->depth = w->max_depth;
  double share_sum = 0;
  for (int32_t i = 0; i < w->n_nodes; i++) {
    const av_node_t *u = &w->nodes[i];
    out->roots += u->parent < 0;
    out->leaves += u->first_child < 0;
    share_sum += u->share;
    if (u->share > out->max_share) out->max_share = u->share;
    out->unique_kv_tokens += u->kv_len_tokens;
    /* Each request on the node reads it once in a query-centric kernel. */
    out->query_centric_kv_tokens += (int64_t)u->share * u->kv_len_tokens;
  }
  out->mean_share = share_sum / w->n_nodes;
  double bpt = kv_bytes_per_token(&w->heads);
  out->unique_kv_bytes = (double)out->unique_kv_tokens * bpt;
  out->query_centric_kv_bytes = (double)out->query_centric_kv_tokens * bpt;
  out->sharing_ratio = out->unique_kv_tokens
                           ? (double)out->query_centric_kv_tokens / out->unique_kv_tokens
                           : 0.0;
}

double av_workload_flops(const av_workload_t *w) {
  if (!w) return 0.0;
  av_workload_stats_t s;
  av_workload_stats(w, &s);
  return 4.0 * (double)w->heads.hq * (double)w->heads.head_dim *
         (double)s.query_centric_kv_tokens;
}

void av_workload_floor(const av_workload_t *w, const av_gpu_t *g, av_floor_t *out) {
  const double tflops = g ? g->fp16_tensor_tflops : 0.0;
  out->mem_us = g ? av_workload_floor_us(w, av_gpu_floor_bw_GBps(g)) : 0.0;
  /* TFLOP/s = 1e6 FLOP/us */
  out->compute_us = tflops > 0 ? av_workload_flops(w) / (tflops * 1e6) : 0.0;
  out->us = out->mem_us > out->compute_us ? out->mem_us : out->compute_us;
  const double sheet = g ? av_workload_floor_us(w, g->hbm_bw_datasheet_GBps) : 0.0;
  out->datasheet_us = sheet > out->compute_us ? sheet : out->compute_us;
}

double av_workload_floor_us(const av_workload_t *w, double bandwidth_GBps) {
  if (!w || !(bandwidth_GBps > 0)) return 0.0;
  av_workload_stats_t s;
  av_workload_stats(w, &s);
  /* bytes / (GB/s * 1e9) seconds = bytes / (GB/s * 1e3) microseconds. */
  return s.unique_kv_bytes / (bandwidth_GBps * 1e3);
}
