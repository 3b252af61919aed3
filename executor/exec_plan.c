/* A plan on the device (executor/executor.c runs it): checked against the batch and the
 * compiled variants before anything is allocated, its items, queues, segments and merge lists
 * uploaded in the layout the kernels read (kernels/kernels.h), one CUDA stream per plan
 * stream, and one execution launched between two events. */
#ifdef AV_HAVE_CUDA
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"
#include "executor/exec_device.h"

int av__exec_cuda_fail(av_error_t *err) {
  return av_error_set(err, AV_ERR_CUDA, AV_SRC, NULL, "%s", av_kern_last_error());
}

/* Merge CTAs the merge launch runs (0 when the plan has no partial states). */
int64_t av__exec_merge_ctas(const av_plan_t *p) {
  const int64_t rows = (int64_t)p->n_requests * p->heads.hq, m = av_kern_merge_rows_per_cta();
  return p->n_slots > 0 ? (rows + m - 1) / m : 0;
}

void av__plan_dev_free(av__plan_dev_t *d) {
  for (int i = 0; i < d->n_streams; ++i) {
    if (d->streams) av_kern_stream_destroy(d->streams[i]);
    if (d->done_ev) av_kern_event_destroy(d->done_ev[i]);
  }
  for (int i = 0; i < d->n_streams && d->ev_starts; ++i) av_kern_event_destroy(d->ev_starts[i]);
  free(d->ev_starts);
  av_kern_event_destroy(d->ev_pre);
  av_kern_event_destroy(d->ev_end);
  av_kern_event_destroy(d->ev_join);
  av_kern_graph_destroy(d->graph[0]);
  av_kern_graph_destroy(d->graph[1]);
  av_kern_free(d->items);
  av_kern_free(d->queries);
  av_kern_free(d->segs);
  av_kern_free(d->qoff);
  av_kern_free(d->queue);
  av_kern_free(d->moff);
  av_kern_free(d->mslots);
  av_kern_free(d->part_o);
  av_kern_free(d->part_lse);
  av_kern_free(d->trace);
  free(d->var);
  free(d->kl);
  free(d->launch_stream);
  free(d->streams);
  free(d->done_ev);
  memset(d, 0, sizeof *d);
}

/* Each launch's compiled variant, or the error naming the launch whose tile has none (or
 * needs TMA where `tma` is 0). */
int av__plan_variants(const av_plan_t *p, const av_heads_t *h, int tma,
                      const av_kern_variant_t **var, av_error_t *err) {
  for (int32_t l = 0; l < p->n_launches; ++l) {
    const av_tile_t *t = &p->launches[l].tile;
    var[l] = av_kern_find((int)t->kind, t->m_rows, t->n_tokens, h->head_dim, (int)h->dtype);
    char path[64];
    snprintf(path, sizeof path, "launches[%d].tile", l);
    if (!var[l] || t->kind == AV_KERNEL_MERGE)
      return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, path,
                          "no compiled %s kernel with m %d, n %d for head dim %d, %s "
                          "(kernels/variants.json lists the compiled tiles)",
                          av_kernel_kind_name(t->kind), t->m_rows, t->n_tokens, h->head_dim,
                          av_dtype_name(h->dtype));
    /* the warp-specialised tile's producer copies by TMA only (kernels/attn_ws.cuh) */
    if (t->m_rows >= AV_TILE_WIDE_ROWS && !tma)
      return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, path,
                          "the %d x %d tile copies its KV by TMA, which this KV cache cannot use "
                          "(an sm_90 device, a KV block size that is a power of two >= 8, "
                          "strides of 16-byte multiples and the KV copy \"tma\")",
                          t->m_rows, t->n_tokens);
    if ((t->kind == AV_KERNEL_PERSISTENT) != (p->launches[l].persistent_ctas > 0))
      return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, path,
                          "a persistent grid needs the persistent kernel kind and vice versa");
  }
  return AV_OK;
}

/* Everything that can be wrong with the plan is found here, before any allocation. */
int av__plan_validate(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                      av_error_t *err) {
  const av_heads_t *h = &b->w->heads;
  if (p->workload_hash != av_workload_hash(b->w) || p->n_requests != b->w->n_requests)
    return av_error_set(err, AV_ERR_MISMATCH, AV_SRC, "workload",
                        "plan '%s' was made for another workload than batch '%s'",
                        p->scheduler, b->w->name);
  if (p->heads.hq != h->hq || p->heads.hkv != h->hkv || p->heads.head_dim != h->head_dim ||
      p->heads.dtype != h->dtype)
    return av_error_set(err, AV_ERR_MISMATCH, AV_SRC, "heads",
                        "plan heads (%d, %d, d %d) differ from the batch's (%d, %d, d %d)",
                        p->heads.hq, p->heads.hkv, p->heads.head_dim, h->hq, h->hkv,
                        h->head_dim);
  int rc = av_plan_check(p, b->w, err);
  if (rc != AV_OK) return rc;
  d->var = calloc((size_t)p->n_launches + 1, sizeof *d->var);
  if (!d->var) return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  rc = av__plan_variants(p, h, b->kv_maps != NULL, d->var, err);
  if (rc != AV_OK) return rc;
  const size_t part = (size_t)p->n_slots * h->hq * (h->head_dim + 1) * sizeof(float);
  const size_t meta = ((size_t)p->n_items * (AV_KERN_ITEM_INTS + 2) + p->n_item_queries +
                       (size_t)p->n_segments * 4 + 2 * (size_t)p->n_requests + p->n_slots) *
                          sizeof(int32_t) +
                      (size_t)(p->n_items * h->hkv + av__exec_merge_ctas(p)) *
                          sizeof(av_kern_trace_rec_t);
  av_kern_device_t dev;
  if (av_kern_device_info(0, &dev) != 0) return av__exec_cuda_fail(err);
  if (part + meta + ((size_t)256 << 20) > dev.free_bytes)
    return av_error_set(err, AV_ERR_RANGE, AV_SRC, NULL,
                        "plan '%s' needs %.2f GiB for partial states; %.2f GiB free",
                        p->scheduler, (part + meta) / 1073741824.0,
                        dev.free_bytes / 1073741824.0);
  return AV_OK;
}

static int av_upload_i32(void **dst, const int32_t *src, size_t n) {
  int r = av_kern_malloc(dst, n * sizeof(int32_t));
  return r ? r : av_kern_h2d(*dst, src, n * sizeof(int32_t));
}

int32_t av__plan_item_records(const av_plan_t *p, const av__node_kv_t *kv, int32_t *items,
                              int32_t *first, int32_t *local) {
  int32_t pos = 0;
  for (int32_t l = 0; l < p->n_launches; ++l) {
    first[l] = pos;
    for (int32_t i = 0; i < p->n_items; ++i) {
      const av_item_t *it = &p->items[i];
      if (it->launch != l) continue;
      int32_t *r = items + (size_t)pos * AV_KERN_ITEM_INTS;
      r[AV_KI_QBEGIN] = it->q_begin;
      r[AV_KI_NQ] = it->n_q;
      r[AV_KI_SEGBEGIN] = it->seg_begin;
      r[AV_KI_NSEG] = it->n_seg;
      r[AV_KI_OUTPUT] = it->output == AV_OUT_PARTIAL;
      r[AV_KI_SLOT] = it->slot_begin;
      r[AV_KI_TRACE] = i;
      /* the first request and segment inline (its node as its block-table offset): a CTA
       * starts copying KV two dependent loads sooner (kernels/kernels.h) */
      const av_segment_t *s0 = &p->segments[it->seg_begin];
      r[AV_KI_REQ0] = p->item_queries[it->q_begin];
      const int32_t shift = kv->shift ? kv->shift[s0->node] : 0;
      r[AV_KI_BOFF0] = kv->block_off[s0->node];
      r[AV_KI_BEGIN0] = (int32_t)s0->begin + shift;
      r[AV_KI_END0] = (int32_t)s0->end + shift;
      r[AV_KI_END0 + 1] = 0;
      local[i] = pos - first[l];
      ++pos;
    }
  }
  return pos;
}

int32_t av__plan_queue_records(const av_plan_t *p, const int32_t *local, int32_t *qoff,
                             int32_t *queue) {
  int32_t qpos = 0, qbase = 0;
  for (int32_t l = 0; l < p->n_launches; ++l) {
    const int32_t pc = p->launches[l].persistent_ctas;
    for (int32_t c = 0; c < pc; ++c) {
      qoff[qbase + c] = qpos;
      for (int32_t ord = 0;; ++ord) { /* orders are 0..k-1 per CTA (the checker proved it) */
        int32_t found = -1;
        for (int32_t i = 0; i < p->n_items && found < 0; ++i)
          if (p->items[i].launch == l && p->items[i].cta == c && p->items[i].order == ord)
            found = i;
        if (found < 0) break;
        queue[qpos++] = local[found];
      }
    }
    qoff[qbase + pc] = qpos;
    qbase += pc + 1;
  }
  return qpos;
}

void av__plan_seg_records(const av_plan_t *p, const av__node_kv_t *kv, int32_t *segs) {
  for (int32_t s = 0; s < p->n_segments; ++s) {
    const int32_t u = p->segments[s].node, shift = kv->shift ? kv->shift[u] : 0;
    segs[s * 4] = u;
    segs[s * 4 + 1] = (int32_t)p->segments[s].begin + shift;
    segs[s * 4 + 2] = (int32_t)p->segments[s].end + shift;
    segs[s * 4 + 3] = kv->block_off[u];
  }
}

int32_t av__plan_bind(const av_plan_t *p, const av__plan_tables_t *t, const int32_t *first,
                      int32_t pos, av_kern_launch_t *kl) {
  int32_t qbase = 0, ctas = 0;
  for (int32_t l = 0; l < p->n_launches; ++l) {
    const av_launch_t *la = &p->launches[l];
    av_kern_launch_t *k = &kl[l];
    k->items = t->items + (size_t)first[l] * AV_KERN_ITEM_INTS;
    k->n_items = (l + 1 < p->n_launches ? first[l + 1] : pos) - first[l];
    k->queries = t->queries;
    k->segs = t->segs;
    k->persistent_ctas = la->persistent_ctas;
    k->queue_off = t->qoff + qbase;
    k->queue = t->queue;
    qbase += la->persistent_ctas + 1;
    ctas += la->persistent_ctas > 0 ? la->persistent_ctas : k->n_items;
  }
  return ctas;
}

/* Streams: one per distinct plan stream id (first use order), each with its done and start
 * events, and the run's two bracketing events. Every launch is issued while the L2 flush
 * before the run still holds the streams back, so they all become ready together and the
 * GPU picks among them; the streams' priorities fall in first-use order, so CTAs of an
 * earlier launch waiting for room go ahead of a later launch's, as in the simulator (oldest
 * launch first). Which launch starts first they do not fix (docs/kernels.md#launch-models). */
static int create_streams(const av_plan_t *p, av__plan_dev_t *d, av_error_t *err) {
  int rc = AV_OK;
  int32_t *ids = calloc((size_t)p->n_launches + 1, sizeof *ids);
  if (!ids) return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  for (int32_t l = 0; l < p->n_launches; ++l) {
    int s = 0;
    while (s < d->n_streams && ids[s] != p->launches[l].stream) ++s;
    if (s == d->n_streams) ids[d->n_streams++] = p->launches[l].stream;
    d->launch_stream[l] = s;
  }
  free(ids);
  for (int s = 0; s < d->n_streams; ++s) {
    AV_K(av_kern_stream_create(&d->streams[s], s));
    AV_K(av_kern_event_create(&d->done_ev[s]));
  }
  d->ev_starts = calloc((size_t)d->n_streams + 1, sizeof *d->ev_starts);
  if (!d->ev_starts) return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  for (int s = 0; s < d->n_streams; ++s) AV_K(av_kern_event_create(&d->ev_starts[s]));
  AV_K(av_kern_event_create(&d->ev_pre));
  AV_K(av_kern_event_create(&d->ev_end));
  AV_K(av_kern_event_create(&d->ev_join));
  d->launch_model = p->launch_model;
done:
  return rc;
}

/* Per-launch item tables, persistent queues (by CTA, then order), merge lists, streams. */
int av__plan_upload(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                    av_error_t *err) {
  int rc = AV_OK;
  const int hq = b->w->heads.hq, dim = b->w->heads.head_dim;
  int32_t *items = malloc(((size_t)p->n_items + 1) * AV_KERN_ITEM_INTS * sizeof *items);
  int32_t *segs = malloc(((size_t)p->n_segments + 1) * 4 * sizeof *segs);
  int32_t *local = malloc(((size_t)p->n_items + 1) * sizeof *local);
  int32_t *first = calloc((size_t)p->n_launches + 1, sizeof *first);
  int32_t *qoff = NULL, *queue = malloc(((size_t)p->n_items + 1) * sizeof *queue);
  int32_t total_ctas = 0;
  for (int32_t l = 0; l < p->n_launches; ++l)
    total_ctas += p->launches[l].persistent_ctas + 1;
  qoff = calloc((size_t)total_ctas + 1, sizeof *qoff);
  d->n_launches = p->n_launches;
  d->kl = calloc((size_t)p->n_launches + 1, sizeof *d->kl);
  d->launch_stream = calloc((size_t)p->n_launches + 1, sizeof *d->launch_stream);
  d->streams = calloc((size_t)p->n_launches + 1, sizeof *d->streams);
  d->done_ev = calloc((size_t)p->n_launches + 1, sizeof *d->done_ev);
  if (!items || !segs || !local || !first || !qoff || !queue || !d->kl ||
      !d->launch_stream || !d->streams || !d->done_ev) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
    goto done;
  }
  const av__node_kv_t kv = {.block_off = b->host.node_block_off, .shift = NULL};
  const int32_t pos = av__plan_item_records(p, &kv, items, first, local);
  const int32_t qpos = av__plan_queue_records(p, local, qoff, queue);
  av__plan_seg_records(p, &kv, segs);
  AV_K(av_upload_i32(&d->items, items, (size_t)pos * AV_KERN_ITEM_INTS));
  AV_K(av_upload_i32(&d->queries, p->item_queries, (size_t)p->n_item_queries));
  AV_K(av_upload_i32(&d->segs, segs, (size_t)p->n_segments * 4));
  AV_K(av_upload_i32(&d->qoff, qoff, (size_t)total_ctas));
  AV_K(av_upload_i32(&d->queue, queue, (size_t)qpos));
  AV_K(av_upload_i32(&d->moff, p->merge_offsets, (size_t)p->n_requests + 1));
  AV_K(av_upload_i32(&d->mslots, p->merge_slots,
                     (size_t)p->merge_offsets[p->n_requests]));
  AV_K(av_kern_malloc((void **)&d->part_o, (size_t)p->n_slots * hq * dim * sizeof(float)));
  AV_K(av_kern_malloc((void **)&d->part_lse, (size_t)p->n_slots * hq * sizeof(float)));
  AV_K(av_kern_malloc((void **)&d->trace,
                      (size_t)(p->n_items * b->w->heads.hkv + av__exec_merge_ctas(p)) *
                          sizeof(av_kern_trace_rec_t)));
  const av__plan_tables_t t = {d->items, d->queries, d->segs, d->qoff, d->queue};
  d->n_items = p->n_items;
  d->ctas = av__plan_bind(p, &t, first, pos, d->kl);
  rc = create_streams(p, d, err);
done:
  free(items);
  free(segs);
  free(local);
  free(first);
  free(qoff);
  free(queue);
  return rc;
}

/* The kernels' view of the batch and the plan's partial states (trace records when asked). */
static av_kern_batch_t av_kbatch(const av_exec_batch_t *b, const av__plan_dev_t *d,
                                 int trace) {
  av_kern_batch_t k = {
      .q = b->q, .k = b->k, .v = b->v, .node_block_off = b->off, .block_ids = b->blocks,
      .out = b->out, .part_o = d->part_o, .part_lse = d->part_lse, .hq = b->host.hq,
      .hkv = b->host.hkv, .head_dim = b->host.d, .dtype = (int)b->host.dtype,
      .block_size = b->host.bs, .scale = (float)(1.0 / sqrt((double)b->host.d)),
      .trace = trace ? d->trace : NULL,
      .merge_trace = trace ? d->trace + (size_t)d->n_items * b->host.hkv : NULL,
      .kv_maps = b->kv_maps, .kv_map_rows = b->kv_map_rows};
  av_kern_batch_hnd(&k);
  return k;
}

/* Every plan stream waits for the main stream's work (flush, poisoning) and then records its
 * own start event, so no cross-stream wait falls inside the timed span at the start; the
 * stream of the last launch (the tail) waits for the others' ends, runs the merge and
 * records the end; the main stream waits for the tail. Captured, the same calls make the
 * graph: the waits become its edges, the start and end events timed nodes. */
static int issue_run(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                     const av_kern_batch_t *kbp, av_error_t *err) {
  int rc = AV_OK;
  const av_kern_batch_t kb = *kbp;
  const int tail = p->n_launches > 0 ? d->launch_stream[p->n_launches - 1] : -1;
  void *ts = tail >= 0 ? d->streams[tail] : b->main;
  AV_K(av_kern_event_record(d->ev_pre, b->main));
  for (int s = 0; s < d->n_streams; ++s) {
    AV_K(av_kern_stream_wait(d->streams[s], d->ev_pre));
    AV_K(av_kern_event_record_timed(d->ev_starts[s], d->streams[s]));
  }
  for (int32_t l = 0; l < p->n_launches; ++l)
    AV_K(av_kern_attn_launch(d->var[l], &kb, &d->kl[l], d->streams[d->launch_stream[l]]));
  for (int s = 0; s < d->n_streams; ++s) {
    if (s == tail) continue;
    AV_K(av_kern_event_record(d->done_ev[s], d->streams[s]));
    AV_K(av_kern_stream_wait(ts, d->done_ev[s]));
  }
  if (p->n_slots > 0) AV_K(av_kern_merge_launch(&kb, p->n_requests, d->moff, d->mslots, ts));
  AV_K(av_kern_event_record_timed(d->ev_end, ts));
  AV_K(av_kern_event_record(d->ev_join, ts));
  AV_K(av_kern_stream_wait(b->main, d->ev_join));
done:
  return rc;
}

/* The plan's run captured once from the main stream (per trace setting: the kernels' trace
 * pointer differs), then replayed by one graph launch each time. A failed capture is ended,
 * so the stream stays usable, and keeps no graph. */
static int graph_run(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                     const av_kern_batch_t *kb, int trace, av_error_t *err) {
  void **g = &d->graph[trace ? 1 : 0];
  if (!*g) {
    if (av_kern_capture_begin(b->main)) return av__exec_cuda_fail(err);
    const int rc = issue_run(b, p, d, kb, err);
    void *exec = NULL;
    const int end = av_kern_capture_end(b->main, &exec);
    if (rc) {
      av_kern_graph_destroy(exec);
      return rc;
    }
    if (end) return av__exec_cuda_fail(err);
    *g = exec;
  }
  return av_kern_graph_launch(*g, b->main) ? av__exec_cuda_fail(err) : AV_OK;
}

int av__exec_run_once(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                      int trace, av_error_t *err) {
  av_kern_batch_t kb = av_kbatch(b, d, trace);
  /* the pdl launch model: the merge of a one-stream plan follows its stream's last launch
   * as a programmatic dependent (docs/kernels.md#launch-models) */
  kb.merge_pdl = d->launch_model == AV_LAUNCH_PDL && d->n_streams == 1;
  return d->launch_model == AV_LAUNCH_GRAPH ? graph_run(b, p, d, &kb, trace, err)
                                            : issue_run(b, p, d, &kb, err);
}

int av__exec_elapsed_us(const av__plan_dev_t *d, double *us) {
  *us = 0;
  for (int s = 0; s < d->n_streams; ++s) {
    float ms = 0;
    int r = av_kern_event_elapsed_ms(&ms, d->ev_starts[s], d->ev_end);
    if (r) return r;
    if (ms * 1e3 > *us) *us = ms * 1e3;
  }
  return 0;
}

#else
typedef int av__exec_plan_needs_cuda; /* an empty translation unit is not ISO C */
#endif /* AV_HAVE_CUDA */
