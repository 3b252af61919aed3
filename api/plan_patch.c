/* A plan patched into the next decode step's (plan_patch.h): one pass over the items writes
 * the second set of arrays, which then trade places with the plan's. A finished request's
 * queries and slots go (and its items with them); an arrival joins the items that read its
 * parent's path where the tile has a free row, or gets a copy of them, and its leaf is read
 * by a copy of its sibling's first item over the sibling's leaf; grown leaves extend the
 * segments that ended at their old ends. Also the drift rule's cheap estimate. */
#include <stdlib.h>
#include <string.h>

#include "api/plan_patch.h"

void av__plan_buf_free(av__plan_buf_t *b) {
  free(b->items);
  free(b->iq);
  free(b->slot_req);
  free(b->moff);
  free(b->mslots);
  free(b->segs);
  free(b->maxo);
  free(b->list);
  free(b->qpos);
  free(b->smap);
  free(b->items2);
  free(b->iq2);
  free(b->slot_req2);
  free(b->moff2);
  free(b->mslots2);
  free(b->segs2);
}

void av__plan_grow(av_plan_t *p, const int64_t *old_len, const int64_t *new_len) {
  for (int32_t i = 0; i < p->n_segments; i++) {
    av_segment_t *s = &p->segments[i];
    if (s->end == old_len[s->node]) s->end = new_len[s->node];
  }
}

typedef struct pass {
  av_plan_t *p;
  const av_workload_t *w0;
  const av__changes_t *ch;
  av__plan_buf_t *b;
  int32_t *head, *next, *done; /* arrivals by sibling; whether its leaf is placed */
  int32_t *clone_a, *clone_leafy, n_clone;
  int32_t n_items, n_iq, n_segs, n_slots;
  int g;
} pass_t;

static int reserve_pass(pass_t *x) {
  const av_plan_t *p = x->p;
  av__plan_buf_t *b = x->b;
  size_t na = (size_t)x->ch->n_arr, ni = (size_t)p->n_items;
  size_t items = ni + na * ni, slots = (size_t)p->n_slots + na * ni;
  if (av__reserve(&b->items, &b->cap_items, items, sizeof *b->items) ||
      av__reserve(&b->iq, &b->cap_iq, (size_t)p->n_item_queries + na * ni, sizeof *b->iq) ||
      av__reserve(&b->segs, &b->cap_segs, (size_t)p->n_segments * (1 + na) + na,
                  sizeof *b->segs) ||
      av__reserve(&b->slot_req, &b->cap_slots, slots, sizeof *b->slot_req) ||
      av__reserve(&b->moff, &b->cap_moff, (size_t)x->ch->n_new + 1, sizeof *b->moff) ||
      av__reserve(&b->mslots, &b->cap_mslots, slots, sizeof *b->mslots) ||
      av__reserve(&b->maxo, &b->cap_maxo, (size_t)p->n_launches, sizeof *b->maxo) ||
      av__reserve(&b->list, &b->cap_list, (size_t)x->ch->n_old + 5 * na, sizeof *b->list) ||
      av__reserve(&b->smap, &b->cap_smap, (size_t)p->n_slots + 1, sizeof *b->smap))
    return -1;
  int32_t qmax = 0;
  for (int32_t i = 0; i < p->n_items; i++) qmax = p->items[i].n_q > qmax ? p->items[i].n_q : qmax;
  if (av__reserve(&b->qpos, &b->cap_qpos, 2 * ((size_t)qmax + na), sizeof *b->qpos)) return -1;
  x->head = b->list;
  x->next = x->head + x->ch->n_old;
  x->done = x->next + na;
  x->clone_a = x->done + na;
  x->clone_leafy = x->clone_a + na;
  return 0;
}

/* Segments of old item `it` (its sibling's leaf `skip` left out, unless -1) renumbered into
 * the new arrays, grown leaves grown; the count, or -1 for a removed node. */
static int32_t copy_segments(pass_t *x, const av_item_t *it, int32_t skip) {
  const av__changes_t *ch = x->ch;
  int32_t n = 0;
  for (int32_t k = 0; k < it->n_seg; k++) {
    av_segment_t s = x->p->segments[it->seg_begin + k];
    if (s.node == skip) continue;
    int32_t v = ch->nmap[s.node];
    if (v < 0) return -1;
    if (s.end == ch->old_len[s.node]) s.end = ch->new_len[v];
    s.node = v;
    x->b->segs[x->n_segs + n++] = s;
  }
  return n;
}

static void emit(pass_t *x, const av_item_t *it, const int32_t *qs, int32_t nq, int32_t n_seg,
                 int32_t order) {
  av_item_t o = *it;
  o.q_begin = x->n_iq;
  o.n_q = nq;
  o.seg_begin = x->n_segs;
  o.n_seg = n_seg;
  o.slot_begin = it->output == AV_OUT_PARTIAL ? x->n_slots : -1;
  if (order >= 0) o.order = order;
  x->b->items[x->n_items++] = o;
  x->n_segs += n_seg;
  for (int32_t k = 0; k < nq; k++) {
    x->b->iq[x->n_iq++] = qs[2 * k];
    if (it->output != AV_OUT_PARTIAL) continue;
    if (qs[2 * k + 1] >= 0) x->b->smap[qs[2 * k + 1]] = x->n_slots;
    x->b->slot_req[x->n_slots++] = qs[2 * k];
  }
}

/* Item i's surviving queries (new index, old slot) with the arrivals that join it, sorted;
 * the arrivals that need a copy of it go to x->clone_*. Returns the count, or -1. */
static int32_t gather(pass_t *x, const av_item_t *it) {
  const av__changes_t *ch = x->ch;
  int32_t *qs = x->b->qpos, nq = 0, rows = x->p->launches[it->launch].tile.m_rows;
  x->n_clone = 0;
  for (int32_t k = 0; k < it->n_q; k++) {
    int32_t q = x->p->item_queries[it->q_begin + k];
    if (ch->new_of[q] < 0) continue;
    qs[2 * nq] = ch->new_of[q];
    qs[2 * nq++ + 1] = it->output == AV_OUT_PARTIAL ? it->slot_begin + k : -1;
  }
  for (int32_t k = 0; k < it->n_q; k++) {
    int32_t q = x->p->item_queries[it->q_begin + k], leafy = 0, leaf = x->w0->request_node[q];
    if (x->head[q] < 0) continue;
    for (int32_t s = 0; s < it->n_seg; s++) leafy |= x->p->segments[it->seg_begin + s].node == leaf;
    if (!leafy && it->output != AV_OUT_PARTIAL) return -1;
    for (int32_t a = x->head[q]; a >= 0; a = x->next[a]) {
      if (!leafy && (nq + 1) * x->g <= rows) {
        qs[2 * nq] = ch->arr_row[a];
        qs[2 * nq++ + 1] = -1;
        continue;
      }
      x->clone_a[x->n_clone] = a;
      x->clone_leafy[x->n_clone++] = leafy;
    }
  }
  for (int32_t k = 1; k < nq; k++) /* insertion sort by new request */
    for (int32_t m = k; m > 0 && qs[2 * m - 2] > qs[2 * m]; m--) {
      int32_t t0 = qs[2 * m - 2], t1 = qs[2 * m - 1];
      qs[2 * m - 2] = qs[2 * m];
      qs[2 * m - 1] = qs[2 * m + 1];
      qs[2 * m] = t0;
      qs[2 * m + 1] = t1;
    }
  return nq;
}

static int clones(pass_t *x, const av_item_t *it, int32_t sib_leaf) {
  const av__changes_t *ch = x->ch;
  for (int32_t c = 0; c < x->n_clone; c++) {
    int32_t a = x->clone_a[c], pair[2] = {ch->arr_row[a], -1};
    int32_t n = copy_segments(x, it, sib_leaf);
    if (n < 0) return -1;
    if (x->clone_leafy[c] && !x->done[a]) {
      int32_t v = ch->arr_leaf[a];
      x->b->segs[x->n_segs + n++] = (av_segment_t){.node = v, .begin = 0, .end = ch->new_len[v]};
      x->done[a] = 1;
    }
    if (n == 0) continue;
    int32_t order = x->p->launches[it->launch].persistent_ctas > 0 ? ++x->b->maxo[it->launch] : -1;
    emit(x, it, pair, 1, n, order);
  }
  return 0;
}

static int items_pass(pass_t *x) {
  const av_plan_t *p = x->p;
  for (int32_t l = 0; l < p->n_launches; l++) x->b->maxo[l] = -1;
  for (int32_t i = 0; i < p->n_items; i++)
    if (p->items[i].order > x->b->maxo[p->items[i].launch])
      x->b->maxo[p->items[i].launch] = p->items[i].order;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    int32_t nq = gather(x, it);
    if (nq < 0) return -1;
    if (nq > 0) {
      int32_t n = copy_segments(x, it, -1);
      if (n < 0) return -1;
      emit(x, it, x->b->qpos, nq, n, -1);
    }
    /* Copies: of an item of one query, that query is their sibling. */
    int32_t sib_leaf = it->n_q == 1 ? x->w0->request_node[p->item_queries[it->q_begin]] : -1;
    if (x->n_clone && clones(x, it, sib_leaf)) return -1;
  }
  return 0;
}

/* Merge lists: the default (slot order) when the plan had it, else the kept requests' old
 * order renumbered and the arrivals' slots in order. */
static void merges(pass_t *x) {
  const av_plan_t *p = x->p;
  const av__changes_t *ch = x->ch;
  int32_t n = ch->n_new, *off = x->b->moff, *sl = x->b->mslots;
  for (int32_t j = 0; j <= n; j++) off[j] = 0;
  for (int32_t s = 0; s < x->n_slots; s++) off[x->b->slot_req[s] + 1]++;
  for (int32_t j = 0; j < n; j++) off[j + 1] += off[j];
  for (int32_t j = 0; j < n; j++) {
    int32_t i = ch->old_of[j], at = off[j];
    if (p->merge_explicit && i >= 0) {
      for (int32_t k = p->merge_offsets[i]; k < p->merge_offsets[i + 1]; k++)
        sl[at++] = x->b->smap[p->merge_slots[k]];
      continue;
    }
    if (off[j + 1] == at) continue;
    for (int32_t s = 0; s < x->n_slots; s++)
      if (x->b->slot_req[s] == j) sl[at++] = s;
  }
}

static void swap_ptr(void *a, void *b) {
  void *t;
  memcpy(&t, a, sizeof t);
  memcpy(a, b, sizeof t);
  memcpy(b, &t, sizeof t);
}

static void swap_cap(size_t *a, size_t *b) {
  size_t t = *a;
  *a = *b;
  *b = t;
}

static void install(pass_t *x) {
  av_plan_t *p = x->p;
  av__plan_buf_t *b = x->b;
  size_t ci = (size_t)p->cap_items, cq = (size_t)p->cap_item_queries, cs = (size_t)p->cap_segments;
  swap_ptr(&p->items, &b->items);
  swap_ptr(&p->item_queries, &b->iq);
  swap_ptr(&p->segments, &b->segs);
  p->cap_items = (int32_t)b->cap_items;
  p->cap_item_queries = (int32_t)b->cap_iq;
  p->cap_segments = (int32_t)b->cap_segs;
  b->cap_items = ci;
  b->cap_iq = cq;
  b->cap_segs = cs;
  swap_ptr(&p->slot_request, &b->slot_req);
  swap_cap(&b->cap_slots, &b->cap_slots_p);
  swap_ptr(&p->merge_offsets, &b->moff);
  swap_cap(&b->cap_moff, &b->cap_moff_p);
  swap_ptr(&p->merge_slots, &b->mslots);
  swap_cap(&b->cap_mslots, &b->cap_mslots_p);
  p->n_items = x->n_items;
  p->n_item_queries = x->n_iq;
  p->n_segments = x->n_segs;
  p->n_slots = x->n_slots;
  p->n_requests = x->ch->n_new;
  p->n_nodes = x->ch->n_new_nodes;
  for (int32_t l = 0; l < p->n_launches; l++) p->launches[l].n_items = 0;
  for (int32_t i = 0; i < p->n_items; i++) p->launches[p->items[i].launch].n_items++;
}

void av__plan_buf_reclaim(av__plan_buf_t *b, av_plan_t *p) {
  if (!b->held || !p) return;
  b->items2 = p->items;
  b->iq2 = p->item_queries;
  b->segs2 = p->segments;
  b->slot_req2 = p->slot_request;
  b->moff2 = p->merge_offsets;
  b->mslots2 = p->merge_slots;
  b->cap_items2 = (size_t)p->cap_items;
  b->cap_iq2 = (size_t)p->cap_item_queries;
  b->cap_segs2 = (size_t)p->cap_segments;
  p->items = NULL;
  p->item_queries = NULL;
  p->segments = NULL;
  p->slot_request = p->merge_offsets = p->merge_slots = NULL;
  b->held = 0;
}

/* Copies n elements of `elem` bytes from *from into *to (grown to hold them), frees *from
 * and leaves *from pointing at the copy. */
static int move_into(void *from, void *to, size_t *cap, size_t n, size_t elem) {
  if (av__reserve(to, cap, n, elem)) return -1;
  void *src, *dst;
  memcpy(&src, from, sizeof src);
  memcpy(&dst, to, sizeof dst);
  if (n) memcpy(dst, src, n * elem);
  free(src);
  memcpy(from, &dst, sizeof dst);
  dst = NULL;
  memcpy(to, &dst, sizeof dst);
  return 0;
}

int av__plan_buf_adopt(av__plan_buf_t *b, av_plan_t *p) {
  size_t nr = (size_t)p->n_requests, nm = p->merge_offsets ? (size_t)p->merge_offsets[nr] : 0;
  size_t ci = b->cap_items2, cq = b->cap_iq2, cs = b->cap_segs2;
  if (!p->merge_offsets || !p->slot_request ||
      move_into(&p->items, &b->items2, &ci, (size_t)p->n_items, sizeof *p->items) ||
      move_into(&p->item_queries, &b->iq2, &cq, (size_t)p->n_item_queries, sizeof(int32_t)) ||
      move_into(&p->segments, &b->segs2, &cs, (size_t)p->n_segments, sizeof *p->segments) ||
      move_into(&p->slot_request, &b->slot_req2, &b->cap_slots_p, (size_t)p->n_slots,
                sizeof(int32_t)) ||
      move_into(&p->merge_offsets, &b->moff2, &b->cap_moff_p, nr + 1, sizeof(int32_t)) ||
      move_into(&p->merge_slots, &b->mslots2, &b->cap_mslots_p, nm, sizeof(int32_t)))
    return -1;
  p->cap_items = (int32_t)ci;
  p->cap_item_queries = (int32_t)cq;
  p->cap_segments = (int32_t)cs;
  b->cap_items2 = b->cap_iq2 = b->cap_segs2 = 0;
  b->held = 1;
  return 0;
}

int av__plan_patch(av_plan_t *p, const av_workload_t *w0, const av__changes_t *ch,
                   av__plan_buf_t *b) {
  pass_t x = {.p = p, .w0 = w0, .ch = ch, .b = b, .g = av_heads_group(&p->heads)};
  if (!p->merge_offsets || reserve_pass(&x)) return -1;
  for (int32_t q = 0; q < ch->n_old; q++) x.head[q] = -1;
  for (int32_t a = ch->n_arr - 1; a >= 0; a--) {
    x.next[a] = x.head[ch->arr_sib[a]];
    x.head[ch->arr_sib[a]] = a;
    x.done[a] = 0;
  }
  if (items_pass(&x)) return -1;
  for (int32_t a = 0; a < ch->n_arr; a++)
    if (!x.done[a]) return -1;
  merges(&x);
  install(&x);
  return 0;
}

/* --- the drift rule's estimate --------------------------------------------------------- */
void av__est_free(av__est_t *e) {
  free(e->a);
  free(e->b);
  free(e->unit);
}

static int64_t item_tokens(const av_plan_t *p, const av_item_t *it) {
  int64_t t = 0;
  for (int32_t k = 0; k < it->n_seg; k++)
    t += p->segments[it->seg_begin + k].end - p->segments[it->seg_begin + k].begin;
  return t;
}

int av__est_fit(av__est_t *e, const av_plan_t *p, const av_costmodel_t *cost) {
  size_t cap = e->cap_items;
  if (av__reserve(&e->a, &cap, (size_t)p->n_items, sizeof *e->a)) return -1;
  cap = e->cap_items;
  if (av__reserve(&e->b, &cap, (size_t)p->n_items, sizeof *e->b)) return -1;
  e->cap_items = cap;
  int g = av_heads_group(&p->heads);
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    av_cost_query_t q = {.n_q = it->n_q, .rows = it->n_q * g, .kv_tokens = item_tokens(p, it),
                         .tile = p->launches[it->launch].tile, .output = it->output};
    av_item_cost_t c0, c1;
    av_costmodel_estimate(cost, &q, &c0);
    q.kv_tokens += 1024;
    av_costmodel_estimate(cost, &q, &c1);
    e->b[i] = (c1.time_us - c0.time_us) / 1024.0;
    e->a[i] = c0.time_us - e->b[i] * (double)(q.kv_tokens - 1024);
  }
  return 0;
}

int av__est_time(av__est_t *e, const av_plan_t *p, int sm_count, double *time_us,
                 double *tokens_read) {
  size_t n_units = 0;
  for (int32_t l = 0; l < p->n_launches; l++) n_units += (size_t)p->launches[l].persistent_ctas;
  if (av__reserve(&e->unit, &e->cap_unit, n_units + (size_t)p->n_launches, sizeof *e->unit))
    return -1;
  double *base = e->unit + n_units, sum = 0, top = 0, read = 0;
  size_t at = 0;
  for (int32_t l = 0; l < p->n_launches; l++) {
    base[l] = (double)at;
    at += (size_t)p->launches[l].persistent_ctas;
  }
  for (size_t k = 0; k < n_units; k++) e->unit[k] = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    double kv = (double)item_tokens(p, it), t = e->a[i] + e->b[i] * kv;
    read += kv;
    sum += t;
    if (p->launches[it->launch].persistent_ctas > 0) {
      double *u = &e->unit[(size_t)base[it->launch] + (size_t)it->cta];
      *u += t;
      t = *u;
    }
    top = t > top ? t : top;
  }
  double spread = sum / (sm_count > 0 ? sm_count : 1);
  *time_us = top > spread ? top : spread;
  if (tokens_read) *tokens_read = read;
  return 0;
}
