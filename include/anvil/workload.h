/* Batches: a forest of KV nodes with each decode request pointing at the node that ends its
 * KV path. Build one from a serving engine's block table, from PAT/FastTree levels, from an
 * explicit node list, or from any JSON workload spec (docs/experiments.md). */
#ifndef ANVIL_WORKLOAD_H
#define ANVIL_WORKLOAD_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_workload anvil_workload_t;

typedef enum { ANVIL_DTYPE_FP16 = 0, ANVIL_DTYPE_BF16 = 1 } anvil_dtype_t;

/* Attention heads; a NULL anvil_heads_t * means 32 query heads, 8 KV heads, d 128, fp16. */
typedef struct anvil_heads {
  int q_heads, kv_heads, head_dim;  /* head_dim in {64, 128, 256}; q_heads % kv_heads == 0 */
  int dtype;                        /* anvil_dtype_t */
} anvil_heads_t;

/* A vLLM-style block table: row r of `table` (row_stride entries apart) holds request r's
 * physical KV block ids, of which the first ceil(kv_tokens[r] / block_size) are used.
 * Requests sharing a prefix share its blocks. Caller owns *out. */
int anvil_workload_from_block_table(const int32_t *table, int64_t row_stride,
                                    const int32_t *kv_tokens, int32_t n_requests,
                                    int block_size, const anvil_heads_t *heads,
                                    anvil_workload_t **out, anvil_error_t *err);
/* PAT/FastTree B/L notation: level i has B[i] nodes of L[i] tokens. */
int anvil_workload_from_levels(const int64_t *B, const int64_t *L, int n_levels,
                               const anvil_heads_t *heads, anvil_workload_t **out,
                               anvil_error_t *err);
/* Explicit forest: parents[u] (-1 for roots; parents precede children), kv_tokens[u], and
 * each request's last node. */
int anvil_workload_from_explicit(const int32_t *parents, const int64_t *kv_tokens,
                                 int32_t n_nodes, const int32_t *request_node,
                                 int32_t n_requests, const anvil_heads_t *heads,
                                 anvil_workload_t **out, anvil_error_t *err);
/* Any JSON workload spec ({"kind": "random", "seed": 7, ...}); `source` names the text in
 * messages (NULL: "workload"). Keys the spec leaves out come from heads. */
int anvil_workload_from_json(const char *json_text, const char *source,
                             const anvil_heads_t *heads, anvil_workload_t **out,
                             anvil_error_t *err);
/* The same from a spec file; messages name the file as `anvil plan SPEC.json` does. */
int anvil_workload_load(const char *path, const anvil_heads_t *heads, anvil_workload_t **out,
                        anvil_error_t *err);
void anvil_workload_destroy(anvil_workload_t *w);

/* The explicit JSON form. Caller frees with anvil_free. */
char *anvil_workload_to_json(const anvil_workload_t *w);

typedef struct anvil_workload_info {
  int32_t requests, nodes, depth;
  anvil_heads_t heads;
  int block_size;
  int64_t unique_kv_tokens, query_centric_kv_tokens;
  double unique_kv_bytes, query_centric_kv_bytes, sharing_ratio;
} anvil_workload_info_t;
void anvil_workload_info(const anvil_workload_t *w, anvil_workload_info_t *out);
/* Node arrays (n = info.nodes; any pointer may be NULL) and each request's last node. */
void anvil_workload_nodes(const anvil_workload_t *w, int32_t *parents, int64_t *kv_tokens);
void anvil_workload_requests(const anvil_workload_t *w, int32_t *request_node,
                             int64_t *request_kv_tokens);

#ifdef __cplusplus
}
#endif
#endif
