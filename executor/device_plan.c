/* The device plan (executor/device_plan.h): one device buffer and its page-locked staging
 * copy, a plan laid out in the staging copy in the kernels' layout (executor/exec_plan.c
 * writes the records) with the caller's block ids per node, one asynchronous copy per upload,
 * and runs of the plan on the caller's tensors on the caller's stream. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/device_plan.h"

void av_dplan_cap_of(const av_plan_t *p, const av_workload_t *w, av_dplan_cap_t *cap) {
  memset(cap, 0, sizeof *cap);
  cap->requests = p->n_requests;
  cap->items = p->n_items;
  cap->item_queries = p->n_item_queries;
  cap->segments = p->n_segments;
  cap->slots = p->n_slots;
  cap->merge_entries = p->merge_offsets ? p->merge_offsets[p->n_requests] : 0;
  cap->launches = p->n_launches;
  for (int32_t l = 0; l < p->n_launches; ++l) cap->persistent_ctas += p->launches[l].persistent_ctas;
  const int bs = w->block_size_tokens;
  for (int32_t u = 0; u < w->n_nodes; ++u) {
    const int64_t o = w->nodes[u].path_offset_tokens % bs;
    cap->blocks += (int32_t)((o + w->nodes[u].kv_len_tokens + bs - 1) / bs);
  }
}

#ifdef AV_HAVE_CUDA
#include "executor/exec_device.h"

struct av_dplan {
  av_dplan_cap_t cap;
  av_heads_t heads;
  int block_size;
  av_dplan_offsets_t off;
  int device;                    /* the CUDA device the buffer is on */
  char *dev, *staging;
  void *ev_staged, *ev_maps;     /* the last copy out of each part of the staging copy */
  int staged, maps_copied;       /* whether those events have been recorded */
  /* host scratch sized by the capacity */
  int32_t *first, *local, *node_off, *node_shift;
  const av_kern_variant_t **var;
  av_kern_launch_t *kl;
  /* the uploaded plan (n_requests 0: none, or the last upload failed) */
  int32_t n_requests, n_launches, n_slots, max_block_id;
  int needs_tma, merge_pdl;
  /* how KV is copied; the cache the maps were encoded for (maps_staged 0: none yet, or the
   * copy changed since; maps_rows 0: cp.async) */
  av_kv_copy_t kv_copy;
  av_run_tensors_t maps_for;
  int maps_staged, maps_rows;
};

static size_t up(size_t x) { return (x + 255) & ~(size_t)255; }

/* Each table at a 256-byte boundary, in the order the staging copy holds them. */
static void layout(const av_dplan_cap_t *c, const av_heads_t *h, av_dplan_offsets_t *o) {
  const size_t i4 = sizeof(int32_t);
  size_t at = 0;
  o->items = at, at = up(at + (size_t)c->items * AV_KERN_ITEM_INTS * i4);
  o->queries = at, at = up(at + (size_t)c->item_queries * i4);
  o->segs = at, at = up(at + (size_t)c->segments * 4 * i4);
  o->qoff = at, at = up(at + ((size_t)c->persistent_ctas + c->launches) * i4);
  o->queue = at, at = up(at + (size_t)c->items * i4);
  o->merge_off = at, at = up(at + ((size_t)c->requests + 1) * i4);
  o->merge_slots = at, at = up(at + (size_t)c->merge_entries * i4);
  o->block_ids = at, at = up(at + (size_t)c->blocks * i4);
  o->maps = at, at = up(at + 256);
  o->part_lse = at, at = up(at + (size_t)c->slots * h->hq * sizeof(float));
  o->part_o = at, at = up(at + (size_t)c->slots * h->hq * h->head_dim * sizeof(float));
  o->bytes = at;
}

/* A capacity's counts in the order of their names. */
enum { N_CAP = 9 };
static const char *const cap_names[N_CAP] = {"requests", "items", "item_queries", "segments",
                                             "blocks", "slots", "merge_entries", "launches",
                                             "persistent_ctas"};
static void cap_counts(const av_dplan_cap_t *c, int32_t v[N_CAP]) {
  const int32_t x[N_CAP] = {c->requests, c->items, c->item_queries, c->segments, c->blocks,
                            c->slots, c->merge_entries, c->launches, c->persistent_ctas};
  memcpy(v, x, sizeof x);
}

/* The first five counts must be positive (a batch has requests, items, queries, segments and
 * blocks), the others may be 0. */
static int bad_cap(const av_dplan_cap_t *c, av_error_t *err) {
  int32_t v[N_CAP];
  cap_counts(c, v);
  for (int i = 0; i < N_CAP; ++i)
    if (v[i] < 0 || (v[i] == 0 && i < 5))
      return av_error_set(err, AV_ERR_RANGE, AV_SRC, cap_names[i], "capacity %d; expected %s",
                          (int)v[i], i < 5 ? "a positive count" : "a count >= 0");
  return AV_OK;
}

av_dplan_t *av_dplan_create(const av_dplan_cap_t *cap, const av_heads_t *h, int block_size,
                            av_error_t *err) {
  if (bad_cap(cap, err)) return NULL;
  if (block_size < 1) {
    av_error_set(err, AV_ERR_RANGE, AV_SRC, "block_size",
                 "block size %d; expected a positive number of tokens", block_size);
    return NULL;
  }
  int n = 0;
  if (av_kern_device_count(&n) != 0 || n < 1) {
    av_error_set(err, AV_ERR_NODEVICE, AV_SRC, NULL, "no CUDA device");
    return NULL;
  }
  av_dplan_t *dp = calloc(1, sizeof *dp);
  if (!dp) goto nomem;
  dp->cap = *cap;
  dp->heads = *h;
  dp->block_size = block_size;
  layout(cap, h, &dp->off);
  const size_t nodes = (size_t)cap->blocks + 1, launches = (size_t)cap->launches + 1;
  dp->first = calloc(launches, sizeof *dp->first);
  dp->local = calloc((size_t)cap->items + 1, sizeof *dp->local);
  dp->node_off = calloc(nodes, sizeof *dp->node_off);
  dp->node_shift = calloc(nodes, sizeof *dp->node_shift);
  dp->var = calloc(launches, sizeof *dp->var);
  dp->kl = calloc(launches, sizeof *dp->kl);
  if (!dp->first || !dp->local || !dp->node_off || !dp->node_shift || !dp->var || !dp->kl)
    goto nomem;
  if (av_kern_device_current(&dp->device) || av_kern_malloc((void **)&dp->dev, dp->off.bytes) ||
      av_kern_host_alloc((void **)&dp->staging, dp->off.part_lse) ||
      av_kern_event_create(&dp->ev_staged) || av_kern_event_create(&dp->ev_maps)) {
    av__exec_cuda_fail(err);
    av_dplan_destroy(dp);
    return NULL;
  }
  return dp;
nomem:
  av_dplan_destroy(dp);
  av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  return NULL;
}

void av_dplan_destroy(av_dplan_t *dp) {
  if (!dp) return;
  av_kern_free(dp->dev);
  av_kern_host_free(dp->staging);
  av_kern_event_destroy(dp->ev_staged);
  av_kern_event_destroy(dp->ev_maps);
  free(dp->first);
  free(dp->local);
  free(dp->node_off);
  free(dp->node_shift);
  free(dp->var);
  free(dp->kl);
  free(dp);
}

const av_dplan_offsets_t *av_dplan_offsets(const av_dplan_t *dp) { return &dp->off; }
void *av_dplan_device(const av_dplan_t *dp) { return dp->dev; }
int av_dplan_device_id(const av_dplan_t *dp) { return dp->device; }

void av_dplan_shape(const av_dplan_t *dp, av_dplan_shape_t *out) {
  *out = (av_dplan_shape_t){.n_requests = dp->n_requests, .heads = dp->heads,
                            .block_size = dp->block_size, .max_block_id = dp->max_block_id};
}

/* The plan's counts against the capacity, and its heads and block size against the
 * buffer's: the first that does not fit, by name. */
static int check_fit(const av_dplan_t *dp, const av_plan_t *p, const av_workload_t *w,
                     av_error_t *err) {
  av_dplan_cap_t need;
  av_dplan_cap_of(p, w, &need);
  int32_t have[N_CAP], want[N_CAP];
  cap_counts(&dp->cap, have);
  cap_counts(&need, want);
  for (int i = 0; i < N_CAP; ++i)
    if (want[i] > have[i])
      return av_error_set(err, AV_ERR_RANGE, AV_SRC, cap_names[i],
                          "plan '%s' needs %d %s; the device plan holds %d (create it with a "
                          "larger capacity)",
                          p->scheduler, (int)want[i], cap_names[i], (int)have[i]);
  const av_heads_t *h = &dp->heads;
  if (p->heads.hq != h->hq || p->heads.hkv != h->hkv || p->heads.head_dim != h->head_dim ||
      p->heads.dtype != h->dtype)
    return av_error_set(err, AV_ERR_MISMATCH, AV_SRC, "heads",
                        "plan heads (%d, %d, d %d, %s) differ from the device plan's "
                        "(%d, %d, d %d, %s)",
                        p->heads.hq, p->heads.hkv, p->heads.head_dim,
                        av_dtype_name(p->heads.dtype), h->hq, h->hkv, h->head_dim,
                        av_dtype_name(h->dtype));
  if (w->block_size_tokens != dp->block_size || w->n_requests != p->n_requests)
    return av_error_set(err, AV_ERR_MISMATCH, AV_SRC, "block_size",
                        "plan of block size %d; the device plan was made for %d",
                        w->block_size_tokens, dp->block_size);
  return AV_OK;
}

/* Node u's blocks are those of the first request below it, from the block holding the
 * node's first token (its path offset) on; the node starts at that offset within it. */
static int node_blocks(av_dplan_t *dp, const av_workload_t *w, const int32_t *table,
                       int64_t row_stride, int32_t *ids, size_t *n_ids, av_error_t *err) {
  const int bs = dp->block_size;
  int32_t n = 0;
  *n_ids = 0;
  dp->max_block_id = -1;
  for (int32_t u = 0; u < w->n_nodes; ++u) {
    const av_node_t *nd = &w->nodes[u];
    const int32_t r = w->node_reqs[w->node_req_offsets[u]];
    const int64_t first = nd->path_offset_tokens / bs;
    const int32_t shift = (int32_t)(nd->path_offset_tokens % bs);
    const int64_t nb = (shift + nd->kv_len_tokens + bs - 1) / bs;
    if (first + nb > row_stride)
      return av_error_set(err, AV_ERR_RANGE, AV_SRC, "table",
                          "request %d reads %lld blocks; its row holds %lld", (int)r,
                          (long long)(first + nb), (long long)row_stride);
    dp->node_off[u] = n;
    dp->node_shift[u] = shift;
    for (int64_t j = 0; j < nb; ++j) {
      const int32_t id = table[(int64_t)r * row_stride + first + j];
      if (id < 0)
        return av_error_set(err, AV_ERR_RANGE, AV_SRC, "table",
                            "request %d's block %lld is %d; expected a block id >= 0", (int)r,
                            (long long)(first + j), (int)id);
      if (id > dp->max_block_id) dp->max_block_id = id;
      ids[n++] = id;
    }
  }
  *n_ids = (size_t)n;
  return AV_OK;
}

int av_dplan_upload(av_dplan_t *dp, const av_plan_t *p, const av_workload_t *w,
                    const int32_t *table, int64_t row_stride, void *stream, av_error_t *err) {
  dp->n_requests = 0;
  int rc = check_fit(dp, p, w, err);
  if (!rc) rc = av__plan_variants(p, &dp->heads, 1, dp->var, err);
  if (rc) return rc;
  if (dp->staged && av_kern_event_sync(dp->ev_staged)) return av__exec_cuda_fail(err);
  char *s = dp->staging;
  const av_dplan_offsets_t *o = &dp->off;
  int32_t *ids = (int32_t *)(s + o->block_ids);
  size_t n_ids = 0;
  rc = node_blocks(dp, w, table, row_stride, ids, &n_ids, err);
  if (rc) return rc;
  const av__node_kv_t kv = {.block_off = dp->node_off, .shift = dp->node_shift};
  const int32_t pos = av__plan_item_records(p, &kv, (int32_t *)(s + o->items), dp->first,
                                            dp->local);
  av__plan_queue_records(p, dp->local, (int32_t *)(s + o->qoff), (int32_t *)(s + o->queue));
  av__plan_seg_records(p, &kv, (int32_t *)(s + o->segs));
  memcpy(s + o->queries, p->item_queries, (size_t)p->n_item_queries * sizeof(int32_t));
  memcpy(s + o->merge_off, p->merge_offsets, ((size_t)p->n_requests + 1) * sizeof(int32_t));
  memcpy(s + o->merge_slots, p->merge_slots,
         (size_t)p->merge_offsets[p->n_requests] * sizeof(int32_t));
  if (av_kern_h2d_async(dp->dev, s, o->block_ids + n_ids * sizeof(int32_t), stream) ||
      av_kern_event_record(dp->ev_staged, stream))
    return av__exec_cuda_fail(err);
  dp->staged = 1;
  const av__plan_tables_t t = {
      (const int32_t *)(dp->dev + o->items), (const int32_t *)(dp->dev + o->queries),
      (const int32_t *)(dp->dev + o->segs), (const int32_t *)(dp->dev + o->qoff),
      (const int32_t *)(dp->dev + o->queue)};
  av__plan_bind(p, &t, dp->first, pos, dp->kl);
  dp->n_requests = p->n_requests;
  dp->n_launches = p->n_launches;
  dp->n_slots = p->n_slots;
  dp->merge_pdl = p->launch_model == AV_LAUNCH_PDL;
  dp->needs_tma = 0;
  for (int32_t l = 0; l < p->n_launches; ++l)
    if (p->launches[l].tile.m_rows >= AV_TILE_WIDE_ROWS) dp->needs_tma = 1;
  return AV_OK;
}

/* The TMA maps of t's K and V, encoded again only when the cache differs from the last run's
 * (its pointers, strides or block count) or the KV copy changed; their staging slot is
 * rewritten only after the previous copy out of it has run. With the cp.async copy there are
 * none (maps_rows 0). */
static int stage_maps(av_dplan_t *dp, const av_kern_batch_t *kb, const av_run_tensors_t *t,
                      void *stream, av_error_t *err) {
  const av_run_tensors_t *m = &dp->maps_for;
  if (dp->maps_staged && m->k == t->k && m->v == t->v && m->n_blocks == t->n_blocks &&
      m->kv_stride_block == t->kv_stride_block && m->kv_stride_head == t->kv_stride_head &&
      m->kv_stride_token == t->kv_stride_token)
    return AV_OK;
  dp->maps_rows = 0;
  if (dp->kv_copy == AV_KV_COPY_TMA) {
    if (dp->maps_copied && av_kern_event_sync(dp->ev_maps)) return av__exec_cuda_fail(err);
    char *host = dp->staging + dp->off.maps;
    if (t->n_blocks > INT32_MAX ||
        av_kern_kv_maps_encode(kb, (int32_t)t->n_blocks, host, &dp->maps_rows))
      return av__exec_cuda_fail(err);
    if (dp->maps_rows &&
        (av_kern_h2d_async(dp->dev + dp->off.maps, host, 256, stream) ||
         av_kern_event_record(dp->ev_maps, stream)))
      return av__exec_cuda_fail(err);
    dp->maps_copied |= dp->maps_rows != 0;
  }
  dp->maps_for = *t;
  dp->maps_staged = 1;
  return AV_OK;
}

int av_dplan_set_kv_copy(av_dplan_t *dp, av_kv_copy_t c, av_error_t *err) {
  if (c != AV_KV_COPY_TMA && c != AV_KV_COPY_CP_ASYNC)
    return av_error_set(err, AV_ERR_RANGE, AV_SRC, "kv_copy",
                        "KV copy %d; expected AV_KV_COPY_TMA or AV_KV_COPY_CP_ASYNC", (int)c);
  if (c != dp->kv_copy) dp->maps_staged = 0;
  dp->kv_copy = c;
  return AV_OK;
}

int av_dplan_run(av_dplan_t *dp, const av_run_tensors_t *t, void *stream, av_error_t *err) {
  if (dp->n_requests == 0)
    return av_error_set(err, AV_ERR_USAGE, AV_SRC, "plan",
                        "no plan uploaded (anvil_device_plan_upload first)");
  if (t->device != dp->device)
    return av_error_set(err, AV_ERR_MISMATCH, AV_SRC, "q",
                        "on CUDA device %d; the device plan's buffer is on device %d",
                        t->device, dp->device);
  if (!av_kern_kv_strides_ok(t->kv_stride_block, t->kv_stride_head, t->kv_stride_token,
                             dp->block_size) ||
      (uintptr_t)t->k % 16 != 0)
    return av_error_set(err, AV_ERR_MISMATCH, AV_SRC, "k_cache",
                        "strides (block %lld, head %lld, token %lld elements) at address %p; "
                        "expected positive multiples of 8 elements (16 bytes), a block and "
                        "its tokens within 4 GiB, and a 16-byte aligned start",
                        (long long)t->kv_stride_block, (long long)t->kv_stride_head,
                        (long long)t->kv_stride_token, t->k);
  if (t->n_blocks <= dp->max_block_id)
    return av_error_set(err, AV_ERR_RANGE, AV_SRC, "k_cache",
                        "%lld blocks; the plan's block table reads block %d",
                        (long long)t->n_blocks, (int)dp->max_block_id);
  const av_heads_t *h = &dp->heads;
  av_kern_batch_t kb = {
      .q = t->q, .k = t->k, .v = t->v, .out = t->out, .lse = t->lse,
      .block_ids = (const int32_t *)(dp->dev + dp->off.block_ids),
      .part_o = (float *)(dp->dev + dp->off.part_o),
      .part_lse = (float *)(dp->dev + dp->off.part_lse), .hq = h->hq, .hkv = h->hkv,
      .head_dim = h->head_dim, .dtype = (int)h->dtype, .block_size = dp->block_size,
      .kv_stride_block = t->kv_stride_block, .kv_stride_head = t->kv_stride_head,
      .kv_stride_token = t->kv_stride_token,
      .scale = (float)(1.0 / sqrt((double)h->head_dim)), .merge_pdl = dp->merge_pdl};
  int rc = stage_maps(dp, &kb, t, stream, err);
  if (rc) return rc;
  kb.kv_maps = dp->maps_rows ? dp->dev + dp->off.maps : NULL;
  kb.kv_map_rows = dp->maps_rows;
  if (dp->needs_tma && !kb.kv_maps)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "k_cache",
                        "the plan's m128 tile copies KV by TMA, which this cache cannot use "
                        "(an sm_90 device, a block size that is a power of two >= 8, strides "
                        "of 16-byte multiples); plan with m <= 64 tiles");
  for (int32_t l = 0; l < dp->n_launches; ++l)
    if (av_kern_attn_launch(dp->var[l], &kb, &dp->kl[l], stream)) return av__exec_cuda_fail(err);
  if (dp->n_slots > 0 &&
      av_kern_merge_launch(&kb, dp->n_requests, (const int32_t *)(dp->dev + dp->off.merge_off),
                           (const int32_t *)(dp->dev + dp->off.merge_slots), stream))
    return av__exec_cuda_fail(err);
  return AV_OK;
}

#else /* no CUDA: nothing can be allocated on a device */

struct av_dplan {
  av_dplan_offsets_t off;
};

av_dplan_t *av_dplan_create(const av_dplan_cap_t *cap, const av_heads_t *h, int block_size,
                            av_error_t *err) {
  (void)cap, (void)h, (void)block_size;
  av_error_set(err, AV_ERR_NODEVICE, "executor", NULL, "built without CUDA");
  return NULL;
}
void av_dplan_destroy(av_dplan_t *dp) { free(dp); }
const av_dplan_offsets_t *av_dplan_offsets(const av_dplan_t *dp) { return &dp->off; }
void *av_dplan_device(const av_dplan_t *dp) { (void)dp; return NULL; }
int av_dplan_device_id(const av_dplan_t *dp) { (void)dp; return -1; }
void av_dplan_shape(const av_dplan_t *dp, av_dplan_shape_t *out) {
  (void)dp;
  memset(out, 0, sizeof *out);
}
int av_dplan_upload(av_dplan_t *dp, const av_plan_t *p, const av_workload_t *w,
                    const int32_t *table, int64_t row_stride, void *stream, av_error_t *err) {
  (void)dp, (void)p, (void)w, (void)table, (void)row_stride, (void)stream;
  return av_error_set(err, AV_ERR_NODEVICE, "executor", NULL, "built without CUDA");
}
int av_dplan_set_kv_copy(av_dplan_t *dp, av_kv_copy_t c, av_error_t *err) {
  (void)dp, (void)c;
  return av_error_set(err, AV_ERR_NODEVICE, "executor", NULL, "built without CUDA");
}
int av_dplan_run(av_dplan_t *dp, const av_run_tensors_t *t, void *stream, av_error_t *err) {
  (void)dp, (void)t, (void)stream;
  return av_error_set(err, AV_ERR_NODEVICE, "executor", NULL, "built without CUDA");
}
#endif
