/* Running plans on the caller's tensors (docs/serving.md): a serving engine's queries and
 * paged KV cache, as DLPack tensors on its CUDA device, on its stream.
 *
 * A device plan is one device buffer (with a page-locked staging copy) sized once by
 * capacities the caller chooses; each decode step uploads its plan into it with one
 * asynchronous copy, so the plan's tables keep their device addresses from step to step and
 * a CUDA graph captured over anvil_run replays with each step's plan. The block table given
 * to the upload is the one the plan was made from (anvil_workload_from_block_table, or the
 * step's table of anvil_planner_step): its physical block ids address the caller's cache. */
#ifndef ANVIL_RUN_H
#define ANVIL_RUN_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "anvil/error.h"
#include "anvil/exec.h"
#include "anvil/plan.h"
#include "anvil/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_device_plan anvil_device_plan_t;

/* Room for requests, items, entries of the items' query lists, segments, block-table
 * entries (each KV node's blocks), partial-state slots, entries of the merge lists, launches
 * and the persistent CTAs of all launches together. */
typedef struct anvil_device_capacity {
  int32_t requests, items, item_queries, segments, blocks, slots, merge_entries, launches,
      persistent_ctas;
} anvil_device_capacity_t;

/* Byte offsets of the tables in the device buffer; the staging copy holds the same layout up
 * to tma_maps. */
typedef struct anvil_device_offsets {
  size_t items, item_queries, segments, queue_offsets, queues, merge_offsets, merge_slots,
      block_ids, tma_maps, partial_lse, partial_o, bytes;
} anvil_device_offsets_t;

/* The capacity plan p needs (a caller sizes for its largest batch, or scales this up). */
void anvil_device_capacity_of(const anvil_plan_t *p, anvil_device_capacity_t *out);
/* A device plan on the current CUDA device for plans of `heads` (NULL: the defaults) over
 * caches of `block_size` tokens per block. Caller owns; anvil_device_plan_destroy. */
int anvil_device_plan_create(const anvil_device_capacity_t *cap, const anvil_heads_t *heads,
                             int block_size, anvil_device_plan_t **out, anvil_error_t *err);
void anvil_device_plan_destroy(anvil_device_plan_t *dp);
void anvil_device_plan_offsets(const anvil_device_plan_t *dp, anvil_device_offsets_t *out);
/* The device buffer (borrowed) and the CUDA device it is on. */
void *anvil_device_plan_buffer(const anvil_device_plan_t *dp);
int anvil_device_plan_device(const anvil_device_plan_t *dp);

/* Lays plan p out in the staging copy and copies it with one asynchronous copy on `stream`
 * (a cudaStream_t; NULL: the legacy default stream). table and row_stride are the block
 * table p was made from (request r's ids in row r). A plan larger than the capacity, of other
 * heads or block size, or with a tile no compiled kernel provides is an error before
 * anything is copied. Issue the upload and the runs on one stream (or order them). */
int anvil_device_plan_upload(anvil_device_plan_t *dp, const anvil_plan_t *p,
                             const int32_t *table, int64_t row_stride, void *stream,
                             anvil_error_t *err);

/* How the runs from here on copy KV into shared memory: ANVIL_KV_COPY_TMA (the default) by
 * the tensor memory accelerator where the device (sm_90) and the cache allow it, else by
 * cp.async; ANVIL_KV_COPY_CP_ASYNC always by cp.async (a plan with m128 tiles, which copy
 * only by TMA, is then refused by anvil_run). Both give the same outputs. */
int anvil_device_plan_set_kv_copy(anvil_device_plan_t *dp, int kv_copy, anvil_error_t *err);

/* How the paged cache is laid out: told apart by its shape (block size and KV heads in
 * dims 1 and 2), or named where the two are equal. */
typedef enum { ANVIL_KV_AUTO = 0, ANVIL_KV_NHD = 1, ANVIL_KV_HND = 2 } anvil_kv_layout_t;

/* The tensors of one run, all on the device plan's CUDA device:
 *   q, out   [n_requests][hq][d], fp16 or bf16 as the plan, contiguous;
 *   k_cache, v_cache  NHD [n_blocks][block][hkv][d] or HND [n_blocks][hkv][block][d], the
 *            plan's dtype, the head dim contiguous, any other strides that are multiples of
 *            16 bytes (the same for K and V);
 *   lse      [n_requests][hq] fp32, contiguous, natural log of each row's softmax sum; or
 *            NULL. */
typedef struct anvil_tensors {
  const DLTensor *q, *k_cache, *v_cache, *out, *lse;
  int kv_layout;  /* anvil_kv_layout_t */
} anvil_tensors_t;

/* Runs the uploaded plan on t: every launch and the merge on `stream`, in plan order; the
 * partial states live in the device plan's buffer. Each tensor is checked against the plan
 * first (its dtype, shape, strides and device); a mistake names the tensor and what was
 * expected. */
int anvil_run(anvil_device_plan_t *dp, const anvil_tensors_t *t, void *stream,
              anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
