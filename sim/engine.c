/* The event-driven simulator engine ("sim": "engine"): builds the engine state for a plan in
 * one allocation (per-item costs, launch grids and persistent queues, per-SM and per-slot
 * arrays, the L2 tables, the event heap), runs the event loop (sim/engine_loop.c) and
 * reports makespan, per-launch times, bytes, bandwidth, bubbles and waves. The model and its
 * equations are in docs/simulator.md; PAT §3.3/§6 and FlashInfer §3.3 motivate what it must
 * capture (wave quantization, tail bubbles, stream overlap). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine_internal.h"
#include "core/occupancy.h"
#include "sim/sim_internal.h"

/* --- one allocation, sliced ----------------------------------------------------------- */
typedef struct carve {
  char *base;   /* NULL while sizing */
  size_t off;
} carve_t;

static void *carve(carve_t *c, size_t n, size_t elem) {
  size_t o = (c->off + 15) & ~(size_t)15;
  c->off = o + n * elem;
  return c->base ? c->base + o : NULL;
}

/* Slices every array of the engine out of c (sizing pass when c->base is NULL). */
static void layout(av__eng_t *e, carve_t *c, int64_t n_items, int64_t n_merge, int32_t n_l) {
  const int64_t S = e->S, slots = S * e->maxc;
  e->L = carve(c, (size_t)n_l, sizeof *e->L);
  e->item_other_bytes = carve(c, (size_t)n_items, sizeof(double));
  e->item_flops = carve(c, (size_t)n_items, sizeof(double));
  e->item_kv_tokens = carve(c, (size_t)n_items, sizeof(int64_t));
  e->item_fixed = carve(c, (size_t)n_items, sizeof(double));
  e->item_cap = carve(c, (size_t)n_items, sizeof(double));
  e->merge_bytes = carve(c, (size_t)n_merge, sizeof(double));
  e->merge_capj = carve(c, (size_t)n_merge, sizeof(double));
  e->curve = carve(c, (size_t)n_l * (size_t)(e->maxc + 1), sizeof(double));
  double **sm_d[] = {&e->W,     &e->PHI,   &e->rho,   &e->irho,  &e->phi,
                     &e->iphi,  &e->Cn,    &e->nC,    &e->mtmin, &e->ftmin,
                     &e->tamin, &e->next,  &e->busy_since, &e->busy_us, &e->capsum,
                     &e->sbar,  &e->hsum,  &e->hbar,  &e->msum};
  for (size_t i = 0; i < sizeof sm_d / sizeof *sm_d; i++) *sm_d[i] = carve(c, S, sizeof(double));
  int32_t **sm_i[] = {&e->n_mem, &e->n_cmp, &e->n_res, &e->hw, &e->busy};
  for (size_t i = 0; i < sizeof sm_i / sizeof *sm_i; i++) *sm_i[i] = carve(c, S, sizeof(int32_t));
  e->res_used = carve(c, (size_t)(S * AV__RES_N), sizeof(uint32_t));
  e->sl_state = carve(c, (size_t)slots, 1);
  int32_t **sl_i[] = {&e->sl_launch, &e->sl_job, &e->sl_head, &e->sl_qpos, &e->sl_qend};
  for (size_t i = 0; i < sizeof sl_i / sizeof *sl_i; i++)
    *sl_i[i] = carve(c, (size_t)slots, sizeof(int32_t));
  double **sl_d[] = {&e->sl_t0,    &e->sl_ta,    &e->sl_mt, &e->sl_ft,
                     &e->sl_bytes, &e->sl_flops, &e->sl_cap, &e->sl_h, &e->sl_nb};
  for (size_t i = 0; i < sizeof sl_d / sizeof *sl_d; i++)
    *sl_d[i] = carve(c, (size_t)slots, sizeof(double));
  e->sl_cur = carve(c, (size_t)slots, sizeof *e->sl_cur);
  e->ph = carve(c, e->l2_ranges ? (size_t)slots : 0, sizeof *e->ph);
  e->members = carve(c, e->l2_ranges ? (size_t)slots : 0, sizeof *e->members);
  e->unsettled = carve(c, e->l2_ranges ? (size_t)slots : 0, sizeof(int32_t));
  e->touched = carve(c, (size_t)S, sizeof(int32_t));
  e->is_touched = carve(c, (size_t)S, 1);
  e->starters = carve(c, (size_t)slots, sizeof(int32_t));
  e->active = carve(c, (size_t)n_l, sizeof(int32_t));
  e->dirty = carve(c, (size_t)(2 * S), sizeof(int32_t));
  e->is_dirty = carve(c, (size_t)S, 1);
  e->heap_t = carve(c, (size_t)n_l, sizeof(double));
  e->heap_l = carve(c, (size_t)n_l, sizeof(int32_t));
}

/* --- launch grids -------------------------------------------------------------------- */
static int variant_resources(const av__eng_t *e, int32_t li, const av_tile_t *tile,
                             av__eng_launch_t *L, av_error_t *err) {
  const av_gpu_t *g = e->in->gpu;
  const av_heads_t *h = &e->plan->heads;
  int threads = 128, regs = 32, smem = 0;
  char where[64];
  if (L->is_merge) snprintf(where, sizeof where, "merge");
  else snprintf(where, sizeof where, "launches[%d].tile", li);
  const av_variant_t *v =
      e->in->variants ? av_variants_find(e->in->variants, tile, h->head_dim, h->dtype,
                                         g->sm_arch)
                      : NULL;
  if (v) {
    threads = v->threads;
    regs = v->regs_per_thread;
    smem = v->smem_bytes;
  } else if (!L->is_merge) { /* the simulator needs its threads, registers and shared memory */
    return av_variants_require(e->in->variants, tile, h, g, where, err);
  }
  /* A merge kernel missing from the table is modelled as a light 128-thread CTA
   * (32 registers, no shared memory): it only streams partial states. */
  av_occupancy_t occ;
  av_occupancy(g, threads, regs, smem, &occ);
  if (occ.ctas_per_sm <= 0)
    return av_error_set(err, AV_ERR_UNSUPPORTED, e->plan->scheduler, where,
                        "kernel variant (%d threads, %d registers, %d bytes shared memory) "
                        "cannot run on %s (limit: %s)",
                        threads, regs, smem, g->name, av_occ_limit_name(occ.limit));
  L->ctas_per_sm = occ.ctas_per_sm;
  int by[AV__RES_N] = {occ.by_ctas, occ.by_warps, occ.by_regs, occ.by_smem};
  for (int r = 0; r < AV__RES_N; r++) L->res[r] = by[r] > 0 ? AV__RES_CAP / (uint32_t)by[r] : 0;
  return AV_OK;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Items by launch (CSR) and persistent queues: queue position = the item's order. */
static int build_grids(av__eng_t *e, int32_t *lists, int32_t *offs, int32_t *qoffs,
                       int32_t *queue, av_error_t *err) {
  const av_plan_t *p = e->plan;
  int32_t nl = p->n_launches;
  memset(offs, 0, sizeof *offs * (size_t)(nl + 1));
  for (int32_t i = 0; i < p->n_items; i++) {
    int32_t l = p->items[i].launch;
    if (l < 0 || l >= nl)
      return av_error_set(err, AV_ERR_PLAN, p->scheduler, NULL,
                          "items[%d].launch = %d is not a launch (plan has %d)", i, l, nl);
    offs[l + 1]++;
  }
  for (int32_t l = 0; l < nl; l++) offs[l + 1] += offs[l];
  int32_t qo = 0;
  for (int32_t l = 0; l < nl; l++) {
    av__eng_launch_t *L = &e->L[l];
    L->items = lists + offs[l];
    L->n_items = 0;
    L->persistent = p->launches[l].persistent_ctas;
    if (L->persistent > 0) {
      L->q_off = qoffs + qo;
      L->queue = queue + offs[l];
      qo += L->persistent + 1;
    }
  }
  for (int32_t i = 0; i < p->n_items; i++) {
    av__eng_launch_t *L = &e->L[p->items[i].launch];
    lists[offs[p->items[i].launch] + L->n_items++] = i;
  }
  for (int32_t l = 0; l < nl; l++) {
    av__eng_launch_t *L = &e->L[l];
    if (L->persistent <= 0) continue;
    int32_t *qoff = (int32_t *)L->q_off, *q = (int32_t *)L->queue;
    memset(qoff, 0, sizeof *qoff * (size_t)(L->persistent + 1));
    for (int32_t k = 0; k < L->n_items; k++) {
      const av_item_t *it = &p->items[L->items[k]];
      if (it->cta < 0 || it->cta >= L->persistent)
        return av_error_set(err, AV_ERR_PLAN, p->scheduler, NULL,
                            "items[%d].cta = %d is outside launch %d's persistent grid of %d",
                            L->items[k], it->cta, l, L->persistent);
      qoff[it->cta + 1]++;
    }
    for (int32_t c = 0; c < L->persistent; c++) qoff[c + 1] += qoff[c];
    for (int32_t k = 0; k < L->n_items; k++) q[k] = -1;
    for (int32_t k = 0; k < L->n_items; k++) {
      int32_t i = L->items[k];
      const av_item_t *it = &p->items[i];
      int32_t len = qoff[it->cta + 1] - qoff[it->cta];
      if (it->order < 0 || it->order >= len || q[qoff[it->cta] + it->order] >= 0)
        return av_error_set(err, AV_ERR_PLAN, p->scheduler, NULL,
                            "items[%d].order = %d: CTA %d of launch %d has %d items, whose "
                            "orders must be 0..%d, each once",
                            i, it->order, it->cta, l, len, len - 1);
      q[qoff[it->cta] + it->order] = i;
    }
  }
  return AV_OK;
}

/* Stream order: each launch's successor on its stream (sort by (stream, index)); the first
 * launch of every stream is ready when the host has issued it. A sorted array is a heap. */
static void link_streams(av__eng_t *e, uint64_t *keys) {
  int32_t nl = e->plan->n_launches;
  for (int32_t l = 0; l < nl; l++) {
    keys[l] = ((uint64_t)(uint32_t)e->L[l].stream << 32) | (uint32_t)l;
    e->L[l].next_on_stream = -1;
  }
  qsort(keys, (size_t)nl, sizeof *keys, cmp_u64);
  int32_t first = 0;
  for (int32_t k = 0; k < nl; k++) {
    int32_t l = (int32_t)(keys[k] & 0xffffffff);
    if (k + 1 < nl && (keys[k + 1] >> 32) == (keys[k] >> 32))
      e->L[l].next_on_stream = (int32_t)(keys[k + 1] & 0xffffffff);
    if (k == 0 || (keys[k - 1] >> 32) != (keys[k] >> 32)) keys[first++] = l;
  }
  /* first launches in plan order = issue order, so (issue time, index) ascends */
  qsort(keys, (size_t)first, sizeof *keys, cmp_u64);
  for (int32_t k = 0; k < first; k++) {
    e->heap_l[k] = (int32_t)keys[k];
    e->heap_t[k] = e->L[keys[k]].issue_us;
  }
  e->heap_n = first;
}

/* --- costs ------------------------------------------------------------------------------ */
/* KV tokens between which a measured cost model's slope in n is read: the top of the
 * profile grid (FlashForge §5.2 Table 2), where decode attention is in its linear regime. */
#define CAL_N1 8192
#define CAL_N2 16384

/* Under a measured cost model the item's time alone, C(n_q, n) (FlashForge §5.2, Eq. 6), is
 * split into what does not depend on n (prologue, Q load, epilogue, the partial-state write)
 * and streaming at the CTA's own rate bound: the inverse of C's slope in n at large n, per
 * KV byte. A lone CTA then takes exactly C(n_q, n); co-resident CTAs add only contention
 * for HBM (each CTA brings its own double buffer, so the bound is per CTA, not per SM).
 * The FLOPs are inside the measured time (C is flat in n_q up to the tile's m on the
 * kernels measured: latency-bound), so they are not simulated again. */
static void item_calibrate(av__eng_t *e, int32_t i, const av_cost_query_t *q,
                           const av_item_cost_t *c) {
  av_cost_query_t a = *q, b = *q;
  av_item_cost_t ca, cb;
  a.kv_tokens = CAL_N1;
  b.kv_tokens = CAL_N2;
  av_costmodel_estimate(e->in->cost, &a, &ca);
  av_costmodel_estimate(e->in->cost, &b, &cb);
  double us_per_byte = (cb.time_us - ca.time_us) / ((CAL_N2 - CAL_N1) * e->token_bytes);
  double bytes = (double)e->item_kv_tokens[i] * e->token_bytes + e->item_other_bytes[i];
  if (!(us_per_byte > 0) || !(c->time_us > 0)) {
    /* no usable slope: the spec's figures, as without a profile */
    e->item_cap[i] = e->merge_cap;
    e->item_fixed[i] = e->fixed_us;
  } else {
    double fixed = c->time_us - bytes * us_per_byte;
    e->item_cap[i] = 1 / us_per_byte;
    e->item_fixed[i] = fixed > 0 ? fixed : 0;
  }
  e->item_flops[i] = 0;
}

/* Per item (one KV head): KV tokens, the bytes besides KV (queries, outputs or partial
 * states) and the FLOPs, from the cost model's av_item_cost_t (or the shared byte/FLOP
 * accounting when no model is given). KV bytes are recomputed per CTA at its start because
 * the L2 decides which of them reach HBM. */
static void item_costs(av__eng_t *e) {
  const av_plan_t *p = e->plan;
  const av_heads_t *h = &p->heads;
  const int g = av_heads_group(h);
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    int64_t kv = 0;  /* the tokens the kernel copies (sim/engine_boxes.c) */
    for (int32_t k = 0; k < it->n_seg; k++) {
      const av_segment_t *sg = &p->segments[it->seg_begin + k];
      int64_t b, en;
      av__engine_box_span(e->box_rows, sg->begin, sg->end, &b, &en);
      kv += en - b;
    }
    av_cost_query_t q = {.n_q = it->n_q, .rows = it->n_q * g, .kv_tokens = kv,
                         .tile = p->launches[it->launch].tile, .output = it->output};
    av_item_cost_t c;
    if (e->in->cost) {
      av_costmodel_estimate(e->in->cost, &q, &c);
    } else {
      c.hbm_bytes = av_cost_item_bytes(h, q.rows, kv, it->output);
      c.flops = av_cost_item_flops(h, q.rows, kv);
    }
    double other = c.hbm_bytes - (double)kv * e->token_bytes;
    e->item_kv_tokens[i] = kv;
    e->item_other_bytes[i] = other > 0 ? other : 0;
    e->item_flops[i] = c.flops > 0 ? c.flops : 0;
    if (e->cta_caps) item_calibrate(e, i, &q, &c);
  }
}

/* The measured co-residency curve of each launch's variant, k = 1..maxc, from the cost
 * model (av_item_cost_t.slowdown; profile_coresidency.h). Without curves every factor is 1
 * and has_curve stays 0, so the event loop runs exactly as before. */
static void launch_curves(av__eng_t *e) {
  const av_plan_t *p = e->plan;
  const int32_t K = e->maxc + 1;
  for (int32_t l = 0; l < e->n_launches; l++) {
    double *cv = &e->curve[(int64_t)l * K];
    for (int32_t k = 0; k < K; k++) cv[k] = 1.0;
    if (!e->cta_caps || !(e->cost_caps & AV_COST_CORESIDENCY) || l >= p->n_launches) continue;
    av_cost_query_t q = {.n_q = 1, .rows = 1, .kv_tokens = 2048,
                         .tile = p->launches[l].tile, .output = AV_OUT_PARTIAL};
    for (int32_t k = 2; k < K; k++) {
      av_item_cost_t c;
      q.coresident = k;
      av_costmodel_estimate(e->in->cost, &q, &c);
      if (c.slowdown > 0 && isfinite(c.slowdown)) {
        cv[k] = c.slowdown;
        e->has_curve = 1;
      }
    }
  }
}

static int fill_result(const av__eng_t *e, int32_t n_plan_launches, av_sim_result_t *out,
                       av_error_t *err) {
  memset(out, 0, sizeof *out);
  out->n_launches = n_plan_launches;
  if (n_plan_launches > 0) {
    out->launches = calloc((size_t)n_plan_launches, sizeof *out->launches);
    if (!out->launches)
      return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory for the results");
  }
  double first = 0, partial = 0, end = 0;
  for (int32_t l = 0; l < e->n_launches; l++) {
    const av__eng_launch_t *L = &e->L[l];
    if (l == 0 || L->start_us < first) first = L->start_us;
    if (L->end_us > end) end = L->end_us;
    if (l >= n_plan_launches) continue;
    if (L->end_us > partial) partial = L->end_us;
    av_sim_launch_result_t *r = &out->launches[l];
    r->start_us = L->start_us;
    r->end_us = L->end_us;
    r->ctas = L->total;
    r->ctas_per_sm = L->ctas_per_sm;
    r->waves = (double)L->total / ((double)L->ctas_per_sm * e->S);
  }
  double busy = 0;
  for (int32_t s = 0; s < e->S; s++) busy += e->busy_us[s];
  double window = (end - first) * e->S;
  out->sm_busy_frac = window > 0 ? busy / window : 0;
  out->bubble_frac = window > 0 ? 1 - out->sm_busy_frac : 0;
  /* the run ends with the end event, run_tail_us after the last CTA (measured; 0 in a
   * datasheet spec) */
  out->merge_us = end - partial;
  end += e->lc.tail_us;
  out->makespan_us = end;
  out->partial_us = partial;
  out->hbm_bytes = e->hbm_bytes;
  out->l2_bytes = e->l2_bytes;
  out->achieved_bw_GBps = end > 0 ? e->hbm_bytes / end * 1e-3 : 0;
  return AV_OK;
}

/* --- entry points -------------------------------------------------------------------- */
static void init_sms(av__eng_t *e) {
  for (int32_t s = 0; s < e->S; s++) {
    e->irho[s] = e->nC[s] = e->iphi[s] = AV__BIG;
    e->sbar[s] = e->hbar[s] = 1.0;
    e->mtmin[s] = e->ftmin[s] = e->tamin[s] = e->next[s] = AV__BIG;
  }
  if (e->l2_ranges)  /* no slot is in a platoon */
    for (int64_t sl = 0; sl < (int64_t)e->S * e->maxc; sl++) e->ph[sl].run = e->ph[sl].next = -1;
}

static int grow_timeline(av_timeline_t *tl, int64_t need, av_error_t *err) {
  if ((int64_t)tl->n + need > INT32_MAX)
    return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                        "timeline of %lld CTAs is too large", (long long)need);
  int32_t want = (int32_t)(tl->n + need);
  if (want <= tl->cap) return AV_OK;
  av_cta_event_t *ev = realloc(tl->ev, (size_t)want * sizeof *ev);
  if (!ev && want > 0)
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory for the timeline");
  tl->ev = ev;
  tl->cap = want;
  return AV_OK;
}

/* Fills the per-launch grid sizes, resources and issue times. */
static int setup_launches(av__eng_t *e, int32_t nl, const av_tile_t *merge_tile,
                          av_error_t *err) {
  for (int32_t l = 0; l < e->n_launches; l++) {
    av__eng_launch_t *L = &e->L[l];
    L->is_merge = l >= nl;
    const av_tile_t *tile = L->is_merge ? merge_tile : &e->plan->launches[l].tile;
    if (!L->is_merge) L->stream = e->plan->launches[l].stream;
    int rc = variant_resources(e, l, tile, L, err);
    if (rc) return rc;
    L->per_head = L->is_merge ? e->merge_per_head
                              : (L->persistent > 0 ? L->persistent : L->n_items);
    int64_t total = (int64_t)L->per_head * e->hkv;
    if (total > INT32_MAX)
      return av_error_set(err, AV_ERR_UNSUPPORTED, e->plan->scheduler, NULL,
                          "launch %d has %lld CTAs; at most %d are supported", l,
                          (long long)total, INT32_MAX);
    L->total = (int32_t)total;
    /* (l + 1) x the step when the host issues each launch (as a product, so a spec's
     * predictions do not move with the rounding of a sum), else all at the first issue */
    L->issue_us = e->lc.issue_step_us > 0 ? (l + 1) * e->lc.issue_step_us : e->lc.issue_first_us;
  }
  return AV_OK;
}

/* The engine's constants for plan in->plan on in->gpu: merge shape, HBM, per-SM and tensor
 * rates, L2 cost and lines, and what the cost model measures (e->cost_caps). *l2_cap: the L2
 * lines the cache model tracks. */
static int engine_setup(av__eng_t *e, const av__engine_in_t *in, av_tile_t *merge_tile,
                        int32_t *l2_cap, av_error_t *err) {
  const av_plan_t *p = in->plan;
  const av_gpu_t *g = in->gpu;
  memset(e, 0, sizeof *e);
  e->in = in;
  e->plan = p;
  e->hkv = p->heads.hkv;
  av_gpu_launch_costs(g, (int)av_plan_issue_model(p, g->sm_arch), &e->lc);
  e->S = g->sm_count;
  e->maxc = g->max_ctas_per_sm;
  int64_t n_merge_req = in->skip_merge ? 0 : av__engine_merge_requests(p);
  av__engine_merge_shape(e, merge_tile, &e->merge_rows_per_cta);
  int64_t merge_rows = n_merge_req > 0 ? (int64_t)p->n_requests * av_heads_group(&p->heads) : 0;
  if ((merge_rows + e->merge_rows_per_cta - 1) / e->merge_rows_per_cta > INT32_MAX / 2)
    return av_error_set(err, AV_ERR_UNSUPPORTED, p->scheduler, "merge",
                        "too many requests to merge (%d)", p->n_requests);
  e->merge_per_head = (int32_t)((merge_rows + e->merge_rows_per_cta - 1) / e->merge_rows_per_cta);
  e->has_merge = e->merge_per_head > 0;
  e->n_launches = p->n_launches + e->has_merge;
  e->B = av_gpu_hbm_bw_GBps(g) * 1e3;
  e->C = g->bytes_in_flight_per_sm > 0 && g->mem_latency_ns > 0
             ? g->bytes_in_flight_per_sm / (g->mem_latency_ns * 1e-3)
             : 1e30;
  e->T = g->fp16_tensor_tflops > 0 ? g->fp16_tensor_tflops * 1e6 / e->S : 1e30;
  e->l2_cost = g->l2_bw_GBps > 0 ? e->B / (g->l2_bw_GBps * 1e3) : 1;
  e->fixed_us = g->cta_fixed_us;
  /* A measured cost model carries each CTA's own time and rate (item_calibrate); the spec's
   * in-flight figure then bounds each CTA that the model does not cover (merge CTAs), as a
   * lone CTA's rate, which is how anvil profile measures it (docs/simulator.md). */
  e->cost_caps = in->cost && !in->durations_us ? av_costmodel_ops(in->cost)->flags : 0;
  e->cta_caps = (e->cost_caps & AV_COST_MEASURED_CTAS) != 0;
  e->merge_cap = e->C;
  e->token_bytes = 2.0 * p->heads.head_dim * av_dtype_bytes(p->heads.dtype);
  /* The L2 tracks KV in lines of whole paged blocks spanning >= 64 tokens: a CTA streams KV
   * in tiles of 32..128 tokens, so finer tracking would change nothing the model can see and
   * would cost a hash lookup per 16-token block (docs/simulator.md). */
  int bs = in->workload->block_size_tokens > 0 ? in->workload->block_size_tokens : 16;
  e->line_tokens = bs * ((64 + bs - 1) / bs);
  /* Under the measured cost model (the compiled kernels) a CTA reads and streams whole boxes
   * of KV (sim/engine_boxes.c), and its C(n_q, n) is looked up at their tokens. */
  e->box_rows = e->cta_caps ? av__engine_box_rows(g, in->workload, in->kv_copy) : 0;
  double l2_blocks = in->durations_us ? 0 : g->l2_bytes / (e->line_tokens * e->token_bytes);
  *l2_cap = l2_blocks >= INT32_MAX / 4 ? INT32_MAX / 4 : (int32_t)l2_blocks;
  e->l2_ranges = !in->l2_lines && *l2_cap > 0;
  return AV_OK;
}

int av__engine_run(const av__engine_in_t *in, av_sim_result_t *out, av_timeline_t *tl,
                   size_t *mem_bytes, av_error_t *err) {
  const av_plan_t *p = in->plan;
  const av_gpu_t *g = in->gpu;
  memset(out, 0, sizeof *out);
  if (g->sm_count <= 0 || g->max_ctas_per_sm <= 0 || p->heads.hkv <= 0)
    return av_error_set(err, AV_ERR_SCHEMA, g->name, NULL,
                        "the simulator needs sm_count, max_ctas_per_sm and hkv >= 1");
  av__eng_t e;
  av_tile_t merge_tile;
  int32_t l2_cap = 0;
  const int32_t nl = p->n_launches;
  int rc = engine_setup(&e, in, &merge_tile, &l2_cap, err);
  if (rc) return rc;
  int64_t qo = 0;
  for (int32_t l = 0; l < nl; l++)
    if (p->launches[l].persistent_ctas > 0) qo += p->launches[l].persistent_ctas + 1;
  /* sizing pass, then the one allocation */
  carve_t c = {NULL, 0};
  layout(&e, &c, p->n_items, e.merge_per_head, e.n_launches);
  carve(&c, (size_t)p->n_items, sizeof(int32_t));
  carve(&c, (size_t)p->n_items, sizeof(int32_t));
  carve(&c, (size_t)nl + 1, sizeof(int32_t));
  carve(&c, (size_t)qo, sizeof(int32_t));
  carve(&c, (size_t)nl, sizeof(uint64_t));
  /* the range model's runs: those being read (at most one per slot) and what the L2 holds
   * (the pool drops the oldest when it fills); a plan of few segments needs few */
  const int64_t slots = (int64_t)e.S * e.maxc;
  const int64_t runs_held = 4 * (int64_t)p->n_segments * e.hkv + 64;
  const int64_t runs_cap = slots + 2 * (int64_t)l2_cap + 64;
  const int32_t n_runs = e.l2_ranges ? (int32_t)(runs_held < runs_cap ? runs_held : runs_cap) : 0;
  const int32_t line_cap = e.l2_ranges ? 0 : l2_cap;
  carve(&c, av__l2_bytes(line_cap), 1);
  carve(&c, av__runs_bytes(n_runs), 1);
  c.base = calloc(1, c.off ? c.off : 1);
  if (!c.base)
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL,
                        "out of memory: the simulator needs %zu bytes for this plan", c.off);
  if (mem_bytes) *mem_bytes = c.off;
  c.off = 0;
  layout(&e, &c, p->n_items, e.merge_per_head, e.n_launches);
  int32_t *lists = carve(&c, (size_t)p->n_items, sizeof(int32_t));
  int32_t *queue = carve(&c, (size_t)p->n_items, sizeof(int32_t));
  int32_t *offs = carve(&c, (size_t)nl + 1, sizeof(int32_t));
  int32_t *qoffs = carve(&c, (size_t)qo, sizeof(int32_t));
  uint64_t *keys = carve(&c, (size_t)nl, sizeof(uint64_t));
  av__l2_init(&e.l2, line_cap, carve(&c, av__l2_bytes(line_cap), 1));
  av__runs_init(&e.runs, n_runs, (double)l2_cap * e.line_tokens * e.token_bytes,
                e.line_tokens * e.token_bytes, e.line_tokens,
                carve(&c, av__runs_bytes(n_runs), 1));

  rc = build_grids(&e, lists, offs, qoffs, queue, err);
  if (!rc) rc = setup_launches(&e, nl, &merge_tile, err);
  if (!rc && in->record_timeline && tl)
    rc = grow_timeline(tl, (int64_t)p->n_items * e.hkv + (int64_t)e.merge_per_head * e.hkv,
                       err);
  if (!rc) {
    if (!in->durations_us) item_costs(&e);
    if (e.has_merge) av__engine_merge_costs(&e);
    av__engine_empty_cost(&e);
    launch_curves(&e);
    av__engine_start_setup(&e);
    init_sms(&e);
    link_streams(&e, keys);
    e.partial_left = nl;
    e.launches_left = e.n_launches;
    e.tl = in->record_timeline ? tl : NULL;
    rc = av__engine_loop(&e, err);
  }
  if (!rc) rc = fill_result(&e, nl, out, err);
  free(c.base);
  return rc;
}

int av__sim_engine(const av_sim_config_t *cfg, const av_sim_input_t *sim_in, av_sim_result_t *out,
                   av_timeline_t *tl, av_error_t *err) {
  av__engine_in_t in = {.plan = sim_in->plan,
                        .workload = sim_in->workload,
                        .gpu = sim_in->gpu,
                        .variants = sim_in->variants,
                        .cost = sim_in->cost,
                        .record_timeline = cfg->record_timeline,
                        .l2_lines = cfg->model == AV_SIM_ENGINE_LINES,
                        .kv_copy = cfg->kv_copy};
  return av__engine_run(&in, out, tl, NULL, err);
}
