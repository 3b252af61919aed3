/* anvil_describe: a batch's figures (pipeline/describe.h) behind the public API. */
#include "anvil/describe.h"

#include <stdio.h>
#include <string.h>

#include "api/api_internal.h"
#include "pipeline/describe.h"

typedef struct describe_cb {
  const anvil_describe_options_t *o;
  void (*level)(const anvil_describe_level_t *l, void *user);
  void *user;
  anvil_description_t d;
} describe_cb_t;

static void on_description(const av_description_t *d, void *user) {
  describe_cb_t *cb = user;
  const av_workload_t *w = d->w;
  anvil_description_t *x = &cb->d;
  *x = (anvil_description_t){
      .q_heads = w->heads.hq, .kv_heads = w->heads.hkv, .group = av_heads_group(&w->heads),
      .head_dim = w->heads.head_dim, .block_size_tokens = w->block_size_tokens,
      .requests = d->s.requests, .nodes = d->s.nodes, .depth = d->s.depth,
      .roots = d->s.roots, .leaves = d->s.leaves, .mean_share = d->s.mean_share,
      .max_share = d->s.max_share, .unique_kv_tokens = d->s.unique_kv_tokens,
      .query_centric_kv_tokens = d->s.query_centric_kv_tokens,
      .unique_kv_bytes = d->s.unique_kv_bytes,
      .query_centric_kv_bytes = d->s.query_centric_kv_bytes,
      .sharing_ratio = d->s.sharing_ratio, .hbm_GBps = d->hbm_GBps,
      .tensor_tflops = d->gpu->fp16_tensor_tflops, .floor_unique_us = d->floor_unique_us,
      .floor_query_centric_us = d->floor_query_centric_us, .gflop = d->flops / 1e9,
      .compute_us = d->floor.compute_us, .floor_us = d->floor.us,
      .compute_bound = d->floor.compute_us > d->floor.mem_us};
  snprintf(x->name, sizeof x->name, "%s", d->name);
  snprintf(x->dtype, sizeof x->dtype, "%s", av_dtype_name(w->heads.dtype));
  snprintf(x->gpu, sizeof x->gpu, "%s", d->gpu->name);
  if (cb->o->on_description) cb->o->on_description(x, cb->user);
}

static void on_level(const av_describe_level_t *l, void *user) {
  const describe_cb_t *cb = user;
  anvil_describe_level_t x = {.depth = l->depth, .nodes = l->nodes, .min_share = l->min_share,
                              .max_share = l->max_share, .min_len = l->min_len,
                              .max_len = l->max_len, .mean_share = l->mean_share};
  cb->level(&x, cb->user);
}

int anvil_describe(const anvil_describe_options_t *o,
                   void (*level)(const anvil_describe_level_t *l, void *user), void *user,
                   anvil_description_t *out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  describe_cb_t cb = {.o = o, .level = level, .user = user};
  av_describe_opts_t d = {
      .spec = o->spec, .levels = o->levels, .gpu = o->gpu ? o->gpu : "H200-SXM",
      .heads = {.hq = o->q_heads ? o->q_heads : 32, .hkv = o->kv_heads ? o->kv_heads : 8,
                .head_dim = o->head_dim ? o->head_dim : 128, .dtype = AV_DTYPE_FP16},
      .description = on_description, .level = level ? on_level : NULL};
  int rc = av_describe(&d, &cb, &e);
  if (!rc && out) *out = cb.d;
  return av__api_error(err, &e, rc);
}
