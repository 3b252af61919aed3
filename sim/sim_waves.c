/* The "waves" simulator model: the closed-form estimate of wave quantization (PAT §3.3,
 * FlashInfer §3.3). A launch's CTAs (items x hkv, or persistent CTAs x hkv) are dispatched in
 * grid order, k = occupancy per SM on S SMs, so wave w holds CTAs [w·kS, (w+1)·kS) and lasts
 * as long as its longest CTA; a launch takes ceil(N/(kS)) such waves. Launches on one stream
 * run back to back, streams overlap (makespan = the latest stream), each launch pays the
 * launch overhead, and the merge phase moves the partial states at HBM bandwidth. A wave is
 * never shorter than its bytes at HBM bandwidth. It ignores contention between concurrent
 * streams and L2 reuse: that is the engine's job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/occupancy.h"
#include "sim/sim_internal.h"

/* One launch seen as "units" (a CTA's work for one KV head): an item for ordinary launches,
 * a whole per-CTA queue for persistent ones. unit u runs items uitems[uoff[u]..uoff[u+1]). */
typedef struct waves_scratch {
  double *item_us, *item_bytes;  /* n_items */
  double *unit_us, *unit_bytes;  /* max_units */
  int32_t *uoff;                 /* max_units + 1 */
  int32_t *cursor;               /* max_units + 1: fill positions while grouping */
  int32_t *uitems;               /* n_items */
  int32_t *launch_items;         /* n_items: item indices grouped by launch, in item order */
  int32_t *launch_off;           /* n_launches + 1 */
  double *stream_end;            /* n_launches */
  int32_t *stream_id;            /* n_launches */
} waves_scratch_t;

static void scratch_free(waves_scratch_t *s) {
  free(s->item_us);
  free(s->item_bytes);
  free(s->unit_us);
  free(s->unit_bytes);
  free(s->uoff);
  free(s->cursor);
  free(s->uitems);
  free(s->launch_items);
  free(s->launch_off);
  free(s->stream_end);
  free(s->stream_id);
}

static int scratch_alloc(const av_plan_t *p, waves_scratch_t *s) {
  int32_t max_units = p->n_items;
  for (int32_t l = 0; l < p->n_launches; l++)
    if (p->launches[l].persistent_ctas > max_units) max_units = p->launches[l].persistent_ctas;
  if (p->n_launches > max_units) max_units = p->n_launches; /* cursor doubles per launch */
  size_t ni = (size_t)p->n_items + 1, nu = (size_t)max_units + 1, nl = (size_t)p->n_launches + 1;
  s->item_us = calloc(ni, sizeof *s->item_us);
  s->item_bytes = calloc(ni, sizeof *s->item_bytes);
  s->unit_us = calloc(nu, sizeof *s->unit_us);
  s->unit_bytes = calloc(nu, sizeof *s->unit_bytes);
  s->uoff = calloc(nu + 1, sizeof *s->uoff);
  s->cursor = calloc(nu + 1, sizeof *s->cursor);
  s->uitems = calloc(ni, sizeof *s->uitems);
  s->launch_items = calloc(ni, sizeof *s->launch_items);
  s->launch_off = calloc(nl, sizeof *s->launch_off);
  s->stream_end = calloc(nl, sizeof *s->stream_end);
  s->stream_id = calloc(nl, sizeof *s->stream_id);
  return s->item_us && s->item_bytes && s->unit_us && s->unit_bytes && s->uoff && s->cursor && s->uitems &&
         s->launch_items && s->launch_off && s->stream_end && s->stream_id;
}

/* The occupancy of launch l's variant; an error names the tile and architecture. */
static int launch_occupancy(const av_plan_t *p, int32_t l, const av_gpu_t *gpu,
                            const av_variants_t *vs, int *k, av_error_t *err) {
  const av_tile_t *t = &p->launches[l].tile;
  char where[64];
  snprintf(where, sizeof where, "launches[%d].tile", (int)l);
  int rc = av_variants_require(vs, t, &p->heads, gpu, where, err);
  if (rc) return rc;
  const av_variant_t *v = av_variants_find(vs, t, p->heads.head_dim, p->heads.dtype,
                                           gpu->sm_arch);
  av_occupancy_t occ;
  av_occupancy(gpu, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
  if (occ.ctas_per_sm <= 0)
    return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, where,
                        "tile %s m=%d n=%d warps=%d cannot run on %s (%d threads, %d "
                        "registers, %d bytes of shared memory per CTA)",
                        av_kernel_kind_name(t->kind), t->m_rows, t->n_tokens, t->warps,
                        gpu->name, v->threads, v->regs_per_thread, v->smem_bytes);
  *k = occ.ctas_per_sm;
  return AV_OK;
}

/* Per-item time and bytes (one KV head) from the cost model, and items grouped by launch. */
static void item_costs(const av_plan_t *p, const av_costmodel_t *cost, waves_scratch_t *s) {
  int group = av_heads_group(&p->heads);
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    int64_t kv = 0;
    for (int32_t j = 0; j < it->n_seg; j++) {
      const av_segment_t *sg = &p->segments[it->seg_begin + j];
      kv += sg->end - sg->begin;
    }
    av_cost_query_t q = {.n_q = it->n_q, .rows = it->n_q * group, .kv_tokens = kv,
                         .tile = p->launches[it->launch].tile, .output = it->output};
    av_item_cost_t c;
    av_costmodel_estimate(cost, &q, &c);
    s->item_us[i] = c.time_us;
    s->item_bytes[i] = c.hbm_bytes;
  }
  /* Counting sort by launch keeps item order inside a launch (the dispatch order). */
  memset(s->launch_off, 0, ((size_t)p->n_launches + 1) * sizeof *s->launch_off);
  for (int32_t i = 0; i < p->n_items; i++) s->launch_off[p->items[i].launch + 1]++;
  for (int32_t l = 0; l < p->n_launches; l++) s->launch_off[l + 1] += s->launch_off[l];
  memcpy(s->cursor, s->launch_off, (size_t)p->n_launches * sizeof *s->cursor);
  for (int32_t i = 0; i < p->n_items; i++) s->launch_items[s->cursor[p->items[i].launch]++] = i;
}

/* Insertion sort by queue position: schedulers emit a CTA's items in queue order, so this
 * is one pass in practice, stable, and needs no context pointer (qsort has none in C11). */
static void sort_queue(const av_plan_t *p, int32_t *a, int32_t n) {
  for (int32_t i = 1; i < n; i++) {
    int32_t x = a[i], j = i;
    while (j > 0 && p->items[a[j - 1]].order > p->items[x].order) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

/* Builds launch l's units; returns their count. */
static int32_t build_units(const av_plan_t *p, int32_t l, waves_scratch_t *s) {
  const int32_t *li = s->launch_items + s->launch_off[l];
  int32_t n = s->launch_off[l + 1] - s->launch_off[l];
  int32_t P = p->launches[l].persistent_ctas;
  if (P <= 0) {
    for (int32_t u = 0; u < n; u++) {
      s->uoff[u] = u;
      s->uitems[u] = li[u];
      s->unit_us[u] = s->item_us[li[u]];
      s->unit_bytes[u] = s->item_bytes[li[u]];
    }
    s->uoff[n] = n;
    return n;
  }
  /* Persistent grid: CTA c runs the items with cta == c in queue order. */
  memset(s->uoff, 0, ((size_t)P + 1) * sizeof *s->uoff);
  for (int32_t j = 0; j < n; j++) {
    int32_t c = p->items[li[j]].cta;
    s->uoff[(c >= 0 && c < P ? c : 0) + 1]++;
  }
  for (int32_t c = 0; c < P; c++) s->uoff[c + 1] += s->uoff[c];
  memcpy(s->cursor, s->uoff, (size_t)P * sizeof *s->cursor);
  for (int32_t j = 0; j < n; j++) {
    int32_t c = p->items[li[j]].cta;
    s->uitems[s->cursor[c >= 0 && c < P ? c : 0]++] = li[j];
  }
  for (int32_t c = 0; c < P; c++) {
    sort_queue(p, s->uitems + s->uoff[c], s->uoff[c + 1] - s->uoff[c]);
    double t = 0, b = 0;
    for (int32_t j = s->uoff[c]; j < s->uoff[c + 1]; j++) {
      t += s->item_us[s->uitems[j]];
      b += s->item_bytes[s->uitems[j]];
    }
    s->unit_us[c] = t;
    s->unit_bytes[c] = b;
  }
  return P;
}

static int timeline_push(av_timeline_t *tl, const av_cta_event_t *e) {
  if (tl->n == tl->cap) {
    int32_t cap = tl->cap ? 2 * tl->cap : 1024;
    av_cta_event_t *ev = realloc(tl->ev, (size_t)cap * sizeof *ev);
    if (!ev) return AV_ERR_NOMEM;
    tl->ev = ev;
    tl->cap = cap;
  }
  tl->ev[tl->n++] = *e;
  return AV_OK;
}

/* One wave of CTAs [j0, j1): as long as its longest CTA, but never shorter than its bytes at
 * HBM bandwidth. The cost model's item time assumes the bandwidth is shared by
 * env.concurrent_ctas CTAs; k CTAs per SM can put more than that in flight, and without
 * this bound a wave of many memory-bound CTAs would beat the bandwidth floor (DESIGN
 * §Numbers that matter). A stretched wave stretches its CTAs by the same factor. */
static double wave_time(const waves_scratch_t *s, int32_t U, int64_t j0,
                        int64_t j1, double bw_Bpus, double *stretch) {
  double longest = 0, bytes = 0;
  for (int64_t j = j0; j < j1; j++) {
    int32_t u = (int32_t)(j % U);
    if (s->unit_us[u] > longest) longest = s->unit_us[u];
    bytes += s->unit_bytes[u];
  }
  double by_bw = bytes / bw_Bpus;
  *stretch = by_bw > longest && longest > 0 ? by_bw / longest : 1.0;
  return by_bw > longest ? by_bw : longest;
}

/* A launch as the waves see it: its index, its units (CTAs per KV head) and CTAs per SM. */
typedef struct {
  int32_t l, units;
  int ctas_per_sm;
} waves_launch_t;

/* One launch's waves starting at t0: returns the launch's duration and its busy CTA time
 * (Σ CTA time); records CTAs on tl when given. */
static int run_launch(const av_plan_t *p, const waves_launch_t *lw, const av_gpu_t *gpu,
                      const waves_scratch_t *s, double t0, av_timeline_t *tl, double *dur_us,
                      double *busy_us) {
  const int32_t l = lw->l, U = lw->units;
  const int k = lw->ctas_per_sm;
  int64_t N = (int64_t)U * p->heads.hkv, slots = (int64_t)k * gpu->sm_count;
  double bw_Bpus = av_gpu_hbm_bw_GBps(gpu) * 1e3; /* GB/s = 1e3 bytes/us */
  double t = 0, busy = 0;
  for (int64_t j0 = 0; j0 < N; j0 += slots) {
    int64_t j1 = j0 + slots < N ? j0 + slots : N;
    double stretch;
    double wave = wave_time(s, U, j0, j1, bw_Bpus, &stretch);
    for (int64_t j = j0; j < j1; j++) {
      int32_t u = (int32_t)(j % U);
      busy += s->unit_us[u] * stretch;
      if (!tl) continue;
      double start = t0 + t;
      for (int32_t q = s->uoff[u]; q < s->uoff[u + 1]; q++) {
        double it = s->item_us[s->uitems[q]] * stretch;
        av_cta_event_t e = {.item = s->uitems[q], .launch = l, .head = (int32_t)(j / U),
                            .sm = (int32_t)((j - j0) % gpu->sm_count), .start_us = start,
                            .end_us = start + it};
        if (timeline_push(tl, &e)) return AV_ERR_NOMEM;
        start += it;
      }
    }
    t += wave;
  }
  *dur_us = t;
  *busy_us = busy;
  return AV_OK;
}

/* Merge phase: read every partial state (O and lse in fp32 for each of the slot's query
 * heads) and write each merged request's output, at HBM bandwidth, after one launch. */
static double merge_bytes(const av_plan_t *p) {
  if (p->n_slots <= 0) return 0;
  const av_heads_t *h = &p->heads;
  double merged = 0;
  for (int32_t r = 0; r < p->n_requests && p->merge_offsets; r++)
    if (p->merge_offsets[r + 1] > p->merge_offsets[r]) merged++;
  return (double)p->n_slots * h->hq * (h->head_dim + 1.0) * 4.0 +
         merged * h->hq * h->head_dim * (double)av_dtype_bytes(h->dtype);
}

static int32_t stream_slot(waves_scratch_t *s, int32_t *n_streams, int32_t stream) {
  for (int32_t i = 0; i < *n_streams; i++)
    if (s->stream_id[i] == stream) return i;
  s->stream_id[*n_streams] = stream;
  s->stream_end[*n_streams] = 0;
  return (*n_streams)++;
}

static int run_all(const av_plan_t *p, const av_gpu_t *gpu, const av_variants_t *vs,
                   waves_scratch_t *s, av_sim_result_t *out, av_timeline_t *tl,
                   double *busy_slot_us, av_error_t *err) {
  int32_t n_streams = 0;
  *busy_slot_us = 0;
  /* Streams: the host issues every launch, launch_overhead_us each. A graph: a stream's
   * first kernel is ready at the graph's start, a later one after the stream gap. */
  const int graph = p->launch_model == AV_LAUNCH_GRAPH;
  av_launch_costs_t lc;
  av_gpu_launch_costs(gpu, graph, &lc);
  for (int32_t l = 0; l < p->n_launches; l++) {
    int k = 0;
    int rc = launch_occupancy(p, l, gpu, vs, &k, err);
    if (rc) return rc;
    int32_t U = build_units(p, l, s);
    int32_t si = stream_slot(s, &n_streams, p->launches[l].stream);
    const double issue = !graph ? gpu->launch_overhead_us
                         : s->stream_end[si] > 0 ? lc.stream_gap_us : lc.issue_first_us;
    double start = s->stream_end[si] + issue, dur = 0, busy = 0;
    const waves_launch_t lw = {l, U, k};
    if (U > 0 && run_launch(p, &lw, gpu, s, start, tl, &dur, &busy))
      return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory recording timeline");
    s->stream_end[si] = start + dur;
    av_sim_launch_result_t *lr = &out->launches[l];
    lr->start_us = start;
    lr->end_us = start + dur;
    lr->ctas = U * p->heads.hkv;
    lr->ctas_per_sm = k;
    lr->waves = (double)lr->ctas / ((double)k * gpu->sm_count);
    /* A CTA holds 1/k of its SM while it runs. */
    *busy_slot_us += busy / k;
  }
  for (int32_t i = 0; i < n_streams; i++)
    if (s->stream_end[i] > out->partial_us) out->partial_us = s->stream_end[i];
  return AV_OK;
}

int av__sim_waves(const av_sim_config_t *cfg, const av_sim_input_t *in, av_sim_result_t *out,
                  av_timeline_t *tl, av_error_t *err) {
  const av_plan_t *p = in->plan;
  const av_gpu_t *gpu = in->gpu;
  const av_variants_t *variants = in->variants;
  const av_costmodel_t *cost = in->cost;
  if (!cost)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "the waves model needs a cost model");
  if (!variants)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL,
                        "the waves model needs the kernel variant table");
  waves_scratch_t s = {0};
  out->launches = calloc((size_t)p->n_launches + 1, sizeof *out->launches);
  if (!out->launches || !scratch_alloc(p, &s)) {
    scratch_free(&s);
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory simulating the plan");
  }
  out->n_launches = p->n_launches;
  item_costs(p, cost, &s);
  double busy_slot_us;
  int rc = run_all(p, gpu, variants, &s, out, cfg->record_timeline ? tl : NULL,
                   &busy_slot_us, err);
  if (!rc) {
    double item_bytes = 0;
    for (int32_t i = 0; i < p->n_items; i++) item_bytes += s.item_bytes[i];
    double mbytes = merge_bytes(p);
    double bw_Bpus = av_gpu_hbm_bw_GBps(gpu) * 1e3; /* GB/s = 1e3 bytes/us */
    av_launch_costs_t lc;
    const av_launch_model_t m = av_plan_issue_model(p, gpu->sm_arch);
    av_gpu_launch_costs(gpu, (int)m, &lc);
    const int measured = m == AV_LAUNCH_GRAPH || (m == AV_LAUNCH_PDL && gpu->pdl_join_overhead_us > 0);
    const double join = measured ? lc.join_us : gpu->launch_overhead_us;
    out->merge_us = mbytes > 0 ? join + mbytes / bw_Bpus : 0;
    out->makespan_us = out->partial_us + out->merge_us;
    out->hbm_bytes = item_bytes * p->heads.hkv + mbytes;
    out->l2_bytes = 0;
    out->achieved_bw_GBps = out->makespan_us > 0 ? out->hbm_bytes / out->makespan_us / 1e3 : 0;
    double cap = (double)gpu->sm_count * out->makespan_us;
    out->sm_busy_frac = cap > 0 ? busy_slot_us / cap : 0;
    if (out->sm_busy_frac > 1) out->sm_busy_frac = 1;
    out->bubble_frac = cap > 0 ? 1 - out->sm_busy_frac : 0;
  }
  scratch_free(&s);
  return rc;
}
