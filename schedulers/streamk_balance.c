/* streamk_balance: FlashInfer's load-balanced scheduler (FlashInfer §3.3.1, Algorithm 1).
 * Work units (a query tile against a KV range) are cut into chunks of at most L tokens,
 * L = total work / #CTA; chunks are taken longest first and each goes to the CTA of least
 * accumulated cost (a min-heap), giving per-CTA queues for one persistent launch and a fixed
 * merge order. With composable=true, shared-prefix nodes are their own multi-row units
 * (FlashInfer §3.1.2 composable formats) in the same balanced schedule. */
#include <stdlib.h>
#include <string.h>

#include "schedulers/sched_util.h"

static const av_param_def_t sk_params[] = {
    {.name = "composable", .type = AV_PARAM_BOOL, .def = "false",
     .help = "shared-prefix nodes (share > 1) as multi-row blocks with all their queries, "
             "unique suffixes per request (FlashInfer 3.1.2)"},
    {.name = "ctas", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 1e7,
     .help = "persistent CTAs (#CTA) per KV head, the grid being (#CTA, KV heads); 0 = SMs x "
             "CTAs per SM / KV heads, as FlashInfer's scheduler (max_grid_size / num_kv_heads)"},
    {.name = "ctas_per_sm", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 64,
     .help = "resident CTAs per SM; 0 = occupancy of the persistent variant"},
    {.name = "fallback_ctas_per_sm", .type = AV_PARAM_INT, .def = "1", .min = 1, .max = 64,
     .help = "CTAs per SM when the variants table cannot say (FlashInfer App. D.3: k is 1-2)"},
    {.name = "tq", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 4096,
     .help = "query tile rows T_q (a compiled persistent m); 0 = the smallest m that holds "
             "one request's GQA group, or the largest m with composable=true"},
    {.name = "alpha", .type = AV_PARAM_DOUBLE, .def = "1.0", .min = 0, .max = 1e9,
     .help = "cost(l_q, l_kv) = alpha*l_q + beta*l_kv (Algorithm 1 line 2): per query row"},
    {.name = "beta", .type = AV_PARAM_DOUBLE, .def = "1.0", .min = 0, .max = 1e9,
     .help = "cost per KV token (Algorithm 1 line 2)"},
    {.name = "min_chunk_tokens", .type = AV_PARAM_INT, .def = "16", .min = 1, .max = 1e9,
     .help = "lower bound on the chunk size L (tiny batches would otherwise give 1-token "
             "chunks)"},
    {.name = NULL},
};

/* A work unit: one query tile (queries[q_begin..+n_q)) over the KV of the nodes top..node
 * on its queries' common path (a single node for a shared-prefix block). */
typedef struct sk_unit {
  int32_t q_begin, n_q;
  int32_t top, node;
  int64_t kv;
  int whole;              /* covers its queries' whole paths: FINAL when not split */
} sk_unit_t;

typedef struct sk_chunk {
  int32_t unit, index;    /* index: creation order (the work index w) */
  int64_t begin, end;
  int32_t cta, order;
} sk_chunk_t;

typedef struct sk_cfg {
  int composable;
  double alpha, beta;
  int64_t min_chunk;
  av_tile_t tile;
  int32_t n_cta;
} sk_cfg_t;

static int sk_config(const av_sched_ctx_t *ctx, const av_params_t *p, sk_cfg_t *c,
                     av_error_t *err) {
  memset(c, 0, sizeof *c);
  c->composable = av_params_bool(p, "composable");
  c->alpha = av_params_double(p, "alpha");
  c->beta = av_params_double(p, "beta");
  c->min_chunk = av_params_int(p, "min_chunk_tokens");
  int g = av_heads_group(&ctx->workload->heads);
  int tq = (int)av_params_int(p, "tq");
  if (tq > 0 && tq < g)
    return av_error_set(err, AV_ERR_RANGE, NULL, "tq",
                        "tq = %d rows cannot hold one request's GQA group of %d query heads",
                        tq, g);
  /* Default T_q: one request's group; with composable formats the largest compiled m, so a
   * shared prefix's block holds as many queries as one tile can (FlashInfer §3.1.2: a larger
   * B_r lets more requests reuse the shared KV from shared memory). */
  int rows = tq > 0 ? tq : g;
  if (tq == 0 && c->composable) {
    rows = av_sched_max_rows(ctx, AV_KERNEL_PERSISTENT, err);
    if (rows <= 0) return err && err->code ? err->code : AV_ERR_UNSUPPORTED;
  }
  int rc = av_sched_pick_tile(ctx, AV_KERNEL_PERSISTENT, rows, AV_SCHED_DEFAULT_N, &c->tile,
                              err);
  if (rc) return rc;
  if (c->tile.m_rows < g || (tq > 0 && c->tile.m_rows != tq))
    return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, "tq",
                        "no compiled persistent tile has m = %d rows (the closest is m = %d)",
                        tq > 0 ? tq : g, c->tile.m_rows);
  int64_t ctas = av_params_int(p, "ctas");
  int64_t per_sm = av_params_int(p, "ctas_per_sm");
  const int64_t hkv = ctx->workload->heads.hkv;
  if (ctas > 0)
    c->n_cta = (int32_t)ctas;
  else if (per_sm > 0)
    c->n_cta = (int32_t)(ctx->gpu->sm_count * per_sm / (hkv > 0 ? hkv : 1));
  else
    c->n_cta = av_sched_concurrent_queues(ctx, &c->tile,
                                          (int)av_params_int(p, "fallback_ctas_per_sm"));
  if (c->n_cta < 1)
    return av_error_set(err, AV_ERR_RANGE, NULL, "ctas", "the GPU spec gives no CTAs");
  return AV_OK;
}

/* Work units and their queries. Without composable formats every request is one unit over
 * its whole path (its GQA group fits one query tile). With them, every node shared by more
 * than one request is a block of all its queries (cut into T_q-row tiles), and each request
 * keeps a unit for its unique suffix (the nodes below the last shared one), if any. Returns
 * the unit count; queries[] receives the units' queries. */
static int32_t sk_units(const sk_cfg_t *c, const av_workload_t *w, sk_unit_t *units,
                        int32_t *queries, int32_t *sizes) {
  int32_t n = 0, nq = 0;
  if (c->composable) {
    int32_t per = c->tile.m_rows / av_heads_group(&w->heads);
    for (int32_t u = 0; u < w->n_nodes; u++) {
      if (w->nodes[u].share <= 1) continue;
      int32_t b = w->node_req_offsets[u];
      int32_t groups = av_sched_split_even(w->node_req_offsets[u + 1] - b, per, sizes);
      for (int32_t g = 0; g < groups; b += sizes[g], g++) {
        memcpy(queries + nq, w->node_reqs + b, (size_t)sizes[g] * sizeof *queries);
        units[n++] = (sk_unit_t){.q_begin = nq, .n_q = sizes[g], .top = u, .node = u,
                                 .kv = w->nodes[u].kv_len_tokens,
                                 .whole = av_sched_node_is_whole_path(w, u)};
        nq += sizes[g];
      }
    }
  }
  for (int32_t r = 0; r < w->n_requests; r++) {
    int32_t leaf = w->request_node[r], top = leaf;
    if (c->composable) {
      if (w->nodes[leaf].share > 1) continue; /* the whole path is shared blocks */
      while (w->nodes[top].parent >= 0 && w->nodes[w->nodes[top].parent].share <= 1)
        top = w->nodes[top].parent;
    } else {
      while (w->nodes[top].parent >= 0) top = w->nodes[top].parent;
    }
    queries[nq] = r;
    int64_t kv = w->nodes[leaf].path_offset_tokens + w->nodes[leaf].kv_len_tokens -
                 w->nodes[top].path_offset_tokens;
    units[n++] = (sk_unit_t){.q_begin = nq++, .n_q = 1, .top = top, .node = leaf, .kv = kv,
                             .whole = w->nodes[top].parent < 0};
  }
  return n;
}

static int sk_chunk_cmp(const void *a, const void *b) {
  const sk_chunk_t *x = a, *y = b;
  int64_t lx = x->end - x->begin, ly = y->end - y->begin;
  if (lx != ly) return lx > ly ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

typedef struct sk_heap_entry {
  double cost;
  int32_t cta;
} sk_heap_entry_t;

static int sk_less(const sk_heap_entry_t *a, const sk_heap_entry_t *b) {
  return a->cost < b->cost || (a->cost == b->cost && a->cta < b->cta);
}

/* Restores the heap property below slot i (the top's cost only ever grows). */
static void sk_sift_down(sk_heap_entry_t *h, int32_t n, int32_t i) {
  for (;;) {
    int32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && sk_less(&h[l], &h[m])) m = l;
    if (r < n && sk_less(&h[r], &h[m])) m = r;
    if (m == i) return;
    sk_heap_entry_t t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

/* FlashInfer Algorithm 1 lines 3-13. Returns the chunk count. L is the maximum chunk size
 * ceil(Σ ceil(l_q/T_q)·l_kv / #CTA) (each unit is one query tile, so its work is l_kv),
 * bounded below by min_chunk_tokens; chunks are [jL, min((j+1)L, l_kv)). */
static int32_t sk_assign(const sk_cfg_t *c, const sk_unit_t *units, int32_t n_units,
                         sk_chunk_t *chunks, sk_heap_entry_t *heap, int32_t *queue_len) {
  int64_t total = 0;
  for (int32_t i = 0; i < n_units; i++) total += units[i].kv;
  int64_t L = (total + c->n_cta - 1) / c->n_cta;
  if (L < c->min_chunk) L = c->min_chunk;
  /* Chunks in "longest first, then lower w" order without sorting them all: every chunk is
   * L long except each unit's last, so the L-long chunks come first in creation order (their
   * w order), then the shorter last chunks sorted by (length desc, w). Equal to sorting the
   * whole list with sk_chunk_cmp, at a fraction of the planning time. */
  int32_t n = 0, n_tail = 0;
  for (int32_t i = 0; i < n_units; i++)
    for (int64_t b = 0; b < units[i].kv; b += L) n += b + L <= units[i].kv;
  sk_chunk_t *tail = chunks + n;
  for (int32_t i = 0, w = 0, full = 0; i < n_units; i++)
    for (int64_t b = 0; b < units[i].kv; b += L, w++) {
      int64_t e = b + L < units[i].kv ? b + L : units[i].kv;
      sk_chunk_t ch = {.unit = i, .index = w, .begin = b, .end = e};
      if (e - b == L)
        chunks[full++] = ch;
      else
        tail[n_tail++] = ch;
    }
  qsort(tail, (size_t)n_tail, sizeof *tail, sk_chunk_cmp);
  n += n_tail;
  /* all costs 0 and ids ascending: already a heap */
  for (int32_t k = 0; k < c->n_cta; k++) {
    heap[k] = (sk_heap_entry_t){.cost = 0.0, .cta = k};
    queue_len[k] = 0;
  }
  for (int32_t i = 0; i < n; i++) {
    int32_t cta = heap[0].cta;
    chunks[i].cta = cta;
    chunks[i].order = queue_len[cta]++;
    /* Algorithm 1 line 10: cost(T_q, l_kv(w)) = alpha·T_q + beta·l_kv(w) */
    heap[0].cost +=
        c->alpha * c->tile.m_rows + c->beta * (double)(chunks[i].end - chunks[i].begin);
    sk_sift_down(heap, c->n_cta, 0);
  }
  return n;
}

/* The merge order: each request's partial states in KV order along its path (position of
 * the item's first token), independent of which CTA ran which chunk — FlashInfer's
 * deterministic contraction order. Bucketed by request, then an insertion sort per request
 * (a request has few partials; a global sort of all slots would dominate planning time). */
typedef struct sk_slot {
  int64_t pos;
  int32_t slot;
} sk_slot_t;

static int sk_merge_order(av_plan_t *p, const av_workload_t *w, av_error_t *err) {
  sk_slot_t *s = malloc(((size_t)p->n_slots + 1) * sizeof *s);
  int32_t *off = calloc((size_t)w->n_requests + 2, sizeof *off);
  int32_t *slots = malloc(((size_t)p->n_slots + 1) * sizeof *slots);
  int rc = AV_OK;
  if (!s || !off || !slots) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory ordering the merge");
    goto done;
  }
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t i = 0; i < p->n_items; i++) {
      const av_item_t *it = &p->items[i];
      if (it->output != AV_OUT_PARTIAL) continue;
      const av_segment_t *sg = &p->segments[it->seg_begin];
      int64_t pos = w->nodes[sg->node].path_offset_tokens + sg->begin;
      for (int32_t k = 0; k < it->n_q; k++) {
        int32_t r = p->item_queries[it->q_begin + k];
        if (pass == 0)
          off[r + 2]++;
        else
          s[off[r + 1]++] = (sk_slot_t){.pos = pos, .slot = it->slot_begin + k};
      }
    }
    if (pass == 0)
      for (int32_t r = 0; r < w->n_requests; r++) off[r + 2] += off[r + 1];
  }
  /* off[r + 1] now ends request r's bucket, which starts at off[r] */
  for (int32_t r = 0; r < w->n_requests; r++)
    for (int32_t k = off[r] + 1; k < off[r + 1]; k++) {
      sk_slot_t x = s[k];
      int32_t j = k;
      for (; j > off[r] && (s[j - 1].pos > x.pos ||
                            (s[j - 1].pos == x.pos && s[j - 1].slot > x.slot));
           j--)
        s[j] = s[j - 1];
      s[j] = x;
    }
  for (int32_t k = 0; k < off[w->n_requests]; k++) slots[k] = s[k].slot;
  rc = av_plan_set_merge(p, off, slots, err);
done:
  free(s);
  free(off);
  free(slots);
  return rc;
}

/* The units, their queries and the chunks of them assigned to CTAs. */
typedef struct {
  const sk_unit_t *units;
  const int32_t *queries;
  sk_chunk_t *chunks;
  int32_t n_chunks;
} sk_work_t;

/* Room for one path: its nodes root first and its segments (max_depth + 1 each). */
typedef struct {
  av_segment_t *segs;
  int32_t *chain;
} sk_path_buf_t;

/* One persistent launch; items in CTA order, each CTA's queue in assignment order. */
static int sk_emit(const sk_cfg_t *c, const av_workload_t *w, const sk_work_t *work,
                   int32_t *queue_start, const sk_path_buf_t *buf, av_plan_t *p, av_error_t *err) {
  const sk_unit_t *units = work->units;
  const int32_t *queries = work->queries;
  sk_chunk_t *chunks = work->chunks;
  const int32_t n_chunks = work->n_chunks;
  av_segment_t *segs = buf->segs;
  int32_t *chain = buf->chain;
  int32_t launch = av_sched_add_launch(p, 0, &c->tile, c->n_cta, err);
  if (launch < 0) return AV_ERR_NOMEM;
  /* queue_start holds queue lengths on entry: prefix sums give each CTA's first position */
  int32_t *pos = queue_start;
  for (int32_t k = 0, acc = 0; k <= c->n_cta; k++) {
    int32_t len = k < c->n_cta ? pos[k] : 0;
    pos[k] = acc;
    acc += len;
  }
  for (int32_t i = 0; i < n_chunks; i++) chunks[i].index = pos[chunks[i].cta] + chunks[i].order;
  /* chunks[i].index is now the item position; walk items in that order */
  int32_t *order = malloc(((size_t)n_chunks + 1) * sizeof *order);
  if (!order) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory (streamk)");
  for (int32_t i = 0; i < n_chunks; i++) order[chunks[i].index] = i;
  int rc = AV_OK;
  for (int32_t k = 0; k < n_chunks && rc == AV_OK; k++) {
    const sk_chunk_t *ch = &chunks[order[k]];
    const sk_unit_t *u = &units[ch->unit];
    int32_t depth = 0;
    for (int32_t v = u->node;; v = w->nodes[v].parent) {
      depth++;
      if (v == u->top) break;
    }
    for (int32_t v = u->node, d = depth; d > 0; v = w->nodes[v].parent) chain[--d] = v;
    int32_t n_seg = av_sched_path_segments(w, chain, depth, ch->begin, ch->end, segs);
    int final = u->whole && ch->begin == 0 && ch->end == u->kv;
    if (av_sched_add_item(p, launch, (av_item_work_t){queries + u->q_begin, u->n_q, segs, n_seg},
                          final ? AV_OUT_FINAL : AV_OUT_PARTIAL, ch->cta, ch->order, err) < 0)
      rc = AV_ERR_NOMEM;
  }
  free(order);
  return rc;
}

static int sk_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                   av_error_t *err) {
  *out = NULL;
  sk_cfg_t c;
  int rc = sk_config(ctx, params, &c, err);
  if (rc) return rc;
  const av_workload_t *w = ctx->workload;
  /* Units: at most one per request plus one per shared node and query tile; queries: at most
   * n_requests + Σ share over shared nodes. */
  size_t max_units = (size_t)w->n_requests + 1, max_q = (size_t)w->n_requests + 1;
  if (c.composable)
    for (int32_t u = 0; u < w->n_nodes; u++)
      if (w->nodes[u].share > 1) {
        max_units += (size_t)w->nodes[u].share;
        max_q += (size_t)w->nodes[u].share;
      }
  size_t depth = (size_t)w->max_depth + 1;
  sk_unit_t *units = malloc(max_units * sizeof *units);
  int32_t *queries = malloc(max_q * sizeof *queries);
  int32_t *sizes = malloc(max_q * sizeof *sizes);
  sk_chunk_t *chunks = malloc((max_units + (size_t)c.n_cta + 1) * sizeof *chunks);
  sk_heap_entry_t *heap = malloc((size_t)c.n_cta * sizeof *heap);
  int32_t *queue = malloc(((size_t)c.n_cta + 1) * sizeof *queue);
  av_segment_t *segs = malloc(depth * sizeof *segs);
  int32_t *chain = malloc(depth * sizeof *chain);
  av_plan_t *p = av_plan_create(w, "streamk_balance");
  if (!units || !queries || !sizes || !chunks || !heap || !queue || !segs || !chain || !p) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning streamk_balance");
  } else {
    int32_t n_units = sk_units(&c, w, units, queries, sizes);
    int32_t n_chunks = sk_assign(&c, units, n_units, chunks, heap, queue);
    const sk_work_t work = {units, queries, chunks, n_chunks};
    const sk_path_buf_t buf = {segs, chain};
    rc = sk_emit(&c, w, &work, queue, &buf, p, err);
    if (rc == AV_OK) rc = sk_merge_order(p, w, err);
  }
  free(units);
  free(queries);
  free(sizes);
  free(chunks);
  free(heap);
  free(queue);
  free(segs);
  free(chain);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  *out = p;
  return AV_OK;
}

const av_scheduler_ops_t av_sched_streamk_balance = {
    .name = "streamk_balance",
    .description = "FlashInfer Alg. 1: KV chunks longest first to the least-loaded of a "
                   "persistent grid (min-heap); composable shared-prefix blocks optional",
    .params = sk_params,
    .plan = sk_plan,
};
