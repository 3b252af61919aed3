/* The executor's device-side internals shared by executor/executor.c (batches,
 * verification, traces, timing) and executor/exec_plan.c (a plan on the device: checked,
 * uploaded, run once). CUDA builds only; not a public API. */
#ifndef AV_EXEC_DEVICE_H
#define AV_EXEC_DEVICE_H

#include <stdint.h>

#include "kernels/kernels.h"
#include "executor/exec_internal.h"
#include "executor/executor.h"

#define AV_SRC "executor"

/* AV_ERR_CUDA with the kernel layer's last failure. */
int av__exec_cuda_fail(av_error_t *err);
/* In a function with `int rc` and `av_error_t *err`: on a failed kernel-layer call, records
 * it and jumps to `done`. */
#define AV_K(call)                            \
  do {                                        \
    if ((call) != 0) {                        \
      rc = av__exec_cuda_fail(err);           \
      goto done;                              \
    }                                         \
  } while (0)

struct av_exec_batch {
  av_workload_t *w;
  av_exec_host_t host;
  av_kern_device_t dev;
  void *q, *k, *v, *off, *blocks, *out;
  void *flush;
  void *kv_maps;   /* TMA maps of K and V (sm_90), or NULL: av_kern_kv_maps */
  int kv_map_rows;
  size_t flush_bytes;
  void *main;
};

/* A plan's device state: per-launch item tables and queues, streams and events. */
typedef struct av__plan_dev {
  int n_launches, n_streams;
  const av_kern_variant_t **var;
  av_kern_launch_t *kl;
  int *launch_stream;          /* index into streams */
  void **streams, **done_ev;
  void *ev_pre, *ev_end, *ev_join;
  av_launch_model_t launch_model;
  void *graph[2];              /* AV_LAUNCH_GRAPH: the captured run, untraced and traced */
  void **ev_starts;            /* one per stream: a run starts when its first stream does */
  void *items, *queries, *segs, *qoff, *queue, *moff, *mslots;
  float *part_o, *part_lse;
  av_kern_trace_rec_t *trace;   /* items x hkv records, then one per merge CTA */
  int32_t n_items, ctas;
} av__plan_dev_t;

/* Where each node's KV lives in the block table the kernels read: node u's tokens start at
 * token shift[u] (NULL: 0) of block block_ids[block_off[u]] and run on through the blocks
 * after it in the table. The executor's nodes start on a block; a caller's may start inside
 * one (a request that ended part-way into a block its successor shares). */
typedef struct av__node_kv {
  const int32_t *block_off, *shift;
} av__node_kv_t;
/* Device addresses of a plan's uploaded tables. */
typedef struct av__plan_tables {
  const int32_t *items, *queries, *segs, *qoff, *queue;
} av__plan_tables_t;

/* Each launch's compiled variant into var (n_launches entries), or the error naming the
 * launch whose tile has none (or copies by TMA where `tma` is 0). */
int av__plan_variants(const av_plan_t *p, const av_heads_t *h, int tma,
                      const av_kern_variant_t **var, av_error_t *err);
/* Items grouped by launch, keeping plan order inside each launch, as the kernels' records
 * (AV_KERN_ITEM_INTS each, kernels/kernels.h); first[l] is launch l's first record and
 * local[i] item i's index within its launch. Returns the records written. */
int32_t av__plan_item_records(const av_plan_t *p, const av__node_kv_t *kv, int32_t *items,
                              int32_t *first, int32_t *local);
/* Persistent queues: CTA c's items (their local indices) by their order; qoff holds each
 * persistent launch's pc + 1 queue offsets in turn. Returns the queue entries written. */
int32_t av__plan_queue_records(const av_plan_t *p, const int32_t *local, int32_t *qoff,
                               int32_t *queue);
/* The segments as the kernels read them: node, begin, end (shifted by the node's shift),
 * the node's block-table offset. */
void av__plan_seg_records(const av_plan_t *p, const av__node_kv_t *kv, int32_t *segs);
/* Each kernel launch's view of the uploaded tables t: its records (from first[l]; pos in
 * all) and its queues. Returns the CTAs the launches run per KV head. */
int32_t av__plan_bind(const av_plan_t *p, const av__plan_tables_t *t, const int32_t *first,
                      int32_t pos, av_kern_launch_t *kl);

/* Merge CTAs the merge launch runs (0 when the plan has no partial states). */
int64_t av__exec_merge_ctas(const av_plan_t *p);
/* Everything that can be wrong with the plan for batch b, found before any allocation
 * (fills d->var). */
int av__plan_validate(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                      av_error_t *err);
/* Uploads the plan's metadata, allocates its partial states and trace records, creates its
 * streams and events. */
int av__plan_upload(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                    av_error_t *err);
/* Frees what validate and upload made; d is zeroed. */
void av__plan_dev_free(av__plan_dev_t *d);
/* One execution of the plan (each plan stream's start event to the tail stream's end event,
 * av__exec_elapsed_us); with trace, per-CTA records. */
int av__exec_run_once(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                      int trace, av_error_t *err);

/* The last run's time: from its earliest stream start to its end. */
int av__exec_elapsed_us(const av__plan_dev_t *d, double *us);

#endif
