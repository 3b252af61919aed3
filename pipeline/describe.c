/* `anvil describe` (pipeline/describe.h): a batch's figures and its floors on a GPU. */
#include "pipeline/describe.h"

#include "pipeline/models.h"
#include "pipeline/workload_args.h"

/* Per depth: node count, node lengths and how many requests share each node. */
static void hand_levels(const av_describe_opts_t *o, const av_workload_t *w, void *user) {
  for (int d = 0; o->level && d < w->max_depth; d++) {
    av_describe_level_t l = {.depth = d};
    double ssum = 0;
    for (int32_t u = 0; u < w->n_nodes; u++) {
      const av_node_t *x = &w->nodes[u];
      if (x->depth != d) continue;
      if (!l.nodes || x->kv_len_tokens < l.min_len) l.min_len = x->kv_len_tokens;
      if (!l.nodes || x->kv_len_tokens > l.max_len) l.max_len = x->kv_len_tokens;
      if (!l.nodes || x->share < l.min_share) l.min_share = x->share;
      if (!l.nodes || x->share > l.max_share) l.max_share = x->share;
      ssum += x->share;
      l.nodes++;
    }
    l.mean_share = l.nodes ? ssum / l.nodes : 0.0;
    o->level(&l, user);
  }
}

int av_describe(const av_describe_opts_t *o, void *user, av_error_t *err) {
  av_gpu_t gpu;
  av_workload_t *w = NULL;
  int rc = av_models_load_gpu("describe", o->gpu, &gpu, err);
  if (!rc) rc = av_workload_args_load("describe", o->spec, o->levels, &o->heads, &w, err);
  if (rc) return rc;
  av_description_t d = {.name = w->name[0] ? w->name : (o->spec ? o->spec : o->levels),
                        .w = w, .gpu = &gpu, .hbm_GBps = av_gpu_floor_bw_GBps(&gpu),
                        .flops = av_workload_flops(w)};
  av_workload_stats(w, &d.s);
  d.floor_unique_us = av_workload_floor_us(w, d.hbm_GBps);
  d.floor_query_centric_us =
      d.hbm_GBps > 0 ? d.s.query_centric_kv_bytes / (d.hbm_GBps * 1e3) : 0.0;
  av_workload_floor(w, &gpu, &d.floor);
  if (o->description) o->description(&d, user);
  hand_levels(o, w, user);
  av_workload_destroy(w);
  return AV_OK;
}
