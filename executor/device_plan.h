/* A plan on the device for the caller's own tensors (include/anvil/run.h is its public face):
 * one device buffer, sized once by capacities, holding a plan's tables, its block table of
 * the caller's physical block ids, the TMA maps of the caller's cache and the partial states,
 * with a page-locked staging copy of the tables. An upload lays a plan out in the staging copy
 * and copies it with one asynchronous copy; the device addresses never change, so a CUDA
 * graph captured over a run reads each step's plan. Builds without CUDA too: creation then
 * returns AV_ERR_NODEVICE. */
#ifndef AV_DEVICE_PLAN_H
#define AV_DEVICE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/plan.h"
#include "core/workload.h"

/* What the buffer holds room for: requests, items, entries of the items' query lists,
 * segments, block-table entries (each node's blocks), partial-state slots, entries of the
 * merge lists, launches and the persistent CTAs of all launches together. */
typedef struct av_dplan_cap {
  int32_t requests, items, item_queries, segments, blocks, slots, merge_entries, launches,
      persistent_ctas;
} av_dplan_cap_t;

/* Byte offsets of the tables in the device buffer (and in its staging copy up to `maps`). */
typedef struct av_dplan_offsets {
  size_t items, queries, segs, qoff, queue, merge_off, merge_slots, block_ids;
  size_t maps;          /* two CUtensorMaps (K, V), 256 bytes */
  size_t part_lse, part_o;
  size_t bytes;         /* the whole buffer */
} av_dplan_offsets_t;

typedef struct av_dplan av_dplan_t;

/* The capacity plan p of workload w (block size bs) needs. */
void av_dplan_cap_of(const av_plan_t *p, const av_workload_t *w, av_dplan_cap_t *cap);
/* Allocates the buffer and its staging copy for plans of heads h over caches of block size
 * bs (tokens). Caller owns; av_dplan_destroy. */
av_dplan_t *av_dplan_create(const av_dplan_cap_t *cap, const av_heads_t *h, int block_size,
                            av_error_t *err);
void av_dplan_destroy(av_dplan_t *dp);
const av_dplan_offsets_t *av_dplan_offsets(const av_dplan_t *dp);
/* The device buffer (av_dplan_offsets says where each table lives) and its CUDA device. */
void *av_dplan_device(const av_dplan_t *dp);
int av_dplan_device_id(const av_dplan_t *dp);

/* Uploads plan p of workload w, whose request r's KV is row r of the caller's block table
 * (table, row_stride: int32 physical block ids, as anvil_workload_from_block_table takes it),
 * with one asynchronous copy on `stream`. A plan larger than the capacity, of other heads or
 * block size, or with a tile no compiled kernel provides is an error before anything is
 * copied. The staging copy is reused only after the previous upload's copy has run. */
int av_dplan_upload(av_dplan_t *dp, const av_plan_t *p, const av_workload_t *w,
                    const int32_t *table, int64_t row_stride, void *stream, av_error_t *err);

/* What the uploaded plan expects of the tensors a run is given. */
typedef struct av_dplan_shape {
  int32_t n_requests;       /* 0 before the first upload */
  av_heads_t heads;
  int block_size;
  int32_t max_block_id;     /* the largest physical block id the plan reads */
} av_dplan_shape_t;
void av_dplan_shape(const av_dplan_t *dp, av_dplan_shape_t *out);

/* The caller's device tensors of one run (shapes checked by the caller against
 * av_dplan_shape): q, out [n_requests][hq][d] contiguous; k, v paged with the element
 * strides of a block, a KV head and a token (kernels/kernels.h), n_blocks blocks; lse
 * [n_requests][hq] fp32 or NULL. */
typedef struct av_run_tensors {
  const void *q, *k, *v;
  void *out;
  float *lse;
  int64_t kv_stride_block, kv_stride_head, kv_stride_token;
  int64_t n_blocks;
  int device;           /* the CUDA device the tensors are on */
} av_run_tensors_t;

/* How the runs from here on copy KV: AV_KV_COPY_TMA (the default) maps the caller's cache
 * for TMA where the hardware and the cache allow it, AV_KV_COPY_CP_ASYNC copies by cp.async
 * (a plan with m128 tiles, which copy only by TMA, is then refused by the run). */
int av_dplan_set_kv_copy(av_dplan_t *dp, av_kv_copy_t c, av_error_t *err);

/* Runs the uploaded plan on t, every launch and the merge on `stream` in plan order. */
int av_dplan_run(av_dplan_t *dp, const av_run_tensors_t *t, void *stream, av_error_t *err);

#endif
