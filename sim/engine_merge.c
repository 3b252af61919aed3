/* The engine's merge launch and empty persistent CTAs (docs/simulator.md "Merge"): the merge
 * kernel's shape, the bytes each merge CTA moves, where it finds the partial states, and,
 * under a cost model that measures them (AV_COST_MERGE), the merge CTA's and the empty CTA's
 * measured times. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/occupancy.h"
#include "sim/engine_internal.h"

/* Requests with partial states, i.e. that the merge kernel combines (PAT §7). */
int64_t av__engine_merge_requests(const av_plan_t *p) {
  int64_t n = 0;
  if (!p->merge_offsets) return 0;
  for (int32_t r = 0; r < p->n_requests; r++)
    n += p->merge_offsets[r + 1] > p->merge_offsets[r];
  return n;
}

/* The merge kernel's tile and query-head rows per CTA: the compiled merge variant's m (its
 * kernel runs one warp per (request, query head) row, m rows per CTA, over every request),
 * else one request's GQA group per CTA. */
static int32_t merge_tile(const av_plan_t *p, const av_variants_t *vs, const av_gpu_t *g,
                          av_tile_t *tile) {
  const av_heads_t *h = &p->heads;
  memset(tile, 0, sizeof *tile);
  tile->kind = AV_KERNEL_MERGE;
  if (!vs) return av_heads_group(h);
  av_tile_t tiles[8];
  int n = av_variants_tiles(vs, AV_KERNEL_MERGE, h->head_dim, h->dtype, g->sm_arch, tiles, 8);
  if (n <= 0 || tiles[0].m_rows <= 0) return av_heads_group(h);
  *tile = tiles[0];
  return tiles[0].m_rows;
}

int32_t av__engine_merge_rows_per_cta(const av_plan_t *p, const av_variants_t *variants,
                                      const av_gpu_t *gpu) {
  av_tile_t t;
  return merge_tile(p, variants, gpu, &t);
}

void av__engine_merge_shape(const av__eng_t *e, av_tile_t *tile, int32_t *rows_per_cta) {
  *rows_per_cta = merge_tile(e->plan, e->in->variants, e->in->gpu, tile);
}

/* Under a measured cost model: the profile's lone merge CTA time T(k) over the partial
 * states per row (k), split into T0 = the line through T(1), T(2) at k = 0 (launch-free CTA
 * overhead) and streaming the CTA's bytes at the rate that makes a lone CTA take T(kmax) for
 * its longest row (its rows run in parallel warps). merge_capj holds kmax on entry. Without
 * the measurement the spec's figures stay (fixed_us, merge_cap). */
static void merge_calibrate(av__eng_t *e) {
  av_cost_query_t q = {.rows = e->merge_rows_per_cta};
  q.tile.kind = AV_KERNEL_MERGE;
  q.tile.m_rows = e->merge_rows_per_cta;
  av_item_cost_t c1 = {0}, c2 = {0}, ck;
  if (e->cost_caps & AV_COST_MERGE) {  /* else the spec's figures stay */
    q.n_q = 1;
    av_costmodel_estimate(e->in->cost, &q, &c1);
    q.n_q = 2;
    av_costmodel_estimate(e->in->cost, &q, &c2);
  }
  if (!(c1.time_us > 0) || !(c2.time_us > 0)) {
    for (int32_t j = 0; j < e->merge_per_head; j++) e->merge_capj[j] = e->merge_cap;
    return;
  }
  double t0 = 2 * c1.time_us - c2.time_us;
  t0 = t0 < 0 ? 0 : t0 > c1.time_us ? c1.time_us : t0;
  e->merge_measured = 1;
  e->merge_fixed = t0;
  q.cold_frac = e->merge_cold;
  for (int32_t j = 0; j < e->merge_per_head; j++) {
    q.n_q = (int32_t)e->merge_capj[j];
    av_costmodel_estimate(e->in->cost, &q, &ck);
    double stream = ck.time_us - t0;
    e->merge_capj[j] = stream > 0 && e->merge_bytes[j] > 0 ? e->merge_bytes[j] / stream
                                                           : e->merge_cap;
  }
}

/* Where the merge finds the partial states. The attention phase brings X bytes through L2:
 * the batch's unique KV (all KV heads; a node read twice is still mostly one line fill under
 * LRU) and the partial states it writes. With the states written evenly over the phase, LRU
 * keeps those of the last L2-sized stretch of X: a fraction min(1, L2 / X) is read from L2,
 * the rest from HBM, which the profile measures as the merge's cold curve (the traced
 * validation runs showed merge CTAs of large split plans taking twice the L2-warm time). */
static double merge_cold_fraction(const av__eng_t *e) {
  const av_plan_t *p = e->plan;
  const av_workload_t *w = e->in->workload;
  const double l2 = e->in->gpu->l2_bytes;
  if (!w || !(l2 > 0)) return 0;
  double x = (double)p->n_slots * p->heads.hq * (p->heads.head_dim + 1) * 4.0;
  for (int32_t i = 0; i < w->n_nodes; i++)
    x += (double)w->nodes[i].kv_len_tokens * e->token_bytes * p->heads.hkv;
  return x > l2 ? 1 - l2 / x : 0;
}

/* Bytes each merge CTA moves for one KV head: for each of its (request, query head) rows,
 * every partial state of the request (O and lse in fp32) read once and the output written
 * once; rows of requests without partial states cost nothing but the CTA. */
void av__engine_merge_costs(av__eng_t *e) {
  const av_plan_t *p = e->plan;
  const av_heads_t *h = &p->heads;
  const int32_t g = av_heads_group(h);
  const double d = h->head_dim, el = av_dtype_bytes(h->dtype);
  for (int32_t j = 0; j < e->merge_per_head; j++) e->merge_bytes[j] = e->merge_capj[j] = 0;
  for (int32_t r = 0; r < p->n_requests; r++) {
    int32_t n = p->merge_offsets[r + 1] - p->merge_offsets[r];
    if (n <= 0) continue;
    for (int32_t q = 0; q < g; q++) {
      const int64_t j = ((int64_t)r * g + q) / e->merge_rows_per_cta;
      e->merge_bytes[j] += n * (d + 1) * 4 + d * el;
      if (n > e->merge_capj[j]) e->merge_capj[j] = n;
    }
  }
  e->merge_cold = merge_cold_fraction(e);
  if (e->cta_caps) merge_calibrate(e);
}

/* What an empty persistent CTA costs: the profile's figure under a measured model (query
 * n_q = 0, no KV), else a working CTA's fixed cost from the spec. */
void av__engine_empty_cost(av__eng_t *e) {
  e->empty_us = e->fixed_us;
  if (!e->cta_caps || !(e->cost_caps & AV_COST_MERGE)) return;
  av_cost_query_t q = {.n_q = 0, .rows = 0, .kv_tokens = 0};
  q.tile.kind = AV_KERNEL_PERSISTENT;
  av_item_cost_t c;
  av_costmodel_estimate(e->in->cost, &q, &c);
  if (c.time_us > 0) e->empty_us = c.time_us;
}

/* --- results ----------------------------------------------------------------------------- */
