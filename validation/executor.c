/* GPU executor (validation/executor.h): uploads a batch's paged KV cache once, then runs plans
 * on it through the kernels' C launchers: one CUDA stream per plan stream, the merge after all
 * of them, every CUDA call checked. Without CUDA every entry point says so. */
#include "validation/executor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validation/exec_internal.h"

#ifdef AV_HAVE_CUDA
#include "kernels/kernels.h"
#endif

void av_exec_opts_default(av_exec_opts_t *o) {
  o->warmup = 3;
  o->repeats = 20;
  o->verify = 1;
  o->trace = 0;
  o->flush_l2 = AV_FLUSH_READ;
}

int av_exec_flush_parse(const char *s, int *mode) {
  static const char *const names[] = {"none", "write", "read"};
  for (int i = 0; i < 3; ++i)
    if (s && strcmp(s, names[i]) == 0) {
      *mode = i;
      return 0;
    }
  return -1;
}

void av_exec_result_free(av_exec_result_t *r) {
  if (!r) return;
  if (r->trace) json_decref(r->trace);
  r->trace = NULL;
}

#ifndef AV_HAVE_CUDA

int av_exec_available(av_error_t *err) {
  return av_error_set(err, AV_ERR_NODEVICE, "executor", NULL,
                      "built without CUDA: rebuild with nvcc available (AV_CUDA=ON) to run "
                      "plans on a GPU");
}
av_exec_batch_t *av_exec_batch_create(const av_workload_t *w, uint64_t seed, int max_check,
                                      av_error_t *err) {
  (void)w, (void)seed, (void)max_check;
  av_exec_available(err);
  return NULL;
}
void av_exec_batch_destroy(av_exec_batch_t *b) { (void)b; }
const char *av_exec_batch_gpu(const av_exec_batch_t *b) { (void)b; return ""; }
int av_exec_batch_run(av_exec_batch_t *b, const av_plan_t *p, const av_exec_opts_t *o,
                      av_exec_result_t *out, av_error_t *err) {
  (void)b, (void)p, (void)o, (void)out;
  return av_exec_available(err);
}
int av_exec_run(const av_plan_t *p, const av_workload_t *w, const av_exec_opts_t *o,
                av_exec_result_t *out, av_error_t *err) {
  (void)p, (void)w, (void)o, (void)out;
  return av_exec_available(err);
}
int av_exec_copy_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err) {
  (void)bytes, (void)reps, (void)GBps;
  return av_exec_available(err);
}

#else /* AV_HAVE_CUDA */

#define AV_SRC "executor"

static int av_cuda_fail(av_error_t *err) {
  return av_error_set(err, AV_ERR_CUDA, AV_SRC, NULL, "%s", av_kern_last_error());
}
#define AV_K(call)                            \
  do {                                        \
    if ((call) != 0) {                        \
      rc = av_cuda_fail(err);                 \
      goto done;                              \
    }                                         \
  } while (0)

int av_exec_available(av_error_t *err) {
  int n = 0;
  if (av_kern_device_count(&n) != 0) return av_cuda_fail(err);
  if (n == 0)
    return av_error_set(err, AV_ERR_NODEVICE, AV_SRC, NULL,
                        "no CUDA device: `anvil exec` needs a GPU (simulate with `anvil run`)");
  return AV_OK;
}

struct av_exec_batch {
  av_workload_t *w;
  av_exec_host_t host;
  av_kern_device_t dev;
  void *q, *k, *v, *off, *blocks, *out;
  void *flush;
  size_t flush_bytes;
  void *main;
};

void av_exec_batch_destroy(av_exec_batch_t *b) {
  if (!b) return;
  av_kern_free(b->q);
  av_kern_free(b->k);
  av_kern_free(b->v);
  av_kern_free(b->off);
  av_kern_free(b->blocks);
  av_kern_free(b->out);
  av_kern_free(b->flush);
  av_kern_stream_destroy(b->main);
  av__exec_host_free(&b->host);
  av_workload_destroy(b->w);
  free(b);
}

const char *av_exec_batch_gpu(const av_exec_batch_t *b) { return b ? b->dev.name : ""; }

static int av_check_heads(const av_heads_t *h, av_error_t *err) {
  if (h->head_dim != 64 && h->head_dim != 128)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "heads.head_dim",
                        "head dim %d has no compiled kernel; compiled: 64, 128", h->head_dim);
  if (h->dtype != AV_DTYPE_FP16 && h->dtype != AV_DTYPE_BF16)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "heads.dtype",
                        "dtype %d has no compiled kernel; compiled: fp16, bf16", (int)h->dtype);
  if (h->hkv <= 0 || h->hq % h->hkv != 0 || h->hq / h->hkv > 64)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "heads",
                        "heads (%d, %d): the GQA group hq/hkv must be a whole number <= 64",
                        h->hq, h->hkv);
  return AV_OK;
}

av_exec_batch_t *av_exec_batch_create(const av_workload_t *w, uint64_t seed, int max_check,
                                      av_error_t *err) {
  if (av_check_heads(&w->heads, err) != AV_OK) return NULL;
  if (av_exec_available(err) != AV_OK) return NULL;
  av_exec_batch_t *b = calloc(1, sizeof *b);
  int rc = AV_OK;
  if (!b) {
    av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of host memory");
    return NULL;
  }
  AV_K(av_kern_device_info(0, &b->dev));
  /* The flush buffer is twice L2, so no timed run finds the previous one's data cached. */
  b->flush_bytes = (size_t)(b->dev.l2_bytes > 0 ? b->dev.l2_bytes : 64 << 20) * 2;
  const size_t need = av__exec_batch_bytes(w) + b->flush_bytes;
  if (need + ((size_t)512 << 20) > b->dev.free_bytes) {
    rc = av_error_set(err, AV_ERR_RANGE, AV_SRC, w->name,
                      "batch '%s' needs %.2f GiB of device memory (KV cache, queries, "
                      "outputs); %s has %.2f GiB free",
                      w->name, need / 1073741824.0, b->dev.name,
                      b->dev.free_bytes / 1073741824.0);
    goto done;
  }
  b->w = av_workload_clone(w);
  if (!b->w || av__exec_host_build(&b->host, w, seed) != 0 ||
      av__exec_host_reference(&b->host, w, max_check) != 0) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, w->name, "out of host memory building "
                      "the batch's KV cache");
    goto done;
  }
  const av_exec_host_t *h = &b->host;
  const size_t kv = (size_t)h->n_blocks * h->hkv * h->bs * h->d * 2;
  const size_t qb = (size_t)w->n_requests * h->hq * h->d * 2;
  AV_K(av_kern_malloc(&b->q, qb));
  AV_K(av_kern_malloc(&b->out, qb));
  AV_K(av_kern_malloc(&b->k, kv));
  AV_K(av_kern_malloc(&b->v, kv));
  AV_K(av_kern_malloc(&b->off, ((size_t)w->n_nodes + 1) * sizeof(int32_t)));
  AV_K(av_kern_malloc(&b->blocks, (size_t)h->n_blocks * sizeof(int32_t)));
  AV_K(av_kern_malloc(&b->flush, b->flush_bytes));
  AV_K(av_kern_h2d(b->q, h->q, qb));
  AV_K(av_kern_h2d(b->k, h->k, kv));
  AV_K(av_kern_h2d(b->v, h->v, kv));
  AV_K(av_kern_h2d(b->off, h->node_block_off, ((size_t)w->n_nodes + 1) * sizeof(int32_t)));
  AV_K(av_kern_h2d(b->blocks, h->block_ids, (size_t)h->n_blocks * sizeof(int32_t)));
  AV_K(av_kern_stream_create(&b->main));
done:
  if (rc != AV_OK) {
    av_exec_batch_destroy(b);
    return NULL;
  }
  return b;
}

/* A plan's device state: per-launch item tables and queues, streams and events. */
typedef struct av_plan_dev {
  int n_launches, n_streams;
  const av_kern_variant_t **var;
  av_kern_launch_t *kl;
  int *launch_stream;          /* index into streams */
  void **streams, **done_ev;
  void *ev_start, *ev_end;
  void *items, *queries, *segs, *qoff, *queue, *moff, *mslots;
  float *part_o, *part_lse;
  av_kern_trace_rec_t *trace;   /* items x hkv records, then one per merge CTA */
  int32_t n_items, ctas;
} av_plan_dev_t;

/* Merge CTAs the merge launch runs (0 when the plan has no partial states). */
static int64_t av_merge_ctas(const av_plan_t *p) {
  const int64_t rows = (int64_t)p->n_requests * p->heads.hq, m = av_kern_merge_rows_per_cta();
  return p->n_slots > 0 ? (rows + m - 1) / m : 0;
}

static void av_plan_dev_free(av_plan_dev_t *d) {
  for (int i = 0; i < d->n_streams; ++i) {
    if (d->streams) av_kern_stream_destroy(d->streams[i]);
    if (d->done_ev) av_kern_event_destroy(d->done_ev[i]);
  }
  av_kern_event_destroy(d->ev_start);
  av_kern_event_destroy(d->ev_end);
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

/* Everything that can be wrong with the plan is found here, before any allocation. */
static int av_plan_validate(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
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
  for (int32_t l = 0; l < p->n_launches; ++l) {
    const av_tile_t *t = &p->launches[l].tile;
    d->var[l] = av_kern_find((int)t->kind, t->m_rows, t->n_tokens, h->head_dim, (int)h->dtype);
    char path[64];
    snprintf(path, sizeof path, "launches[%d].tile", l);
    if (!d->var[l] || t->kind == AV_KERNEL_MERGE)
      return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, path,
                          "no compiled %s kernel with m %d, n %d for head dim %d, %s "
                          "(kernels/variants.json lists the compiled tiles)",
                          av_kernel_kind_name(t->kind), t->m_rows, t->n_tokens, h->head_dim,
                          av_dtype_name(h->dtype));
    if ((t->kind == AV_KERNEL_PERSISTENT) != (p->launches[l].persistent_ctas > 0))
      return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, path,
                          "a persistent grid needs the persistent kernel kind and vice versa");
  }
  const size_t part = (size_t)p->n_slots * h->hq * (h->head_dim + 1) * sizeof(float);
  const size_t meta = ((size_t)p->n_items * (AV_KERN_ITEM_INTS + 2) + p->n_item_queries +
                       (size_t)p->n_segments * 4 + 2 * (size_t)p->n_requests + p->n_slots) *
                          sizeof(int32_t) +
                      (size_t)(p->n_items * h->hkv + av_merge_ctas(p)) *
                          sizeof(av_kern_trace_rec_t);
  av_kern_device_t dev;
  if (av_kern_device_info(0, &dev) != 0) return av_cuda_fail(err);
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

/* Per-launch item tables (AV_KERN_ITEM_INTS each, launch-major in plan order), persistent
 * queues (by CTA, then order), merge lists, streams. */
static int av_plan_upload(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
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
  /* Items grouped by launch, keeping plan order inside each launch. */
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
      r[AV_KI_BOFF0] = b->host.node_block_off[s0->node];
      r[AV_KI_BEGIN0] = (int32_t)s0->begin;
      r[AV_KI_END0] = (int32_t)s0->end;
      r[AV_KI_END0 + 1] = 0;
      local[i] = pos - first[l];
      ++pos;
    }
  }
  /* Persistent queues: CTA c's items by their order. */
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
  for (int32_t s = 0; s < p->n_segments; ++s) {
    segs[s * 4] = p->segments[s].node;
    segs[s * 4 + 1] = (int32_t)p->segments[s].begin;
    segs[s * 4 + 2] = (int32_t)p->segments[s].end;
    segs[s * 4 + 3] = b->host.node_block_off[p->segments[s].node];
  }
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
                      (size_t)(p->n_items * b->w->heads.hkv + av_merge_ctas(p)) *
                          sizeof(av_kern_trace_rec_t)));
  qbase = 0;
  d->ctas = 0;
  d->n_items = p->n_items;
  for (int32_t l = 0; l < p->n_launches; ++l) {
    const av_launch_t *la = &p->launches[l];
    av_kern_launch_t *k = &d->kl[l];
    k->items = (const int32_t *)d->items + (size_t)first[l] * AV_KERN_ITEM_INTS;
    k->n_items = (l + 1 < p->n_launches ? first[l + 1] : pos) - first[l];
    k->queries = d->queries;
    k->segs = d->segs;
    k->persistent_ctas = la->persistent_ctas;
    k->queue_off = (const int32_t *)d->qoff + qbase;
    k->queue = d->queue;
    qbase += la->persistent_ctas + 1;
    d->ctas += la->persistent_ctas > 0 ? la->persistent_ctas : k->n_items;
  }
  /* Streams: one per distinct plan stream id (first use order). */
  int32_t *ids = calloc((size_t)p->n_launches + 1, sizeof *ids);
  if (!ids) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
    goto done;
  }
  for (int32_t l = 0; l < p->n_launches; ++l) {
    int s = 0;
    while (s < d->n_streams && ids[s] != p->launches[l].stream) ++s;
    if (s == d->n_streams) ids[d->n_streams++] = p->launches[l].stream;
    d->launch_stream[l] = s;
  }
  free(ids);
  for (int s = 0; s < d->n_streams; ++s) {
    AV_K(av_kern_stream_create(&d->streams[s]));
    AV_K(av_kern_event_create(&d->done_ev[s]));
  }
  AV_K(av_kern_event_create(&d->ev_start));
  AV_K(av_kern_event_create(&d->ev_end));
done:
  free(items);
  free(segs);
  free(local);
  free(first);
  free(qoff);
  free(queue);
  return rc;
}

static av_kern_batch_t av_kbatch(const av_exec_batch_t *b, const av_plan_dev_t *d, int trace) {
  av_kern_batch_t k = {
      .q = b->q, .k = b->k, .v = b->v, .node_block_off = b->off, .block_ids = b->blocks,
      .out = b->out, .part_o = d->part_o, .part_lse = d->part_lse, .hq = b->host.hq,
      .hkv = b->host.hkv, .head_dim = b->host.d, .dtype = (int)b->host.dtype,
      .block_size = b->host.bs, .scale = (float)(1.0 / sqrt((double)b->host.d)),
      .trace = trace ? d->trace : NULL,
      .merge_trace = trace ? d->trace + (size_t)d->n_items * b->host.hkv : NULL};
  return k;
}

/* One execution of the plan between ev_start and ev_end on the batch's main stream. */
static int av_run_once(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
                       int trace, av_error_t *err) {
  int rc = AV_OK;
  const av_kern_batch_t kb = av_kbatch(b, d, trace);
  AV_K(av_kern_event_record(d->ev_start, b->main));
  for (int s = 0; s < d->n_streams; ++s) AV_K(av_kern_stream_wait(d->streams[s], d->ev_start));
  for (int32_t l = 0; l < p->n_launches; ++l)
    AV_K(av_kern_attn_launch(d->var[l], &kb, &d->kl[l], d->streams[d->launch_stream[l]]));
  for (int s = 0; s < d->n_streams; ++s) {
    AV_K(av_kern_event_record(d->done_ev[s], d->streams[s]));
    AV_K(av_kern_stream_wait(b->main, d->done_ev[s]));
  }
  if (p->n_slots > 0)
    AV_K(av_kern_merge_launch(&kb, p->n_requests, d->moff, d->mslots, b->main));
  AV_K(av_kern_event_record(d->ev_end, b->main));
done:
  return rc;
}

static int av_is_nan16(uint16_t x, av_dtype_t t) {
  return t == AV_DTYPE_BF16 ? ((x & 0x7f80) == 0x7f80 && (x & 0x7f))
                            : ((x & 0x7c00) == 0x7c00 && (x & 0x3ff));
}

/* Poisons outputs and partial states with NaN, runs once, reads the output back. */
static int av_run_poisoned(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
                           uint16_t *host_out, av_error_t *err) {
  int rc = AV_OK;
  const size_t n = (size_t)b->w->n_requests * b->host.hq * b->host.d;
  AV_K(av_kern_fill_nan(b->out, n, 2, b->main));
  AV_K(av_kern_fill_nan(d->part_o, (size_t)p->n_slots * b->host.hq * b->host.d, 4, b->main));
  AV_K(av_kern_fill_nan(d->part_lse, (size_t)p->n_slots * b->host.hq, 4, b->main));
  rc = av_run_once(b, p, d, 0, err);
  if (rc != AV_OK) return rc;
  AV_K(av_kern_sync());
  AV_K(av_kern_d2h(host_out, b->out, n * 2));
done:
  return rc;
}

static int av_verify(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
                     av_exec_result_t *out, av_error_t *err) {
  const av_exec_host_t *h = &b->host;
  const size_t n = (size_t)b->w->n_requests * h->hq * h->d;
  uint16_t *o1 = malloc(n * 2 + 2), *o2 = malloc(n * 2 + 2);
  int rc = AV_OK;
  if (!o1 || !o2) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
    goto done;
  }
  rc = av_run_poisoned(b, p, d, o1, err);
  if (rc == AV_OK) rc = av_run_poisoned(b, p, d, o2, err);
  if (rc != AV_OK) goto done;
  out->unwritten = 0;
  for (size_t i = 0; i < n; ++i) out->unwritten += av_is_nan16(o1[i], h->dtype);
  out->deterministic = memcmp(o1, o2, n * 2) == 0;
  out->max_rel_err = 0;
  out->checked = h->n_check;
  for (int32_t c = 0; c < h->n_check; ++c) {
    const uint16_t *g = o1 + ((size_t)h->check_req[c] * h->hq + h->check_head[c]) * h->d;
    const double *r = h->ref + (size_t)c * h->d;
    double num = 0, den = 0;
    for (int i = 0; i < h->d; ++i) {
      const double e = av__exec_to_double(g[i], h->dtype) - r[i];
      num += e * e;
      den += r[i] * r[i];
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    if (isnan(rel)) rel = INFINITY;
    if (rel > out->max_rel_err || c == 0) {
      out->max_rel_err = rel;
      out->worst_request = h->check_req[c];
      out->worst_head = h->check_head[c];
    }
  }
  out->verified = 1;
done:
  free(o1);
  free(o2);
  return rc;
}

/* One record of the trace: item -1 marks a merge CTA; its head is the KV head of its first
 * (request, query head) row. */
static int av_trace_rec(json_t *ctas, const av_kern_trace_rec_t *t, int64_t item, int head,
                        unsigned long long t0, av_error_t *err) {
  json_t *c = json_pack("{s:I, s:i, s:i, s:f, s:f}", "item", (json_int_t)item, "head", head,
                        "sm", (int)t->smid, "start_us", (double)(t->start_ns - t0) / 1e3,
                        "end_us", (double)(t->end_ns - t0) / 1e3);
  if (!c || json_array_append_new(ctas, c) != 0)
    return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  return AV_OK;
}

/* Evicts L2 before a measured run (av_exec_opts_t.flush_l2); 0 or a kernel-layer failure. */
static int av_flush(const av_exec_batch_t *b, const av_exec_opts_t *o, int byte) {
  switch (o->flush_l2) {
    case AV_FLUSH_WRITE: return av_kern_memset(b->flush, byte, b->flush_bytes, b->main);
    case AV_FLUSH_READ: return av_kern_read_all(b->flush, b->flush_bytes, b->main);
    default: return 0;
  }
}

static int av_trace_json(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
                         const av_exec_opts_t *o, av_exec_result_t *out, av_error_t *err) {
  /* Like the timed runs: the traced run reads KV from HBM, not from the verify run's L2. */
  int rc = av_flush(b, o, 0x5a) != 0 ? av_cuda_fail(err) : AV_OK;
  if (rc == AV_OK) rc = av_run_once(b, p, d, 1, err);
  const size_t n_att = (size_t)p->n_items * b->host.hkv, n = n_att + (size_t)av_merge_ctas(p);
  const int64_t rows_per_cta = av_kern_merge_rows_per_cta();
  const int group = b->host.hq / b->host.hkv;
  av_kern_trace_rec_t *t = malloc(n * sizeof *t + 1);
  json_t *ctas = json_array(), *root = json_object();
  if (!t || !ctas || !root) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
    goto done;
  }
  if (rc != AV_OK) goto done;
  AV_K(av_kern_sync());
  AV_K(av_kern_d2h(t, d->trace, n * sizeof *t));
  unsigned long long t0 = ~0ull, t1 = 0;
  for (size_t i = 0; i < n; ++i) {
    if (t[i].start_ns < t0) t0 = t[i].start_ns;
    if (t[i].end_ns > t1) t1 = t[i].end_ns;
  }
  for (size_t i = 0; i < n && rc == AV_OK; ++i) {
    if (i < n_att) {
      rc = av_trace_rec(ctas, &t[i], (int64_t)(i / b->host.hkv), (int)(i % b->host.hkv), t0, err);
    } else {
      const int64_t row = (int64_t)(i - n_att) * rows_per_cta;
      rc = av_trace_rec(ctas, &t[i], -1, (int)(row % b->host.hq) / group, t0, err);
    }
  }
  if (rc != AV_OK) goto done;
  json_object_set_new(root, "gpu", json_string(b->dev.name));
  json_object_set_new(root, "makespan_us", json_real(n ? (double)(t1 - t0) / 1e3 : 0.0));
  json_object_set(root, "ctas", ctas);
  out->trace = root;
  root = NULL;
done:
  free(t);
  json_decref(ctas);
  json_decref(root);
  return rc;
}

static int av_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int av_time(const av_exec_batch_t *b, const av_plan_t *p, av_plan_dev_t *d,
                   const av_exec_opts_t *o, av_exec_result_t *out, av_error_t *err) {
  const int reps = o->repeats > 0 ? o->repeats : 1;
  double *us = malloc((size_t)reps * sizeof *us);
  int rc = AV_OK;
  if (!us) return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  for (int i = -(o->warmup > 0 ? o->warmup : 0); i < reps; ++i) {
    /* Untimed: overwrite L2 with another buffer so this run reads KV from HBM. */
    AV_K(av_flush(b, o, i & 0xff));
    rc = av_run_once(b, p, d, 0, err);
    if (rc != AV_OK) goto done;
    float ms = 0;
    AV_K(av_kern_event_elapsed_ms(&ms, d->ev_start, d->ev_end));
    if (i >= 0) us[i] = ms * 1e3;
  }
  qsort(us, (size_t)reps, sizeof *us, av_cmp_double);
  out->median_us = reps % 2 ? us[reps / 2] : 0.5 * (us[reps / 2 - 1] + us[reps / 2]);
  out->min_us = us[0];
  out->max_us = us[reps - 1];
  out->repeats = reps;
done:
  free(us);
  return rc;
}

int av_exec_batch_run(av_exec_batch_t *b, const av_plan_t *p, const av_exec_opts_t *opts,
                      av_exec_result_t *out, av_error_t *err) {
  av_exec_opts_t o;
  if (opts)
    o = *opts;
  else
    av_exec_opts_default(&o);
  memset(out, 0, sizeof *out);
  snprintf(out->gpu, sizeof out->gpu, "%.127s", b->dev.name);
  av_workload_stats_t ws;
  av_workload_stats(b->w, &ws);
  out->unique_kv_bytes = ws.unique_kv_bytes;
  av_plan_dev_t d;
  memset(&d, 0, sizeof d);
  int rc = av_plan_validate(b, p, &d, err);
  if (rc == AV_OK) rc = av_plan_upload(b, p, &d, err);
  out->ctas = d.ctas;
  if (rc == AV_OK && o.verify) rc = av_verify(b, p, &d, out, err);
  if (rc == AV_OK && o.trace) rc = av_trace_json(b, p, &d, &o, out, err);
  if (rc == AV_OK && o.repeats > 0) rc = av_time(b, p, &d, &o, out, err);
  if (rc == AV_OK && av_kern_sync() != 0) rc = av_cuda_fail(err);
  av_plan_dev_free(&d);
  if (rc != AV_OK) av_exec_result_free(out);
  return rc;
}

int av_exec_run(const av_plan_t *p, const av_workload_t *w, const av_exec_opts_t *opts,
                av_exec_result_t *out, av_error_t *err) {
  av_exec_batch_t *b = av_exec_batch_create(w, 1, 0, err);
  if (!b) return err && err->code ? err->code : AV_ERR_INTERNAL;
  int rc = av_exec_batch_run(b, p, opts, out, err);
  av_exec_batch_destroy(b);
  return rc;
}

int av_exec_copy_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err) {
  int rc = av_exec_available(err);
  if (rc != AV_OK) return rc;
  if (av_kern_copy_bandwidth(bytes, reps, GBps) != 0) return av_cuda_fail(err);
  return AV_OK;
}

#endif /* AV_HAVE_CUDA */
