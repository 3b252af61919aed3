/* The lazy-update rule (PAT §5.1) and the growth of a reused plan; see plan_reuse.h. */
#include "pipeline/plan_reuse.h"

#include <string.h>

/* Does node u of a leaf that grew keep every request ending there in its last block? */
static int within_last_block(const av_workload_t *prev, const av_workload_t *next, int32_t u) {
  int64_t bs = next->block_size_tokens > 0 ? next->block_size_tokens : 1;
  for (int32_t k = next->node_req_offsets[u]; k < next->node_req_offsets[u + 1]; k++) {
    int32_t r = next->node_reqs[k];
    if ((prev->request_kv_tokens[r] - 1) / bs != (next->request_kv_tokens[r] - 1) / bs) return 0;
  }
  return 1;
}

int av_plan_reusable(const av_workload_t *prev, const av_workload_t *next) {
  if (prev->n_nodes != next->n_nodes || prev->n_requests != next->n_requests ||
      prev->block_size_tokens != next->block_size_tokens ||
      memcmp(&prev->heads, &next->heads, sizeof prev->heads) != 0)
    return 0;
  if (memcmp(prev->request_node, next->request_node,
             (size_t)next->n_requests * sizeof *next->request_node) != 0)
    return 0;
  for (int32_t u = 0; u < next->n_nodes; u++) {
    const av_node_t *a = &prev->nodes[u], *b = &next->nodes[u];
    if (a->parent != b->parent) return 0;
    if (a->kv_len_tokens == b->kv_len_tokens) continue;
    /* Only a leaf may change, only by growing, and only within its requests' last block. */
    if (b->kv_len_tokens < a->kv_len_tokens || b->first_child != -1 ||
        !within_last_block(prev, next, u))
      return 0;
  }
  return 1;
}

/* Node u grows by g[u] tokens (-1: no request ends there); the checks of av_plan_reusable
 * read per request: only leaves grow, all requests ending at one grow alike, and each stays
 * in its last block (the structure, heads and block size cannot change here). */
int av_plan_grow_to(av_plan_t *p, av_workload_t *w, const int32_t *tokens, int64_t *g) {
  int64_t bs = w->block_size_tokens > 0 ? w->block_size_tokens : 1;
  for (int32_t u = 0; u < w->n_nodes; u++) g[u] = -1;
  for (int32_t r = 0; r < w->n_requests; r++) {
    int32_t u = w->request_node[r];
    int64_t kv = w->request_kv_tokens[r], d = tokens[r] - kv;
    if (d < 0 || (g[u] >= 0 && g[u] != d)) return 0;
    g[u] = d;
    if (d > 0 && (w->nodes[u].first_child != -1 || (kv - 1) / bs != (kv + d - 1) / bs))
      return 0;
  }
  for (int32_t i = 0; i < p->n_segments; i++) {
    av_segment_t *s = &p->segments[i];
    if (g[s->node] > 0 && s->end == w->nodes[s->node].kv_len_tokens) s->end += g[s->node];
  }
  for (int32_t u = 0; u < w->n_nodes; u++)
    if (g[u] > 0) w->nodes[u].kv_len_tokens += g[u];
  for (int32_t r = 0; r < w->n_requests; r++) w->request_kv_tokens[r] = tokens[r];
  return 1;
}

void av_plan_regrow(av_plan_t *p, const av_workload_t *prev, const av_workload_t *next) {
  for (int32_t i = 0; i < p->n_segments; i++) {
    av_segment_t *s = &p->segments[i];
    if (s->end == prev->nodes[s->node].kv_len_tokens) s->end = next->nodes[s->node].kv_len_tokens;
  }
}
