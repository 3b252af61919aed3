/* A batch's figures (`anvil describe`): requests, nodes, depth, sharing per level, unique and
 * query-centric KV bytes, their ratio, and its floors on a GPU (bandwidth, compute,
 * roofline). */
#ifndef ANVIL_DESCRIBE_H
#define ANVIL_DESCRIBE_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_description {
  char name[1024];                /* the workload's, else the file or the --levels text */
  int q_heads, kv_heads, group, head_dim, block_size_tokens;
  char dtype[8];
  int32_t requests, nodes, depth, roots, leaves;
  double mean_share, max_share;   /* requests per node */
  int64_t unique_kv_tokens, query_centric_kv_tokens;
  double unique_kv_bytes, query_centric_kv_bytes, sharing_ratio;
  char gpu[64];
  double hbm_GBps, tensor_tflops; /* hbm_GBps: the floor's (the read stream where measured) */
  double floor_unique_us, floor_query_centric_us;  /* the KV at the bandwidth */
  double gflop, compute_us;       /* the attention's work, and at the tensor rate */
  double floor_us;                /* roofline: the larger of the memory and compute floors */
  int compute_bound;
} anvil_description_t;

/* Nodes, lengths and sharing at one depth of the forest. */
typedef struct anvil_describe_level {
  int depth;
  int32_t nodes, min_share, max_share;
  int64_t min_len, max_len;
  double mean_share;
} anvil_describe_level_t;

typedef struct anvil_describe_options {
  const char *spec, *levels;      /* exactly one: a workload spec file, or "B=1,4 L=128,32" */
  const char *gpu;                /* NULL: "H200-SXM" */
  int q_heads, kv_heads, head_dim;  /* when the spec has none; 0: 32, 8, 128 */
  /* May be NULL: the description, before the levels (anvil_describe's user pointer). */
  void (*on_description)(const anvil_description_t *d, void *user);
} anvil_describe_options_t;

/* Describes the batch into *out (may be NULL), calling on_level (may be NULL) for each
 * depth. Errors are those `anvil describe` prints. */
int anvil_describe(const anvil_describe_options_t *o,
                   void (*on_level)(const anvil_describe_level_t *l, void *user), void *user,
                   anvil_description_t *out, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
