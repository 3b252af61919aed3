/* The plan checker: proves a plan exact for its workload (DESIGN §Data model, "plan checker").
 * Exactness is a tiling argument: for every request, the (node, token range) pieces of the
 * items that include it must tile each node of its KV path with no gap and no overlap; every
 * partial state must then reach its request's merge exactly once. Work is
 * O(S log S) for S = sum over items of queries x segments; nothing is per token. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"

/* One (request, node, token range) piece of an item. */
typedef struct piece {
  int32_t request, node, item;
  int64_t begin, end;
} piece_t;

typedef struct checker {
  const av_plan_t *p;
  const av_workload_t *w;
  av_error_t *err;
  int32_t *tin, *size;     /* pre-order number and subtree size per node (ancestor test) */
  int32_t *items_of;       /* per request: items whose queries include it */
  int32_t *final_item;     /* per request: its FINAL item, or -1 */
  int32_t *stamp;          /* per request: last item that listed it (duplicate test) */
} checker_t;

static int fail(checker_t *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(checker_t *c, const char *path, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return av_error_set(c->err, AV_ERR_PLAN, NULL, path, "%s", msg);
}

static int nomem(checker_t *c) {
  return av_error_set(c->err, AV_ERR_NOMEM, NULL, NULL, "out of memory checking the plan");
}

/* u is on the root->v path iff u's subtree (a contiguous pre-order range) contains v. */
static int on_path(const checker_t *c, int32_t u, int32_t v) {
  return c->tin[u] <= c->tin[v] && c->tin[v] < c->tin[u] + c->size[u];
}

/* Pre-order numbering from the parent array alone: parents precede children, so subtree
 * sizes accumulate backwards and numbers hand out forwards. */
static int number_nodes(checker_t *c) {
  const av_workload_t *w = c->w;
  int32_t n = w->n_nodes;
  for (int32_t u = 0; u < n; u++) c->size[u] = 1;
  for (int32_t u = n - 1; u >= 0; u--)
    if (w->nodes[u].parent >= 0) c->size[w->nodes[u].parent] += c->size[u];
  /* free_below[u]: the next number to hand to a child of u. */
  int32_t *free_below = malloc(((size_t)n + 1) * sizeof *free_below);
  if (!free_below) return nomem(c);
  int32_t root_next = 0;
  for (int32_t u = 0; u < n; u++) {
    int32_t par = w->nodes[u].parent;
    if (par < 0) {
      c->tin[u] = root_next;
      root_next += c->size[u];
    } else {
      c->tin[u] = free_below[par];
      free_below[par] += c->size[u];
    }
    free_below[u] = c->tin[u] + 1;
  }
  free(free_below);
  return AV_OK;
}

static int check_header(checker_t *c) {
  const av_plan_t *p = c->p;
  const av_workload_t *w = c->w;
  if (p->n_requests != w->n_requests || p->n_nodes != w->n_nodes)
    return av_error_set(c->err, AV_ERR_MISMATCH, NULL, NULL,
                        "plan is for %d requests and %d nodes; the workload has %d and %d",
                        p->n_requests, p->n_nodes, w->n_requests, w->n_nodes);
  uint64_t h = av_workload_hash(w);
  if (p->workload_hash != h)
    return av_error_set(c->err, AV_ERR_MISMATCH, NULL, NULL,
                        "plan was made for workload hash %016" PRIx64
                        ", not for this workload (%016" PRIx64 ")",
                        p->workload_hash, h);
  if (!p->merge_offsets || (p->n_slots > 0 && !p->slot_request))
    return fail(c, NULL, "plan is not finalized (av_plan_finalize was not called)");
  for (int32_t l = 0; l < p->n_launches; l++) {
    const av_launch_t *L = &p->launches[l];
    char where[64];
    snprintf(where, sizeof where, "launches[%d]", l);
    if (L->stream < 0) return fail(c, where, "launch %d has negative stream %d", l, L->stream);
    if (L->persistent_ctas < 0)
      return fail(c, where, "launch %d has negative persistent_ctas %d", l, L->persistent_ctas);
    if ((int)L->tile.kind < AV_KERNEL_PARTIAL || (int)L->tile.kind > AV_KERNEL_MERGE)
      return fail(c, where, "launch %d has unknown kernel kind %d", l, (int)L->tile.kind);
    if (L->tile.m_rows < 1 || L->tile.n_tokens < 1 || L->tile.warps < 1)
      return fail(c, where, "launch %d has tile m=%d n=%d warps=%d; each must be >= 1", l,
                  L->tile.m_rows, L->tile.n_tokens, L->tile.warps);
  }
  return AV_OK;
}

/* Queries of item i: in range, distinct, and fitting the tile with their GQA group. */
static int check_item_queries(checker_t *c, int32_t i) {
  const av_plan_t *p = c->p;
  const av_item_t *it = &p->items[i];
  char where[64];
  snprintf(where, sizeof where, "items[%d].queries", i);
  if (it->n_q < 1) return fail(c, where, "item %d has no queries", i);
  if (it->q_begin < 0 || (int64_t)it->q_begin + it->n_q > p->n_item_queries)
    return fail(c, where, "item %d's queries [%d, +%d) lie outside the plan's %d", i,
                it->q_begin, it->n_q, p->n_item_queries);
  for (int32_t k = 0; k < it->n_q; k++) {
    int32_t r = p->item_queries[it->q_begin + k];
    if (r < 0 || r >= p->n_requests)
      return fail(c, where, "item %d, query %d: request %d is out of range [0, %d)", i, k, r,
                  p->n_requests);
    if (c->stamp[r] == i) return fail(c, where, "item %d lists request %d twice", i, r);
    c->stamp[r] = i;
    c->items_of[r]++;
  }
  const av_launch_t *L = &p->launches[it->launch];
  int64_t rows = (int64_t)it->n_q * av_heads_group(&p->heads);
  if (rows > L->tile.m_rows)
    return fail(c, where,
                "item %d has %d queries x GQA group %d = %" PRId64
                " rows, more than its tile's m_rows %d",
                i, it->n_q, av_heads_group(&p->heads), rows, L->tile.m_rows);
  return AV_OK;
}

static int check_item_segments(checker_t *c, int32_t i) {
  const av_plan_t *p = c->p;
  const av_item_t *it = &p->items[i];
  char where[80];
  snprintf(where, sizeof where, "items[%d].segments", i);
  if (it->n_seg < 1) return fail(c, where, "item %d has no segments", i);
  if (it->seg_begin < 0 || (int64_t)it->seg_begin + it->n_seg > p->n_segments)
    return fail(c, where, "item %d's segments [%d, +%d) lie outside the plan's %d", i,
                it->seg_begin, it->n_seg, p->n_segments);
  for (int32_t s = 0; s < it->n_seg; s++) {
    const av_segment_t *sg = &p->segments[it->seg_begin + s];
    snprintf(where, sizeof where, "items[%d].segments[%d]", i, s);
    if (sg->node < 0 || sg->node >= p->n_nodes)
      return fail(c, where, "item %d, segment %d: node %d is out of range [0, %d)", i, s,
                  sg->node, p->n_nodes);
    int64_t len = c->w->nodes[sg->node].kv_len_tokens;
    if (sg->begin < 0 || sg->end > len || sg->begin >= sg->end)
      return fail(c, where,
                  "item %d, segment %d: tokens [%" PRId64 ", %" PRId64
                  ") are not a non-empty range inside node %d's %" PRId64 " tokens",
                  i, s, sg->begin, sg->end, sg->node, len);
    for (int32_t k = 0; k < it->n_q; k++) {
      int32_t r = p->item_queries[it->q_begin + k];
      if (!on_path(c, sg->node, c->w->request_node[r]))
        return fail(c, where, "item %d, segment %d: node %d is not on the KV path of request %d",
                    i, s, sg->node, r);
    }
  }
  return AV_OK;
}

/* Output, slots and persistent-queue position of item i. */
static int check_item_output(checker_t *c, int32_t i) {
  const av_plan_t *p = c->p;
  const av_item_t *it = &p->items[i];
  const av_launch_t *L = &p->launches[it->launch];
  char where[64];
  snprintf(where, sizeof where, "items[%d]", i);
  if (it->output == AV_OUT_FINAL) {
    if (it->slot_begin != -1)
      return fail(c, where, "item %d is FINAL but has slot_begin %d (expected -1)", i,
                  it->slot_begin);
    for (int32_t k = 0; k < it->n_q; k++) c->final_item[p->item_queries[it->q_begin + k]] = i;
  } else if (it->output == AV_OUT_PARTIAL) {
    if (it->slot_begin < 0 || (int64_t)it->slot_begin + it->n_q > p->n_slots)
      return fail(c, where, "item %d's slots [%d, +%d) lie outside the plan's %d slots", i,
                  it->slot_begin, it->n_q, p->n_slots);
  } else {
    return fail(c, where, "item %d has unknown output kind %d", i, (int)it->output);
  }
  if (L->persistent_ctas > 0) {
    if (it->cta < 0 || it->cta >= L->persistent_ctas)
      return fail(c, where, "item %d: cta %d is outside launch %d's persistent grid [0, %d)", i,
                  it->cta, it->launch, L->persistent_ctas);
    if (it->order < 0)
      return fail(c, where, "item %d: queue position (order) %d is negative", i, it->order);
  } else if (it->cta != -1 || it->order != -1) {
    return fail(c, where,
                "item %d: cta %d / order %d given, but launch %d is not persistent "
                "(expected -1 / -1)",
                i, it->cta, it->order, it->launch);
  }
  return AV_OK;
}

static int check_items(checker_t *c) {
  const av_plan_t *p = c->p;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    if (it->launch < 0 || it->launch >= p->n_launches) {
      char where[64];
      snprintf(where, sizeof where, "items[%d].launch", i);
      return fail(c, where, "item %d: launch %d is out of range [0, %d)", i, it->launch,
                  p->n_launches);
    }
    int rc = check_item_queries(c, i);
    if (!rc) rc = check_item_segments(c, i);
    if (!rc) rc = check_item_output(c, i);
    if (rc) return rc;
  }
  return AV_OK;
}

typedef struct qpos {
  int32_t launch, cta, order, item;
} qpos_t;

static int cmp_qpos(const void *x, const void *y) {
  const qpos_t *a = x, *b = y;
  if (a->launch != b->launch) return a->launch < b->launch ? -1 : 1;
  if (a->cta != b->cta) return a->cta < b->cta ? -1 : 1;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  return (a->item > b->item) - (a->item < b->item);
}

/* A persistent CTA walks its queue by `order`; two items at one position would be ambiguous. */
static int check_queues(checker_t *c) {
  const av_plan_t *p = c->p;
  qpos_t *q = malloc(((size_t)p->n_items + 1) * sizeof *q);
  if (!q) return nomem(c);
  int32_t n = 0;
  for (int32_t i = 0; i < p->n_items; i++)
    if (p->launches[p->items[i].launch].persistent_ctas > 0)
      q[n++] = (qpos_t){p->items[i].launch, p->items[i].cta, p->items[i].order, i};
  qsort(q, (size_t)n, sizeof *q, cmp_qpos);
  int rc = AV_OK;
  for (int32_t k = 1; k < n && !rc; k++)
    if (q[k].launch == q[k - 1].launch && q[k].cta == q[k - 1].cta &&
        q[k].order == q[k - 1].order) {
      char where[64];
      snprintf(where, sizeof where, "items[%d]", q[k].item);
      rc = fail(c, where, "items %d and %d both sit at cta %d, order %d of launch %d",
                q[k - 1].item, q[k].item, q[k].cta, q[k].order, q[k].launch);
    }
  free(q);
  return rc;
}

/* A FINAL item writes the output itself, so it must see the request's whole KV path and no
 * other item may touch that request. Tiling (checked next) then makes it exact. */
static int check_finals(checker_t *c) {
  const av_plan_t *p = c->p;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    if (it->output != AV_OUT_FINAL) continue;
    int64_t tokens = 0;
    for (int32_t s = 0; s < it->n_seg; s++)
      tokens += p->segments[it->seg_begin + s].end - p->segments[it->seg_begin + s].begin;
    char where[64];
    snprintf(where, sizeof where, "items[%d]", i);
    for (int32_t k = 0; k < it->n_q; k++) {
      int32_t r = p->item_queries[it->q_begin + k];
      if (c->items_of[r] > 1)
        return fail(c, where,
                    "item %d is FINAL for request %d, but %d other item(s) also cover request %d",
                    i, r, c->items_of[r] - 1, r);
      if (tokens != c->w->request_kv_tokens[r])
        return fail(c, where,
                    "item %d is FINAL but covers %" PRId64 " of request %d's %" PRId64
                    " KV tokens",
                    i, tokens, r, c->w->request_kv_tokens[r]);
    }
  }
  return AV_OK;
}

static int cmp_piece(const void *x, const void *y) {
  const piece_t *a = x, *b = y;
  if (a->request != b->request) return a->request < b->request ? -1 : 1;
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  if (a->begin != b->begin) return a->begin < b->begin ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  return (a->item > b->item) - (a->item < b->item);
}

/* Pieces of request r on node u, sorted, must tile [0, len(u)). */
static int tile_node(checker_t *c, const piece_t *pc, size_t n, size_t *k, int32_t r,
                     int32_t u) {
  int64_t len = c->w->nodes[u].kv_len_tokens, pos = 0;
  int32_t last_item = -1;
  for (; *k < n && pc[*k].request == r && pc[*k].node == u; (*k)++) {
    const piece_t *x = &pc[*k];
    if (x->begin > pos)
      return fail(c, NULL,
                  "request %d, node %d, tokens [%" PRId64 ", %" PRId64 ") are covered by no item",
                  r, u, pos, x->begin);
    if (x->begin < pos)
      return fail(c, NULL,
                  "request %d, node %d, tokens [%" PRId64 ", %" PRId64
                  ") are covered by both item %d and item %d",
                  r, u, x->begin, x->end < pos ? x->end : pos, last_item, x->item);
    pos = x->end;
    last_item = x->item;
  }
  if (pos < len)
    return fail(c, NULL,
                "request %d, node %d, tokens [%" PRId64 ", %" PRId64 ") are covered by no item", r,
                u, pos, len);
  return AV_OK;
}

static int check_coverage(checker_t *c) {
  const av_plan_t *p = c->p;
  const av_workload_t *w = c->w;
  size_t n = 0;
  for (int32_t i = 0; i < p->n_items; i++) n += (size_t)p->items[i].n_q * p->items[i].n_seg;
  piece_t *pc = malloc((n + 1) * sizeof *pc);
  int32_t *path = malloc(((size_t)w->n_nodes + 1) * sizeof *path);
  if (!pc || !path) {
    free(pc);
    free(path);
    return nomem(c);
  }
  size_t m = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    for (int32_t k = 0; k < it->n_q; k++)
      for (int32_t s = 0; s < it->n_seg; s++) {
        const av_segment_t *sg = &p->segments[it->seg_begin + s];
        pc[m++] = (piece_t){p->item_queries[it->q_begin + k], sg->node, i, sg->begin, sg->end};
      }
  }
  qsort(pc, n, sizeof *pc, cmp_piece);
  int rc = AV_OK;
  size_t k = 0;
  for (int32_t r = 0; r < w->n_requests && !rc; r++) {
    /* Path nodes root first; parents precede children, so that is ascending node order,
     * the order the pieces are sorted in. */
    int32_t depth = 0;
    for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) path[depth++] = u;
    for (int32_t d = depth - 1; d >= 0 && !rc; d--) rc = tile_node(c, pc, n, &k, r, path[d]);
    if (!rc && k < n && pc[k].request == r)  /* unreachable after the on-path check */
      rc = fail(c, NULL, "request %d, node %d: item %d covers a node off the request's path", r,
                pc[k].node, pc[k].item);
  }
  free(pc);
  free(path);
  return rc;
}

/* Every slot reaches exactly one merge list, its own request's; every request gets output. */
static int check_merge(checker_t *c) {
  const av_plan_t *p = c->p;
  int32_t nr = p->n_requests, ns = p->n_slots;
  const int32_t *off = p->merge_offsets;
  if (off[0] != 0) return fail(c, "merge", "merge offsets start at %d, not 0", off[0]);
  for (int32_t r = 0; r < nr; r++)
    if (off[r + 1] < off[r])
      return fail(c, "merge", "merge offsets decrease at request %d", r);
  int32_t *slot_item = malloc(((size_t)ns + 1) * sizeof *slot_item);
  int32_t *merged_by = malloc(((size_t)ns + 1) * sizeof *merged_by);
  if (!slot_item || !merged_by) {
    free(slot_item);
    free(merged_by);
    return nomem(c);
  }
  int rc = AV_OK;
  for (int32_t s = 0; s < ns; s++) slot_item[s] = merged_by[s] = -1;
  for (int32_t i = 0; i < p->n_items && !rc; i++) {
    const av_item_t *it = &p->items[i];
    if (it->output != AV_OUT_PARTIAL) continue;
    for (int32_t k = 0; k < it->n_q && !rc; k++) {
      int32_t s = it->slot_begin + k, r = p->item_queries[it->q_begin + k];
      if (slot_item[s] >= 0)
        rc = fail(c, NULL, "slot %d is written by both item %d and item %d", s, slot_item[s], i);
      else if (p->slot_request[s] != r)
        rc = fail(c, NULL, "slot %d of item %d is recorded for request %d, not %d "
                  "(plan not re-finalized after editing?)", s, i, p->slot_request[s], r);
      slot_item[s] = i;
    }
  }
  for (int32_t s = 0; s < ns && !rc; s++)
    if (slot_item[s] < 0) rc = fail(c, NULL, "slot %d is written by no item", s);
  for (int32_t r = 0; r < nr && !rc; r++) {
    char where[64];
    snprintf(where, sizeof where, "merge[%d]", r);
    for (int32_t k = off[r]; k < off[r + 1] && !rc; k++) {
      int32_t s = p->merge_slots[k];
      if (s < 0 || s >= ns)
        rc = fail(c, where, "request %d's merge list has slot %d, out of range [0, %d)", r, s, ns);
      else if (merged_by[s] >= 0)
        rc = fail(c, where, "slot %d is merged twice (into request %d and request %d)", s,
                  merged_by[s], r);
      else if (p->slot_request[s] != r)
        rc = fail(c, where, "request %d's merge list has slot %d, which belongs to request %d",
                  r, s, p->slot_request[s]);
      else
        merged_by[s] = r;
    }
  }
  for (int32_t r = 0; r < nr && !rc; r++)
    if (c->final_item[r] < 0 && off[r + 1] == off[r])
      rc = fail(c, NULL, "request %d gets no output: no FINAL item and an empty merge list", r);
  for (int32_t s = 0; s < ns && !rc; s++)
    if (merged_by[s] < 0)
      rc = fail(c, NULL, "slot %d (item %d, request %d) is never merged", s, slot_item[s],
                p->slot_request[s]);
  free(slot_item);
  free(merged_by);
  return rc;
}

int av_plan_check(const av_plan_t *p, const av_workload_t *w, av_error_t *err) {
  checker_t c = {.p = p, .w = w, .err = err};
  int rc = check_header(&c);
  if (rc) return rc;
  size_t nn = (size_t)w->n_nodes + 1, nr = (size_t)w->n_requests + 1;
  c.tin = malloc(nn * sizeof *c.tin);
  c.size = malloc(nn * sizeof *c.size);
  c.items_of = calloc(nr, sizeof *c.items_of);
  c.final_item = malloc(nr * sizeof *c.final_item);
  c.stamp = malloc(nr * sizeof *c.stamp);
  if (!c.tin || !c.size || !c.items_of || !c.final_item || !c.stamp) {
    rc = nomem(&c);
  } else {
    for (int32_t r = 0; r < w->n_requests; r++) c.stamp[r] = c.final_item[r] = -1;
    rc = number_nodes(&c);
  }
  if (!rc) rc = check_items(&c);
  if (!rc) rc = check_queues(&c);
  if (!rc) rc = check_finals(&c);
  if (!rc) rc = check_coverage(&c);
  if (!rc) rc = check_merge(&c);
  free(c.tin);
  free(c.size);
  free(c.items_of);
  free(c.final_item);
  free(c.stamp);
  return rc;
}

int av_plan_check_tiles(const av_plan_t *p, const av_variants_t *vs, av_error_t *err) {
  for (int32_t l = 0; l < p->n_launches; l++) {
    char where[64];
    snprintf(where, sizeof where, "launches[%d]", (int)l);
    int rc = av_variants_require(vs, &p->launches[l].tile, &p->heads, NULL, where, err);
    if (rc) return rc;
  }
  return AV_OK;
}
