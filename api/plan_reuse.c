/* The lazy-update rule (PAT §5.1) and the growth of a reused plan; see plan_reuse.h. */
#include "api/plan_reuse.h"

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

void av_plan_regrow(av_plan_t *p, const av_workload_t *prev, const av_workload_t *next) {
  for (int32_t i = 0; i < p->n_segments; i++) {
    av_segment_t *s = &p->segments[i];
    if (s->end == prev->nodes[s->node].kv_len_tokens) s->end = next->nodes[s->node].kv_len_tokens;
  }
}
