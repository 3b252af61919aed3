/* The plan data structure: growable arrays of launches, items, item queries and segments
 * (one allocation each, doubled on growth), the derived fields (per-launch item counts, slot
 * owners, merge lists), structural equality and the byte figures reported per plan. */
#include "core/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int av_launch_model_from_name(const char *name, av_launch_model_t *out) {
  if (name && strcmp(name, "streams") == 0) *out = AV_LAUNCH_STREAMS;
  else if (name && strcmp(name, "graph") == 0) *out = AV_LAUNCH_GRAPH;
  else if (name && strcmp(name, "pdl") == 0) *out = AV_LAUNCH_PDL;
  else return -1;
  return 0;
}

const char *av_launch_model_name(av_launch_model_t m) {
  return m == AV_LAUNCH_GRAPH ? "graph" : m == AV_LAUNCH_PDL ? "pdl" : "streams";
}

int av_kv_copy_from_name(const char *name, av_kv_copy_t *out) {
  if (name && strcmp(name, "tma") == 0) *out = AV_KV_COPY_TMA;
  else if (name && strcmp(name, "cp_async") == 0) *out = AV_KV_COPY_CP_ASYNC;
  else return -1;
  return 0;
}

const char *av_kv_copy_name(av_kv_copy_t c) {
  return c == AV_KV_COPY_CP_ASYNC ? "cp_async" : "tma";
}

av_launch_model_t av_plan_issue_model(const av_plan_t *p, int sm_arch) {
  if (p->launch_model != AV_LAUNCH_PDL) return p->launch_model;
  for (int32_t l = 1; l < p->n_launches; l++)
    if (p->launches[l].stream != p->launches[0].stream) return AV_LAUNCH_STREAMS;
  return sm_arch >= 90 ? AV_LAUNCH_PDL : AV_LAUNCH_STREAMS;
}

av_plan_t *av_plan_create(const av_workload_t *w, const char *scheduler) {
  av_plan_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  if (scheduler) snprintf(p->scheduler, sizeof p->scheduler, "%s", scheduler);
  snprintf(p->workload_name, sizeof p->workload_name, "%s", w->name);
  p->workload_hash = av_workload_hash(w);
  p->heads = w->heads;
  p->n_requests = w->n_requests;
  p->n_nodes = w->n_nodes;
  return p;
}

void av_plan_destroy(av_plan_t *p) {
  if (!p) return;
  free(p->launches);
  free(p->items);
  free(p->item_queries);
  free(p->segments);
  free(p->slot_request);
  free(p->merge_offsets);
  free(p->merge_slots);
  free(p);
}

/* Makes room for `extra` more elements in *arr (capacity *cap, count n), doubling so that
 * building a plan of N items costs O(N) copies. Returns 0, or -1 when out of memory or when
 * the count would overflow int32. */
static int grow(void **arr, int32_t *cap, int32_t n, int64_t extra, size_t elem) {
  int64_t need = (int64_t)n + extra;
  if (need > INT32_MAX) return -1;
  if (need <= *cap) return 0;
  int64_t c = *cap > 0 ? *cap : 16;
  while (c < need) c *= 2;
  if (c > INT32_MAX) c = INT32_MAX;
  void *a = realloc(*arr, (size_t)c * elem);
  if (!a) return -1;
  *arr = a;
  *cap = (int32_t)c;
  return 0;
}

/* Exact capacities (no doubling slack): the caller says what it will add. */
static int reserve(void **arr, int32_t *cap, int32_t n, int64_t extra, size_t elem) {
  int64_t need = (int64_t)n + extra;
  if (extra < 0 || need > INT32_MAX) return -1;
  if (need <= *cap) return 0;
  void *a = realloc(*arr, (size_t)(need ? need : 1) * elem);
  if (!a) return -1;
  *arr = a;
  *cap = (int32_t)need;
  return 0;
}

int av_plan_reserve(av_plan_t *p, int64_t items, int64_t item_queries, int64_t segments) {
  if (reserve((void **)&p->items, &p->cap_items, p->n_items, items, sizeof *p->items) ||
      reserve((void **)&p->item_queries, &p->cap_item_queries, p->n_item_queries,
              item_queries, sizeof *p->item_queries) ||
      reserve((void **)&p->segments, &p->cap_segments, p->n_segments, segments,
              sizeof *p->segments))
    return -1;
  return 0;
}

int32_t av_plan_add_launch(av_plan_t *p, int32_t stream, const av_tile_t *tile,
                           int32_t persistent_ctas) {
  if (grow((void **)&p->launches, &p->cap_launches, p->n_launches, 1, sizeof *p->launches))
    return -1;
  av_launch_t *l = &p->launches[p->n_launches];
  memset(l, 0, sizeof *l);
  l->stream = stream;
  l->tile = *tile;
  l->persistent_ctas = persistent_ctas;
  return p->n_launches++;
}

/* Negative counts are refused like an allocation failure: nothing sensible can be stored.
 * Items mostly carry a few queries and segments, copied by plain loops (a memcpy call costs
 * more than such a copy); long query lists go through memcpy. */
int32_t av_plan_add_item(av_plan_t *p, int32_t launch, av_item_work_t work, av_output_t output,
                         int32_t cta, int32_t order) {
  const int32_t *queries = work.queries, n_q = work.n_q, n_seg = work.n_seg;
  const av_segment_t *segs = work.segs;
  if (n_q < 0 || n_seg < 0) return -1;
  if (output == AV_OUT_PARTIAL && (int64_t)p->n_slots + n_q > INT32_MAX) return -1;
  if (p->n_items >= p->cap_items || (int64_t)p->n_item_queries + n_q > p->cap_item_queries ||
      (int64_t)p->n_segments + n_seg > p->cap_segments) {
    if (grow((void **)&p->items, &p->cap_items, p->n_items, 1, sizeof *p->items) ||
        grow((void **)&p->item_queries, &p->cap_item_queries, p->n_item_queries, n_q,
             sizeof *p->item_queries) ||
        grow((void **)&p->segments, &p->cap_segments, p->n_segments, n_seg,
             sizeof *p->segments))
      return -1;
  }
  int32_t q0 = p->n_item_queries, s0 = p->n_segments;
  av_item_t *it = &p->items[p->n_items];
  *it = (av_item_t){.launch = launch, .q_begin = q0, .n_q = n_q, .seg_begin = s0,
                    .n_seg = n_seg, .output = output,
                    .slot_begin = output == AV_OUT_PARTIAL ? p->n_slots : -1, .cta = cta,
                    .order = order};
  int32_t *q = p->item_queries + q0;
  av_segment_t *sg = p->segments + s0;
  if (n_q > 8)
    memcpy(q, queries, (size_t)n_q * sizeof *q);
  else
    for (int32_t k = 0; k < n_q; k++) q[k] = queries[k];
  for (int32_t k = 0; k < n_seg; k++) sg[k] = segs[k];
  p->n_item_queries = q0 + n_q;
  p->n_segments = s0 + n_seg;
  if (output == AV_OUT_PARTIAL) p->n_slots += n_q;
  return p->n_items++;
}

/* Merge lists in slot order: a counting sort of the slots by owning request. Slots whose
 * owner is out of range are left out here; the checker reports them. */
static int default_merge(av_plan_t *p, av_error_t *err) {
  int32_t nr = p->n_requests, ns = p->n_slots;
  const int32_t *owner = p->slot_request;
  int32_t *off = calloc(2 * ((size_t)nr + 1), sizeof *off), *fill = off + nr + 1;
  int32_t *slots = malloc(((size_t)ns + 1) * sizeof *slots);
  if (!off || !slots) {
    free(off);
    free(slots);
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory finalizing the plan");
  }
  for (int32_t s = 0; s < ns; s++) {
    int32_t r = owner[s];
    if (r >= 0 && r < nr) off[r + 1]++;
  }
  for (int32_t r = 0; r < nr; r++) off[r + 1] += off[r];
  memcpy(fill, off, (size_t)nr * sizeof *fill);
  for (int32_t s = 0; s < ns; s++) {
    int32_t r = owner[s];
    if (r >= 0 && r < nr) slots[fill[r]++] = s;
  }
  free(p->merge_offsets);
  free(p->merge_slots);
  p->merge_offsets = off;
  p->merge_slots = slots;
  return AV_OK;
}

/* Idempotent: derived arrays are rebuilt from the items each time. Out-of-range indices are
 * tolerated (and left for av_plan_check to name), so a broken plan can still be inspected. */
int av_plan_finalize(av_plan_t *p, av_error_t *err) {
  int32_t nl = p->n_launches, ni = p->n_items, ns = p->n_slots;
  av_launch_t *launches = p->launches;
  const av_item_t *items = p->items;
  const int32_t *iq = p->item_queries;
  for (int32_t l = 0; l < nl; l++) launches[l].n_items = 0;
  for (int32_t i = 0; i < ni; i++) {
    int32_t l = items[i].launch;
    if (l >= 0 && l < nl) launches[l].n_items++;
  }
  int32_t *owner = malloc(((size_t)ns + 1) * sizeof *owner);
  if (!owner) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory finalizing the plan");
  for (int32_t s = 0; s < ns; s++) owner[s] = -1;
  for (int32_t i = 0; i < ni; i++) {
    const av_item_t *it = &items[i];
    if (it->output != AV_OUT_PARTIAL || it->slot_begin < 0) continue;
    int32_t n = it->n_q < ns - it->slot_begin ? it->n_q : ns - it->slot_begin;
    int32_t *o = owner + it->slot_begin;
    const int32_t *q = iq + it->q_begin;
    for (int32_t k = 0; k < n; k++) o[k] = q[k];
  }
  free(p->slot_request);
  p->slot_request = owner;
  if (p->merge_explicit && p->merge_offsets) return AV_OK;
  p->merge_explicit = 0;
  return default_merge(p, err);
}

int av_plan_set_merge(av_plan_t *p, const int32_t *offsets, const int32_t *slots,
                      av_error_t *err) {
  int32_t nr = p->n_requests;
  if (offsets[0] != 0)
    return av_error_set(err, AV_ERR_PLAN, NULL, "merge", "merge offsets must start at 0, not %d",
                        offsets[0]);
  for (int32_t r = 0; r < nr; r++)
    if (offsets[r + 1] < offsets[r])
      return av_error_set(err, AV_ERR_PLAN, NULL, "merge",
                          "merge offsets decrease at request %d (%d after %d)", r,
                          offsets[r + 1], offsets[r]);
  int32_t total = offsets[nr];
  int32_t *off = malloc(((size_t)nr + 1) * sizeof *off);
  int32_t *sl = malloc(((size_t)total + 1) * sizeof *sl);
  if (!off || !sl) {
    free(off);
    free(sl);
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory setting the merge order");
  }
  memcpy(off, offsets, ((size_t)nr + 1) * sizeof *off);
  if (total) memcpy(sl, slots, (size_t)total * sizeof *sl);
  free(p->merge_offsets);
  free(p->merge_slots);
  p->merge_offsets = off;
  p->merge_slots = sl;
  p->merge_explicit = 1;
  return AV_OK;
}

static int same_i32(const int32_t *a, const int32_t *b, size_t n) {
  if (n == 0) return 1;
  if (!a || !b) return a == b;
  return memcmp(a, b, n * sizeof *a) == 0;
}

/* Field by field (structs may hold padding). The workload name and whether the merge order
 * was explicit are bookkeeping, not structure, and are not compared. */
int av_plan_equal(const av_plan_t *a, const av_plan_t *b) {
  return !strcmp(a->scheduler, b->scheduler) && !strcmp(a->params, b->params) &&
         av_plan_same_work(a, b);
}

int av_plan_same_work(const av_plan_t *a, const av_plan_t *b) {
  if (a->workload_hash != b->workload_hash || a->heads.hq != b->heads.hq ||
      a->heads.hkv != b->heads.hkv || a->heads.head_dim != b->heads.head_dim ||
      a->heads.dtype != b->heads.dtype || a->n_requests != b->n_requests ||
      a->n_nodes != b->n_nodes || a->n_launches != b->n_launches ||
      a->n_items != b->n_items || a->n_item_queries != b->n_item_queries ||
      a->n_segments != b->n_segments || a->n_slots != b->n_slots ||
      a->launch_model != b->launch_model)
    return 0;
  for (int32_t l = 0; l < a->n_launches; l++) {
    const av_launch_t *x = &a->launches[l], *y = &b->launches[l];
    if (x->stream != y->stream || x->tile.kind != y->tile.kind ||
        x->tile.m_rows != y->tile.m_rows || x->tile.n_tokens != y->tile.n_tokens ||
        x->tile.warps != y->tile.warps || x->persistent_ctas != y->persistent_ctas ||
        x->n_items != y->n_items)
      return 0;
  }
  for (int32_t i = 0; i < a->n_items; i++) {
    const av_item_t *x = &a->items[i], *y = &b->items[i];
    if (x->launch != y->launch || x->q_begin != y->q_begin || x->n_q != y->n_q ||
        x->seg_begin != y->seg_begin || x->n_seg != y->n_seg || x->output != y->output ||
        x->slot_begin != y->slot_begin || x->cta != y->cta || x->order != y->order)
      return 0;
  }
  if (!same_i32(a->item_queries, b->item_queries, (size_t)a->n_item_queries)) return 0;
  for (int32_t s = 0; s < a->n_segments; s++) {
    const av_segment_t *x = &a->segments[s], *y = &b->segments[s];
    if (x->node != y->node || x->begin != y->begin || x->end != y->end) return 0;
  }
  if (!a->merge_offsets || !b->merge_offsets) return a->merge_offsets == b->merge_offsets;
  if (!same_i32(a->merge_offsets, b->merge_offsets, (size_t)a->n_requests + 1)) return 0;
  return same_i32(a->merge_slots, b->merge_slots, (size_t)a->merge_offsets[a->n_requests]);
}

static int cmp_i32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

/* Bytes follow DESIGN §Numbers that matter: every KV token an item reads costs K and V rows
 * of d elements per KV head; every partial state (O in fp32 plus its lse) is written once by
 * its item and read once by the merge, per query head of the group. */
void av_plan_stats(const av_plan_t *p, av_plan_stats_t *out) {
  memset(out, 0, sizeof *out);
  out->items = p->n_items;
  out->launches = p->n_launches;
  out->partial_slots = p->n_slots;
  for (int32_t s = 0; s < p->n_segments; s++)
    out->kv_tokens_read += p->segments[s].end - p->segments[s].begin;
  int32_t *streams = malloc(((size_t)p->n_launches + 1) * sizeof *streams);
  if (streams) {
    for (int32_t l = 0; l < p->n_launches; l++) streams[l] = p->launches[l].stream;
    qsort(streams, (size_t)p->n_launches, sizeof *streams, cmp_i32);
    for (int32_t l = 0; l < p->n_launches; l++)
      if (l == 0 || streams[l] != streams[l - 1]) out->streams++;
    free(streams);
  }
  double hkv = p->heads.hkv, d = p->heads.head_dim;
  double group = p->heads.hkv > 0 ? (double)av_heads_group(&p->heads) : 0.0;
  out->kv_bytes = (double)out->kv_tokens_read * hkv * d * 2.0 * av_dtype_bytes(p->heads.dtype);
  out->partial_bytes = (double)p->n_slots * hkv * group * (d * 4.0 + 4.0) * 2.0;
}
