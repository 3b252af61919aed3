/* Helpers shared by the cost models (not part of the public API): state allocation, the
 * bandwidth share of one CTA, one SM's tensor rate, and tile-padded FLOPs. */
#ifndef AV_COSTMODEL_INTERNAL_H
#define AV_COSTMODEL_INTERNAL_H

#include <stddef.h>

#include "costmodels/costmodel.h"

/* calloc'd state (AV_ERR_NOMEM naming the model when it fails). */
void *av__cost_alloc_state(size_t size, const char *model, av_error_t *err);
void av__cost_free_state(void *state);
/* One CTA's share of HBM bandwidth in bytes per microsecond: the effective bandwidth
 * (av_gpu_hbm_bw_GBps) x scale / concurrent CTAs (env->concurrent_ctas, 0 = sm_count). */
double av__cost_bw_share_Bpus(const av_cost_env_t *env, double scale);
/* One SM's dense fp16 tensor rate in FLOP per microsecond (x scale). */
double av__cost_sm_tensor_flops_per_us(const av_cost_env_t *env, double scale);
/* FLOPs of the tile the item runs: rows rounded up to m, tokens up to n (FastTree-style
 * padding; a tile dimension of 0 means no padding in it). */
double av__cost_padded_flops(const av_heads_t *h, const av_cost_query_t *q);
/* What every model reports besides time: the bytes the item moves (av_cost_item_bytes) and
 * its tile-padded FLOPs. */
void av__cost_item_traffic(const av_heads_t *h, const av_cost_query_t *q, av_item_cost_t *out);
/* The "fixed_us" parameter resolved: -1 means the GPU spec's cta_fixed_us. */
double av__cost_fixed_us(const av_params_t *p, const av_cost_env_t *env);

#endif
