/* A plan patched into the next decode step's (plan_patch.h): one pass over the items writes
 * the second set of arrays, which then trade places with the plan's. A finished request's
 * queries and slots go (and its items with them); an arrival joins the items that read its
 * parent's path where the tile has a free row, or gets a copy of them, and its leaf is read
 * by a copy of its sibling's first item over the sibling's leaf; grown leaves extend the
 * segments that ended at their old ends. An arrival's copy in a persistent launch joins the
 * queue of least estimated time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/plan_patch.h"

/* Most pieces an arrival's leaf is cut into. */
#define AV__MAX_LEAF_PIECES 16

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
  free(b->cur);
  free(b->src);
  free(b->load);
  free(b->route);
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
  const av__est_t *est;        /* NULL: copies stay on their source's queue */
  int32_t *lbase;              /* per launch: its first CTA's place in b->load */
  int32_t *head, *next, *done; /* arrivals by sibling; whether its leaf is placed */
  int32_t *clone_a, *clone_leafy, n_clone;
  /* Per old item: queries it keeps plus arrivals that join it, and its lists of joining and
   * copying arrivals (entries: arrival, leafy, next). */
  int32_t *fill, *jhead, *chead, *pool, n_pool;
  int32_t n_items, n_iq, n_segs, n_slots;
  int g;
} pass_t;

static int reserve_pass(pass_t *x) {
  const av_plan_t *p = x->p;
  av__plan_buf_t *b = x->b;
  size_t na = (size_t)x->ch->n_arr;
  /* The new items, segments and queries are reserved as they are written (room()). */
  if (av__reserve(&b->moff, &b->cap_moff, (size_t)x->ch->n_new + 1, sizeof *b->moff) ||
      av__reserve(&b->maxo, &b->cap_maxo, 2 * (size_t)p->n_launches + 1, sizeof *b->maxo) ||
      av__reserve(&b->cur, &b->cap_cur, (size_t)x->ch->n_new + 1, sizeof *b->cur) ||
      av__reserve(&b->list, &b->cap_list, (size_t)x->ch->n_old + 5 * na, sizeof *b->list) ||
      av__reserve(&b->smap, &b->cap_smap, (size_t)p->n_slots + 1, sizeof *b->smap))
    return -1;
  int32_t qmax = 0;
  for (int32_t i = 0; i < p->n_items; i++) qmax = p->items[i].n_q > qmax ? p->items[i].n_q : qmax;
  if (av__reserve(&b->qpos, &b->cap_qpos, 2 * ((size_t)qmax + na), sizeof *b->qpos)) return -1;
  x->lbase = b->maxo + p->n_launches;
  int32_t units = 0;
  for (int32_t l = 0; l < p->n_launches; l++) {
    x->lbase[l] = units;
    units += p->launches[l].persistent_ctas;
  }
  if (av__reserve(&b->load, &b->cap_load, (size_t)units + 1, sizeof *b->load)) return -1;
  x->head = b->list;
  x->next = x->head + x->ch->n_old;
  x->done = x->next + na;
  x->clone_a = x->done + na;
  x->clone_leafy = x->clone_a + na;
  return 0;
}

/* Room for one more item of nq queries and n_seg more segments: the pass grows the new
 * arrays as it writes them, so they reach the size the batch needs and stay there. */
static int room(pass_t *x, int32_t n_seg, int32_t nq) {
  av__plan_buf_t *b = x->b;
  size_t ni = (size_t)x->n_items + 1;
  return av__reserve(&b->items, &b->cap_items, ni, sizeof *b->items) ||
         av__reserve(&b->src, &b->cap_src, ni, sizeof *b->src) ||
         av__reserve(&b->segs, &b->cap_segs, (size_t)(x->n_segs + n_seg), sizeof *b->segs) ||
         av__reserve(&b->iq, &b->cap_iq, (size_t)(x->n_iq + nq), sizeof *b->iq) ||
         av__reserve(&b->slot_req, &b->cap_slots, (size_t)(x->n_slots + nq), sizeof *b->slot_req);
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

/* Appends a copy of `it` over queries qs (pairs: new request, old slot or -1) and the n_seg
 * segments just written; order >= 0 replaces its queue position. */
static void emit(pass_t *x, const av_item_t *it, const int32_t *qs, int32_t nq, int32_t n_seg,
                 int32_t order) {
  av_item_t o = *it;
  o.q_begin = x->n_iq;
  o.n_q = nq;
  o.seg_begin = x->n_segs;
  o.n_seg = n_seg;
  o.slot_begin = it->output == AV_OUT_PARTIAL ? x->n_slots : -1;
  if (order >= 0) o.order = order;
  x->b->src[x->n_items] = -1;
  x->b->items[x->n_items++] = o;
  x->n_segs += n_seg;
  for (int32_t k = 0; k < nq; k++) {
    x->b->iq[x->n_iq++] = qs[2 * k];
    if (it->output != AV_OUT_PARTIAL) continue;
    if (qs[2 * k + 1] >= 0) x->b->smap[qs[2 * k + 1]] = x->n_slots;
    x->b->slot_req[x->n_slots++] = qs[2 * k];
  }
}

/* Does item `it` read its query q's leaf? */
static int reads_leaf(const pass_t *x, const av_item_t *it, int32_t q) {
  int32_t leaf = x->w0->request_node[q];
  for (int32_t s = 0; s < it->n_seg; s++)
    if (x->p->segments[it->seg_begin + s].node == leaf) return 1;
  return 0;
}

static int has_room(const pass_t *x, int32_t i) {
  return (x->fill[i] + 1) * x->g <= x->p->launches[x->p->items[i].launch].tile.m_rows;
}

/* An item with a free row that reads exactly the segments of item i (a partial over the same
 * shared path), or -1. */
static int32_t same_reads(const pass_t *x, int32_t i) {
  const av_plan_t *p = x->p;
  const av_item_t *it = &p->items[i];
  const av_segment_t *si = &p->segments[it->seg_begin];
  for (int32_t j = 0; j < p->n_items; j++) {
    const av_item_t *jt = &p->items[j];
    if (j == i || jt->launch != it->launch || jt->n_seg != it->n_seg ||
        jt->output != AV_OUT_PARTIAL || !has_room(x, j))
      continue;
    const av_segment_t *sj = &p->segments[jt->seg_begin];
    int32_t k = 0;
    while (k < it->n_seg && sj[k].node == si[k].node && sj[k].begin == si[k].begin &&
           sj[k].end == si[k].end)
      k++;
    if (k == it->n_seg) return j;
  }
  return -1;
}

static void push(pass_t *x, int32_t *head, int32_t a, int32_t leafy) {
  int32_t *e = x->pool + 3 * x->n_pool;
  e[0] = a;
  e[1] = leafy;
  e[2] = *head;
  *head = x->n_pool++;
}

/* Each persistent queue's estimated time over the items that keep a query (x->fill). */
static void queue_loads(pass_t *x) {
  const av_plan_t *p = x->p;
  for (int32_t l = 0; l < p->n_launches; l++)
    for (int32_t c = 0; c < p->launches[l].persistent_ctas; c++) x->b->load[x->lbase[l] + c] = 0;
  if (!x->est) return;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    if (p->launches[it->launch].persistent_ctas > 0 && x->fill[i] > 0)
      x->b->load[x->lbase[it->launch] + it->cta] +=
          x->est->a[i] + x->est->b[i] * (double)av__item_tokens(p, it);
  }
}

/* Where each arrival's share of its sibling's items goes, decided before the pass so that an
 * arrival may join an item before or after its sibling's: an item over the parent's path
 * takes it where the tile has a free row, or else another item that reads the same segments
 * does (a request that finished left a free row there); otherwise, and for the sibling's
 * leaf, the arrival gets a copy. -1: a final item over a shared path (not patchable). */
static int route(pass_t *x) {
  const av_plan_t *p = x->p;
  const av__changes_t *ch = x->ch;
  int32_t ni = p->n_items, n_pool = 0;
  for (int32_t i = 0; i < ni; i++)
    for (int32_t k = 0; k < p->items[i].n_q; k++)
      for (int32_t a = x->head[p->item_queries[p->items[i].q_begin + k]]; a >= 0; a = x->next[a])
        n_pool++;
  if (av__reserve(&x->b->route, &x->b->cap_route, 3 * (size_t)ni + 3 * (size_t)n_pool + 1,
                  sizeof *x->b->route))
    return -1;
  x->fill = x->b->route;
  x->jhead = x->fill + ni;
  x->chead = x->jhead + ni;
  x->pool = x->chead + ni;
  x->n_pool = 0;
  for (int32_t i = 0; i < ni; i++) {
    const av_item_t *it = &p->items[i];
    x->jhead[i] = x->chead[i] = -1;
    x->fill[i] = 0;
    for (int32_t k = 0; k < it->n_q; k++) x->fill[i] += ch->new_of[p->item_queries[it->q_begin + k]] >= 0;
  }
  queue_loads(x);
  for (int32_t i = 0; i < ni; i++) {
    const av_item_t *it = &p->items[i];
    for (int32_t k = 0; k < it->n_q; k++) {
      int32_t q = p->item_queries[it->q_begin + k];
      if (x->head[q] < 0) continue;
      int32_t leafy = reads_leaf(x, it, q);
      if (!leafy && it->output != AV_OUT_PARTIAL) return -1;
      for (int32_t a = x->head[q]; a >= 0; a = x->next[a]) {
        int32_t j = leafy ? -1 : has_room(x, i) ? i : same_reads(x, i);
        if (j < 0) {
          push(x, &x->chead[i], a, leafy);
          continue;
        }
        push(x, &x->jhead[j], a, 0);
        x->fill[j]++;
      }
    }
  }
  return 0;
}

/* Item i's surviving queries (new index, old slot) with the arrivals that join it, sorted;
 * the arrivals that need a copy of it go to x->clone_*. Returns the count. */
static int32_t gather(pass_t *x, int32_t i) {
  const av__changes_t *ch = x->ch;
  const av_item_t *it = &x->p->items[i];
  int32_t *qs = x->b->qpos, nq = 0;
  x->n_clone = 0;
  for (int32_t k = 0; k < it->n_q; k++) {
    int32_t q = x->p->item_queries[it->q_begin + k];
    if (ch->new_of[q] < 0) continue;
    qs[2 * nq] = ch->new_of[q];
    qs[2 * nq++ + 1] = it->output == AV_OUT_PARTIAL ? it->slot_begin + k : -1;
  }
  for (int32_t e = x->jhead[i]; e >= 0; e = x->pool[3 * e + 2]) {
    qs[2 * nq] = ch->arr_row[x->pool[3 * e]];
    qs[2 * nq++ + 1] = -1;
  }
  for (int32_t e = x->chead[i]; e >= 0; e = x->pool[3 * e + 2]) {
    x->clone_a[x->n_clone] = x->pool[3 * e];
    x->clone_leafy[x->n_clone++] = x->pool[3 * e + 1];
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

/* The queue of least estimated time in `it`'s persistent launch, charged with a copy of `it`
 * over kv tokens (its own queue when there is no estimate or the launch is not persistent). */
static int32_t least_loaded(pass_t *x, const av_item_t *it, int32_t i, int64_t kv) {
  int32_t n = x->p->launches[it->launch].persistent_ctas, best = it->cta;
  if (n <= 0 || !x->est) return best;
  double *load = x->b->load + x->lbase[it->launch];
  for (int32_t c = 0; c < n; c++)
    if (load[c] < load[best]) best = c;
  load[best] += x->est->a[i] + x->est->b[i] * (double)kv;
  return best;
}

static int64_t written_tokens(const pass_t *x, int32_t n) {
  int64_t kv = 0;
  for (int32_t k = 0; k < n; k++) kv += x->b->segs[x->n_segs + k].end - x->b->segs[x->n_segs + k].begin;
  return kv;
}

/* Appends the copy of item i for arrival a over the n segments just written (final only
 * when i is and the copy is whole), on the queue of least estimated time. */
static void place(pass_t *x, int32_t i, int32_t a, int32_t n, int whole) {
  const av_item_t *src = &x->p->items[i];
  av_item_t it = *src;
  int32_t pair[2] = {x->ch->arr_row[a], -1};
  if (!whole) it.output = AV_OUT_PARTIAL;
  int32_t order = x->p->launches[it.launch].persistent_ctas > 0 ? ++x->b->maxo[it.launch] : -1;
  it.cta = least_loaded(x, &it, i, written_tokens(x, n));
  emit(x, &it, pair, 1, n, order);
  x->b->src[x->n_items - 1] = src->n_q == 1 && it.output == src->output ? i : -1;
}

/* The most KV tokens of an arrival's leaf that a copy of item i, already reading kv0 tokens,
 * may take so that its estimated time stays within the plan's (est->time_us): a long new
 * leaf is divided, as its scheduler would have divided it, rather than becoming the plan's
 * longest CTA; in a persistent launch, within the room the least-loaded queue has left. */
static int64_t fit_tokens(const pass_t *x, int32_t i, int64_t kv0) {
  const av__est_t *e = x->est;
  if (!e || e->time_us <= 0 || e->b[i] <= 0) return INT64_MAX;
  const av_item_t *it = &x->p->items[i];
  double cap = e->time_us, low = -1;
  int32_t n = x->p->launches[it->launch].persistent_ctas;
  for (int32_t c = 0; c < n; c++) {
    double l = x->b->load[x->lbase[it->launch] + c];
    low = low < 0 || l < low ? l : low;
  }
  if (low > 0) cap -= low;
  double tok = (cap - e->a[i]) / e->b[i] - (double)kv0;
  return tok > 0 ? (int64_t)tok : 0;
}

/* Copies of item i for arrival a: its segments (the sibling's leaf left out) and, once, the
 * arrival's leaf, in pieces that fit the plan's time (fit_tokens; at most
 * AV__MAX_LEAF_PIECES, none shorter than 1/AV__MAX_LEAF_PIECES of the leaf). */
static int copy_for(pass_t *x, int32_t i, int32_t a, int leafy, int32_t sib_leaf) {
  const av__changes_t *ch = x->ch;
  if (room(x, x->p->items[i].n_seg + 1, 1)) return -1;
  int32_t n = copy_segments(x, &x->p->items[i], sib_leaf);
  if (n < 0) return -1;
  if (!leafy || x->done[a]) {
    if (n > 0) place(x, i, a, n, 1);
    return 0;
  }
  int32_t v = ch->arr_leaf[a];
  int64_t len = ch->new_len[v], at = 0, least = (len + AV__MAX_LEAF_PIECES - 1) / AV__MAX_LEAF_PIECES;
  for (int32_t k = 0; at < len; k++) {
    if (k > 0 && room(x, 1, 1)) return -1;
    if (k > 0) n = 0;
    int64_t take = len - at, fit = k + 1 < AV__MAX_LEAF_PIECES ? fit_tokens(x, i, written_tokens(x, n)) : take;
    if (fit < take) take = fit > least ? fit : least;
    if (take > len - at) take = len - at;
    x->b->segs[x->n_segs + n++] = (av_segment_t){.node = v, .begin = at, .end = at + take};
    at += take;
    place(x, i, a, n, k == 0 && at == len);
  }
  x->done[a] = 1;
  return 0;
}

static int clones(pass_t *x, int32_t i, int32_t sib_leaf) {
  for (int32_t c = 0; c < x->n_clone; c++)
    if (copy_for(x, i, x->clone_a[c], x->clone_leafy[c], sib_leaf)) return -1;
  return 0;
}

static int items_pass(pass_t *x) {
  const av_plan_t *p = x->p;
  for (int32_t l = 0; l < p->n_launches; l++) x->b->maxo[l] = -1;
  for (int32_t i = 0; i < p->n_items; i++)
    if (p->items[i].order > x->b->maxo[p->items[i].launch])
      x->b->maxo[p->items[i].launch] = p->items[i].order;
  if (route(x)) return -1;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    int32_t nq = gather(x, i);
    if (nq > 0) {
      if (room(x, it->n_seg, nq)) return -1;
      int32_t n = copy_segments(x, it, -1);
      if (n < 0) return -1;
      emit(x, it, x->b->qpos, nq, n, -1);
      if (nq == it->n_q) x->b->src[x->n_items - 1] = i;
    }
    /* Copies: of an item of one query, that query is their sibling. */
    int32_t sib_leaf = it->n_q == 1 ? x->w0->request_node[p->item_queries[it->q_begin]] : -1;
    if (x->n_clone && clones(x, i, sib_leaf)) return -1;
  }
  return 0;
}

/* Merge lists: the kept requests' old order renumbered when the plan had explicit lists,
 * else (and for arrivals) slot order, filled in one pass over the slots. */
static void merges(pass_t *x) {
  const av_plan_t *p = x->p;
  const av__changes_t *ch = x->ch;
  int32_t n = ch->n_new, *off = x->b->moff, *sl = x->b->mslots, *cur = x->b->cur;
  for (int32_t j = 0; j <= n; j++) off[j] = 0;
  for (int32_t s = 0; s < x->n_slots; s++) off[x->b->slot_req[s] + 1]++;
  for (int32_t j = 0; j < n; j++) off[j + 1] += off[j];
  for (int32_t j = 0; j < n; j++) {
    int32_t i = ch->old_of[j];
    cur[j] = off[j];
    if (!p->merge_explicit || i < 0) continue;
    for (int32_t k = p->merge_offsets[i]; k < p->merge_offsets[i + 1]; k++)
      sl[cur[j]++] = x->b->smap[p->merge_slots[k]];
    cur[j] = -1; /* filled */
  }
  for (int32_t s = 0; s < x->n_slots; s++) {
    int32_t j = x->b->slot_req[s];
    if (cur[j] >= 0) sl[cur[j]++] = s;
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
                   const av__est_t *est, av__plan_buf_t *b) {
  pass_t x = {.p = p, .w0 = w0, .ch = ch, .b = b, .est = est, .g = av_heads_group(&p->heads)};
  if (!p->merge_offsets || reserve_pass(&x)) return -1;
  for (int32_t q = 0; q < ch->n_old; q++) x.head[q] = -1;
  for (int32_t a = ch->n_arr - 1; a >= 0; a--) {
    x.next[a] = x.head[ch->arr_sib[a]];
    x.head[ch->arr_sib[a]] = a;
    x.done[a] = 0;
  }
  if (items_pass(&x) ||
      av__reserve(&b->mslots, &b->cap_mslots, (size_t)x.n_slots + 1, sizeof *b->mslots))
    return -1;
  for (int32_t a = 0; a < ch->n_arr; a++)
    if (!x.done[a]) return -1;
  merges(&x);
  install(&x);
  return 0;
}
