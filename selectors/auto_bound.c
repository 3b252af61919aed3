/* A lower bound of the event-driven engine's makespan for one plan, cheap enough to compute
 * for every candidate `auto` races, so that the engine runs only for candidates that can
 * still place first or second (docs/schedulers.md#pruning-by-a-bound). It reads only what the
 * engine's model guarantees (docs/simulator.md): HBM serves at most B bytes/us in all; the
 * first touch of an L2 line is a miss; a CTA streams at most at its in-flight bound; launches
 * of one stream run back to back; the merge starts after the join. tests/test_auto_bound.c
 * checks bound <= engine on random forests under every cost model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/occupancy.h"
#include "selectors/auto_internal.h"

/* Calibration points of a measured cost model's streaming rate: the engine reads the slope
 * of C(n_q, n) between them (sim/engine.c item_calibrate). */
#define CAL_N1 8192
#define CAL_N2 16384

typedef struct bound_env {
  const av_plan_t *p;
  const av_gpu_t *g;
  const av_costmodel_t *cost;
  int cta_caps;         /* the cost model measures lone CTAs (AV_COST_MEASURED_CTAS) */
  double B, C, T;       /* HBM bytes/us; a CTA's in-flight bound (bytes/us); FLOPs/us per SM */
  double l2c;           /* HBM-equivalent cost of an L2 byte in a CTA's own stream */
  double tb;            /* KV bytes per token of one KV head */
  double rate_max;      /* no CTA streams faster than this (bytes/us) */
} bound_env_t;

static double dmax(double a, double b) { return a > b ? a : b; }

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* KV tokens of one head that reach HBM at least once. The engine's L2 tracks lines of whole
 * paged blocks spanning >= 64 tokens and starts cold, so every line misses on its first touch,
 * which reads at least the part of the line its segment covers. A line with no segment
 * boundary strictly inside it (the node's end aside) is read whole by every segment that
 * touches it (whole boxes under a measured model only widen segments within their lines);
 * lines with such a boundary are counted as nothing. */
static double unique_kv_tokens(const av_plan_t *p, int64_t line, uint64_t *keys,
                               const av_workload_t *w) {
  int64_t n_keys = 0;
  double tokens = 0;
  for (int32_t s = 0; s < p->n_segments; s++) {
    const av_segment_t *sg = &p->segments[s];
    const int64_t len = w->nodes[sg->node].kv_len_tokens;
    const int64_t x[2] = {sg->begin, sg->end};
    for (int k = 0; k < 2; k++)
      if (x[k] % line != 0 && x[k] != len)
        keys[n_keys++] = ((uint64_t)(uint32_t)sg->node << 32) | (uint64_t)(x[k] / line);
  }
  qsort(keys, (size_t)n_keys, sizeof *keys, cmp_u64);
  int64_t cut = 0;
  for (int64_t i = 0; i < n_keys; i++) cut += i == 0 || keys[i] != keys[i - 1];
  /* every node the plan reads is read whole (the checker proved it) */
  uint8_t *seen = (uint8_t *)(keys + n_keys);
  memset(seen, 0, (size_t)w->n_nodes);
  for (int32_t s = 0; s < p->n_segments; s++) {
    const int32_t u = p->segments[s].node;
    if (!seen[u]) tokens += (double)w->nodes[u].kv_len_tokens;
    seen[u] = 1;
  }
  tokens -= (double)cut * (double)line;
  return tokens > 0 ? tokens : 0;
}

/* The slope of a measured C(n_q, n) in n per KV byte for queries like q (the engine's
 * item_calibrate in sim/engine.c): its inverse is the CTA's own in-flight bound. */
static double measured_us_per_byte(const bound_env_t *b, const av_cost_query_t *q) {
  av_cost_query_t a = *q, c = *q;
  av_item_cost_t ca, cc;
  a.kv_tokens = CAL_N1;
  c.kv_tokens = CAL_N2;
  av_costmodel_estimate(b->cost, &a, &ca);
  av_costmodel_estimate(b->cost, &c, &cc);
  return (cc.time_us - ca.time_us) / ((CAL_N2 - CAL_N1) * b->tb);
}

static int same_shape(const av_cost_query_t *a, const av_cost_query_t *b) {
  return a->n_q == b->n_q && a->rows == b->rows && a->output == b->output &&
         a->tile.kind == b->tile.kind && a->tile.m_rows == b->tile.m_rows &&
         a->tile.n_tokens == b->tile.n_tokens && a->tile.warps == b->tile.warps;
}

/* The smallest co-residency slowdown of any launch's variant (1 without curves): a CTA's
 * rate is the mean of its SM's bounds divided by the mean slowdown. */
static double min_slowdown(const bound_env_t *b, int maxc) {
  double lo = 1.0;
  if (!b->cta_caps || !(av_costmodel_ops(b->cost)->flags & AV_COST_CORESIDENCY)) return lo;
  for (int32_t l = 0; l < b->p->n_launches; l++) {
    av_cost_query_t q = {.n_q = 1, .rows = 1, .kv_tokens = 2048,
                         .tile = b->p->launches[l].tile, .output = AV_OUT_PARTIAL};
    for (int k = 2; k <= maxc; k++) {
      av_item_cost_t c;
      q.coresident = k;
      av_costmodel_estimate(b->cost, &q, &c);
      if (c.slowdown > 0 && isfinite(c.slowdown) && c.slowdown < lo) lo = c.slowdown;
    }
  }
  return lo;
}

/* Per item (one KV head): its KV tokens, its bytes besides KV (queries, outputs, partial
 * states) and its FLOPs (none under a measured model: its time holds them). Returns the
 * fastest in-flight bound of any item under a measured model (0 otherwise). */
static double item_costs(bound_env_t *b, int64_t *kv, double *other, double *flops) {
  const av_plan_t *p = b->p;
  const int32_t group = av_heads_group(&p->heads);
  double cap_max = 0, upb = 0;
  av_cost_query_t last = {.n_q = -1};
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    kv[i] = 0;
    for (int32_t k = 0; k < it->n_seg; k++)
      kv[i] += p->segments[it->seg_begin + k].end - p->segments[it->seg_begin + k].begin;
    av_cost_query_t q = {.n_q = it->n_q, .rows = it->n_q * group, .kv_tokens = kv[i],
                         .tile = p->launches[it->launch].tile, .output = it->output};
    av_item_cost_t c;
    av_costmodel_estimate(b->cost, &q, &c);
    other[i] = dmax(0, c.hbm_bytes - (double)kv[i] * b->tb);
    flops[i] = b->cta_caps ? 0 : dmax(0, c.flops);
    if (!b->cta_caps) continue;
    if (!same_shape(&q, &last)) upb = measured_us_per_byte(b, &q);
    last = q;
    cap_max = dmax(cap_max, upb > 0 && c.time_us > 0 ? 1 / upb : b->C);
  }
  return cap_max;
}

/* The least time a CTA slot holds item i: its fixed prologue (the spec's, when the cost model
 * does not measure CTAs) and its bytes at the fastest rate any CTA gets, or its FLOPs at a
 * whole SM's tensor rate. KV that hits L2 still costs l2c of a byte in the CTA's stream. */
static double item_time(const bound_env_t *b, int64_t kv, double other, double flops) {
  const double kv_cost = b->cta_caps ? 1.0 : (b->l2c < 1 ? b->l2c : 1.0);
  const double bytes = (double)kv * b->tb * kv_cost + other;
  const double fixed = b->cta_caps ? 0 : b->g->cta_fixed_us;
  return fixed + dmax(bytes / b->rate_max, flops / b->T);
}

/* KV bytes of one head charged to the HBM pool, given that at least `unique` of them miss
 * L2: misses in full and, unless the cost model measures CTAs (whose hits only take their
 * own stream's time), each hit at l2c of a byte (docs/simulator.md). */
static double pool_kv_bytes(const bound_env_t *b, const int64_t *kv, double unique) {
  if (b->cta_caps) return unique;
  double all = 0;
  for (int32_t i = 0; i < b->p->n_items; i++) all += (double)kv[i] * b->tb;
  if (unique > all) unique = all;
  return b->l2c >= 1 ? all : all * b->l2c + unique * (1 - b->l2c);
}

/* Scratch of one bound, sliced from one allocation. */
typedef struct bound_mem {
  int64_t *kv;
  double *other, *flops, *t, *cta, *launch_us, *stream_end;
  int32_t *cta_off, *stream_id;
  int *k;
  uint64_t *keys;   /* 2 x segments, then one byte per node */
  void *block;
} bound_mem_t;

static int mem_alloc(const av_plan_t *p, const av_workload_t *w, bound_mem_t *m) {
  const size_t ni = (size_t)p->n_items + 1, nl = (size_t)p->n_launches + 1;
  size_t nc = 1;
  for (int32_t l = 0; l < p->n_launches; l++)
    nc += p->launches[l].persistent_ctas > 0 ? (size_t)p->launches[l].persistent_ctas : 0;
  const size_t nk = 2 * (size_t)p->n_segments + ((size_t)w->n_nodes + 7) / 8 + 1;
  const size_t bytes = ni * (sizeof(int64_t) + 4 * sizeof(double)) + nc * sizeof(double) +
                       nl * (2 * sizeof(double) + 2 * sizeof(int32_t) + sizeof(int)) +
                       nk * sizeof(uint64_t);
  char *c = m->block = malloc(bytes);
  if (!c) return AV_ERR_NOMEM;
  /* widest elements first, so every slice stays aligned */
  m->kv = (int64_t *)c, c += ni * sizeof(int64_t);
  m->keys = (uint64_t *)c, c += nk * sizeof(uint64_t);
  m->other = (double *)c, c += ni * sizeof(double);
  m->flops = (double *)c, c += ni * sizeof(double);
  m->t = (double *)c, c += ni * sizeof(double);
  m->cta = (double *)c, c += nc * sizeof(double);
  m->launch_us = (double *)c, c += nl * sizeof(double);
  m->stream_end = (double *)c, c += nl * sizeof(double);
  m->cta_off = (int32_t *)c, c += nl * sizeof(int32_t);
  m->stream_id = (int32_t *)c, c += nl * sizeof(int32_t);
  m->k = (int *)c;
  return AV_OK;
}

/* CTAs per SM of each launch's variant alone; 0 when a launch has no variant that runs
 * here (the engine then refuses or declines the plan, so there is no bound). */
static int occupancies(const av_sched_ctx_t *ctx, const av_plan_t *p, int *k) {
  for (int32_t l = 0; l < p->n_launches; l++) {
    const av_variant_t *v = ctx->variants
                                ? av_variants_find(ctx->variants, &p->launches[l].tile,
                                                   p->heads.head_dim, p->heads.dtype,
                                                   ctx->gpu->sm_arch)
                                : NULL;
    if (!v) return 0;
    av_occupancy_t occ;
    av_occupancy(ctx->gpu, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
    if (occ.ctas_per_sm <= 0) return 0;
    k[l] = occ.ctas_per_sm;
  }
  return 1;
}

/* Each launch's least duration: its longest CTA (a grid item, or a persistent CTA's whole
 * queue), and its CTAs' total time over the k x SMs slots its variant can hold at once. */
static int launch_times(const bound_env_t *b, bound_mem_t *m) {
  const av_plan_t *p = b->p;
  int32_t off = 0;
  for (int32_t l = 0; l < p->n_launches; l++) {
    m->cta_off[l] = off;
    off += p->launches[l].persistent_ctas > 0 ? p->launches[l].persistent_ctas : 0;
  }
  memset(m->cta, 0, (size_t)(off + 1) * sizeof *m->cta);
  double *sum = m->stream_end;  /* free until the stream pass */
  for (int32_t l = 0; l < p->n_launches; l++) m->launch_us[l] = sum[l] = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    const int32_t l = it->launch, P = p->launches[l].persistent_ctas;
    if (P > 0 && (it->cta < 0 || it->cta >= P)) return 0;  /* the engine refuses it */
    double *slot = P > 0 ? &m->cta[m->cta_off[l] + it->cta] : &m->t[i];
    if (P > 0) *slot += m->t[i];
    m->launch_us[l] = dmax(m->launch_us[l], *slot);
    sum[l] += m->t[i];
  }
  for (int32_t l = 0; l < p->n_launches; l++) {
    const double slots = (double)m->k[l] * b->g->sm_count;
    m->launch_us[l] = dmax(m->launch_us[l], sum[l] * p->heads.hkv / slots);
  }
  return 1;
}

/* The end of the partial phase at the earliest: each stream runs its launches in order, each
 * no earlier than the host issued it and one stream gap after the one before. */
static double streams_end(const bound_env_t *b, bound_mem_t *m, const av_launch_costs_t *lc) {
  const av_plan_t *p = b->p;
  int32_t n = 0;
  double end = 0;
  for (int32_t l = 0; l < p->n_launches; l++) {
    const double issue = lc->issue_step_us > 0 ? (l + 1) * lc->issue_step_us : lc->issue_first_us;
    int32_t s = 0;
    while (s < n && m->stream_id[s] != p->launches[l].stream) s++;
    double start = issue;
    if (s == n) m->stream_id[n++] = p->launches[l].stream;
    else start = dmax(issue, m->stream_end[s] + lc->stream_gap_us);
    m->stream_end[s] = start + m->launch_us[l];
    end = dmax(end, m->stream_end[s]);
  }
  return end;
}

/* Bytes the merge launch moves over all KV heads: every partial state read once, every
 * merged request's output written once (sim/engine_merge.c). 0 when nothing is merged. */
static double merge_bytes(const av_plan_t *p) {
  const av_heads_t *h = &p->heads;
  const double d = h->head_dim, el = av_dtype_bytes(h->dtype);
  double bytes = 0;
  for (int32_t r = 0; p->merge_offsets && r < p->n_requests; r++) {
    const int32_t n = p->merge_offsets[r + 1] - p->merge_offsets[r];
    if (n > 0) bytes += av_heads_group(h) * (n * (d + 1) * 4 + d * el);
  }
  return bytes * h->hkv;
}

static void env_init(const av_sched_ctx_t *ctx, const av_costmodel_t *cost,
                     const av_plan_t *p, bound_env_t *b) {
  const av_gpu_t *g = ctx->gpu;
  memset(b, 0, sizeof *b);
  b->p = p;
  b->g = g;
  b->cost = cost;
  b->cta_caps = (av_costmodel_ops(cost)->flags & AV_COST_MEASURED_CTAS) != 0;
  b->B = av_gpu_hbm_bw_GBps(g) * 1e3;
  b->C = g->bytes_in_flight_per_sm > 0 && g->mem_latency_ns > 0
             ? g->bytes_in_flight_per_sm / (g->mem_latency_ns * 1e-3)
             : 1e30;
  b->T = g->fp16_tensor_tflops > 0 ? g->fp16_tensor_tflops * 1e6 / g->sm_count : 1e30;
  b->l2c = g->l2_bw_GBps > 0 ? b->B / (g->l2_bw_GBps * 1e3) : 1;
  b->tb = 2.0 * p->heads.head_dim * av_dtype_bytes(p->heads.dtype);
}

int av__auto_bound(const av_sched_ctx_t *ctx, const av_costmodel_t *cost, const av_plan_t *p,
                   double *bound_us, av_error_t *err) {
  *bound_us = 0;
  const av_gpu_t *g = ctx->gpu;
  const av_workload_t *w = ctx->workload;
  if (!cost || !w || g->sm_count <= 0 || p->heads.hkv <= 0 || !(av_gpu_hbm_bw_GBps(g) > 0))
    return AV_OK;
  bound_mem_t m;
  if (mem_alloc(p, w, &m))
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory bounding a plan");
  bound_env_t b;
  env_init(ctx, cost, p, &b);
  double bound = 0;
  if (occupancies(ctx, p, m.k)) {
    const double cap = item_costs(&b, m.kv, m.other, m.flops);
    b.rate_max = (b.cta_caps ? cap : b.C) / min_slowdown(&b, g->max_ctas_per_sm);
    double other = 0;
    for (int32_t i = 0; i < p->n_items; i++) {
      m.t[i] = item_time(&b, m.kv[i], m.other[i], m.flops[i]);
      other += m.other[i];
    }
    av_launch_costs_t lc;
    av_gpu_launch_costs(g, (int)av_plan_issue_model(p, g->sm_arch), &lc);
    const int bs = w->block_size_tokens > 0 ? w->block_size_tokens : 16;
    const double kv = unique_kv_tokens(p, bs * ((64 + bs - 1) / bs), m.keys, w) * b.tb;
    const double hbm = (pool_kv_bytes(&b, m.kv, kv) + other) * p->heads.hkv / b.B;
    const double first = lc.issue_step_us > 0 ? lc.issue_step_us : lc.issue_first_us;
    if (launch_times(&b, &m)) {
      const double partial = dmax(streams_end(&b, &m, &lc), first + hbm);
      const double merge = merge_bytes(p);
      bound = partial + (merge > 0 ? lc.join_us + merge / b.B : 0) + lc.tail_us;
    }
  }
  free(m.block);
  /* the engine merges events closer than its tolerance (picoseconds), so its times may fall
   * short of the exact model by far less than this */
  *bound_us = bound * (1 - AV__AUTO_BOUND_SLACK);
  return AV_OK;
}
