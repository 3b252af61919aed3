/* One decode batch: a forest of KV nodes, each request (one decode query) pointing at a node
 * whose root->node path is its KV cache. Builders: levels (PAT/FastTree B/L notation), kary,
 * degenerate, ratio, random (seeded), block_table (radix tree of block-id lists), explicit;
 * JSON specs of any of them, and JSONL traces of batches. */
#ifndef AV_WORKLOAD_H
#define AV_WORKLOAD_H

#include <jansson.h>
#include <stdint.h>

#include "core/error.h"
#include "core/json_util.h"

typedef enum { AV_DTYPE_FP16 = 0, AV_DTYPE_BF16 = 1 } av_dtype_t;

/* Attention heads of the batch. GQA group g = hq / hkv; a plan is made for one KV head and
 * replicated across hkv (DESIGN §Data model). */
typedef struct av_heads {
  int hq, hkv, head_dim;  /* head_dim in {64, 128, 256} */
  av_dtype_t dtype;
} av_heads_t;

static inline int av_heads_group(const av_heads_t *h) { return h->hq / h->hkv; }
static inline int av_dtype_bytes(av_dtype_t t) { (void)t; return 2; }
const char *av_dtype_name(av_dtype_t t);

typedef struct av_node {
  int32_t parent;          /* -1 for a root; parents always precede children */
  int64_t kv_len_tokens;   /* >= 1 */
  /* Derived by av_workload_finalize: */
  int32_t depth;           /* root = 0 */
  int32_t share;           /* requests whose path contains this node */
  int64_t path_offset_tokens;  /* tokens on the path before this node */
  int32_t first_child, next_sibling;  /* -1 when none; children in index order */
} av_node_t;

typedef struct av_workload {
  char name[128];
  av_heads_t heads;
  int block_size_tokens;   /* paged-KV block size (default 16); node lengths need not be
                              multiples of it */
  int32_t n_nodes;
  av_node_t *nodes;
  int32_t n_requests;
  int32_t *request_node;   /* request -> last node of its KV path (any node, not only leaves) */
  /* Derived by av_workload_finalize: */
  int64_t *request_kv_tokens;  /* total path length per request */
  int32_t *node_req_offsets;   /* n_nodes+1: requests below node u are */
  int32_t *node_reqs;          /*   node_reqs[node_req_offsets[u] .. node_req_offsets[u+1]) */
  int32_t max_depth;           /* deepest node's depth + 1 (levels) */
} av_workload_t;

/* Derived figures (`anvil describe`, the quickstart table). Bytes are for all hkv heads,
 * K and V, at the batch's element size. */
typedef struct av_workload_stats {
  int32_t requests, nodes, depth, roots, leaves;
  double mean_share, max_share;          /* over nodes */
  int64_t unique_kv_tokens;              /* sum of node lengths */
  int64_t query_centric_kv_tokens;       /* sum of request path lengths */
  double unique_kv_bytes, query_centric_kv_bytes, sharing_ratio; /* qc / unique */
} av_workload_stats_t;

/* --- construction ------------------------------------------------------------------- */
/* Empty workload with room for the given counts. Caller owns; av_workload_destroy. */
av_workload_t *av_workload_create(int32_t n_nodes, int32_t n_requests);
void av_workload_destroy(av_workload_t *w);
/* Validates structure (parents precede children, lengths >= 1, heads) and computes the
 * derived fields. Builders call it; so must code that fills a workload by hand. */
int av_workload_finalize(av_workload_t *w, av_error_t *err);
/* Deep copy. Caller owns. */
av_workload_t *av_workload_clone(const av_workload_t *w);
/* Structural equality (same nodes, parents, lengths, request nodes, heads). */
int av_workload_equal(const av_workload_t *a, const av_workload_t *b);
/* Stable 64-bit hash of the structure and heads (plans record it). */
uint64_t av_workload_hash(const av_workload_t *w);

/* Builders: each returns a finalized workload the caller owns, or NULL with *err set. `c`
 * and `path` name the source for messages (c may be NULL for programmatic use). */
av_workload_t *av_workload_from_levels(const int64_t *B, const int64_t *L, int n_levels,
                                       const av_heads_t *heads, av_error_t *err);
av_workload_t *av_workload_from_kary(int arity, int depth, const int64_t *L, int n_L,
                                     int requests_per_leaf, const av_heads_t *heads,
                                     av_error_t *err);
av_workload_t *av_workload_degenerate(int arity, int depth, const int64_t *L, int n_L,
                                      const av_heads_t *heads, av_error_t *err);
av_workload_t *av_workload_from_ratio(int64_t batch, int64_t context_tokens,
                                      double shared_ratio, const av_heads_t *heads,
                                      av_error_t *err);
typedef struct av_random_spec {
  uint64_t seed;
  int min_depth, max_depth;        /* 1..16 */
  int max_requests;                /* upper bound on requests */
  int max_children;                /* branching per node */
  int64_t min_len, max_len;        /* node lengths, log-uniform */
} av_random_spec_t;
av_workload_t *av_workload_random(const av_random_spec_t *spec, const av_heads_t *heads,
                                  av_error_t *err);
/* Per-request block-id lists (ids are opaque), block size in tokens, and optionally the
 * number of tokens used in each request's last block (0 = full). */
av_workload_t *av_workload_from_block_table(const int64_t *const *blocks,
                                            const int32_t *n_blocks, int32_t n_requests,
                                            int block_size, const int32_t *last_block_tokens,
                                            const av_heads_t *heads, av_error_t *err);
/* An int32 block table read in place: row r (row_stride entries apart) holds request r's
 * ids, of which the first n_blocks[r] (at most row_stride) are used. */
typedef struct av_block_rows {
  const int32_t *table;
  int64_t row_stride;
  const int32_t *n_blocks;
  int32_t n_requests;
} av_block_rows_t;
/* The same from block rows. `shared` (n_requests entries, or NULL) receives the leading
 * blocks each request shares with the previous one. */
av_workload_t *av_workload_from_block_rows(const av_block_rows_t *rows, int block_size,
                                           const int32_t *last_block_tokens,
                                           const av_heads_t *heads, int32_t *shared,
                                           av_error_t *err);
/* The block table of w (block ids are node-major sequential numbers). Caller frees each
 * list and the arrays. */
int av_workload_to_block_table(const av_workload_t *w, int block_size, int64_t ***blocks,
                               int32_t **n_blocks, int32_t **last_block_tokens,
                               av_error_t *err);

/* A workload from a JSON spec object ({"kind": "levels", "B": [...], "L": [...],
 * "heads": [32, 8], ...}); keys the spec leaves out (heads, head_dim, dtype, block_size)
 * come from `defaults` (NULL = 32/8 heads, d 128, fp16, block 16). `c->source` and `path`
 * locate it for messages. */
av_workload_t *av_workload_from_json(const json_t *spec, const av_heads_t *defaults,
                                     const av_jctx_t *c, const char *path);
/* The explicit JSON form of w ({"kind": "explicit", "nodes": [...], "requests": [...]}).
 * Caller owns. */
json_t *av_workload_to_json(const av_workload_t *w);

/* JSONL traces: one workload spec per line. */
typedef struct av_trace av_trace_t;
av_trace_t *av_trace_load(const char *path, const av_heads_t *default_heads, av_error_t *err);
int32_t av_trace_steps(const av_trace_t *t);
const av_workload_t *av_trace_step(const av_trace_t *t, int32_t i);
void av_trace_destroy(av_trace_t *t);

/* --- figures ---------------------------------------------------------------------- */
void av_workload_stats(const av_workload_t *w, av_workload_stats_t *out);
/* Bandwidth floor: unique KV bytes / bandwidth (GB/s), in microseconds. */
double av_workload_floor_us(const av_workload_t *w, double bandwidth_GBps);
/* Attention FLOPs of the batch: QK^T and PV over every request's path, all query heads
 * (4 x hq x d x path tokens). */
double av_workload_flops(const av_workload_t *w);

/* The roofline floor (docs/design.md#numbers-that-matter): unique KV bytes over the floor's
 * bandwidth (mem_us: the measured read stream, av_gpu_floor_bw_GBps) and attention FLOPs over
 * the dense fp16 tensor rate (compute_us); us is the larger. datasheet_us is the same floor
 * with the datasheet's bandwidth. A rate of 0 leaves its part 0. */
typedef struct av_floor {
  double mem_us, compute_us, us;
  double datasheet_us;
} av_floor_t;
struct av_gpu;
void av_workload_floor(const av_workload_t *w, const struct av_gpu *g, av_floor_t *out);

#endif
