/* The GPU side as plain C: extern "C" launchers for the attention kernels (partial, persistent,
 * decode, merge) and thin wrappers over the CUDA runtime (memory, streams, events), so host C
 * (executor/executor.c) never includes a CUDA header. Every function returns 0 or a CUDA
 * error code; av_kern_last_error() says which call failed, where, and why. */
#ifndef AV_KERNELS_H
#define AV_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel kinds and dtypes use the numbering of core/variants.h and core/workload.h
 * (partial 0, persistent 1, decode 2, merge 3; fp16 0, bf16 1). */

/* One compiled variant. `warps` follows from (m, n): m/16 warps split the rows, the rest
 * split each KV tile's tokens (each warp needs >= 16 tokens, the mma's k). */
typedef struct av_kern_variant {
  const char *name;     /* the kernel's symbol, as the compiler's resource report names it */
  int kind, m, n, warps, head_dim, dtype;
  int threads;
  int smem_dynamic;     /* bytes the launcher requests */
} av_kern_variant_t;

/* The compiled variants (the same on every architecture). */
const av_kern_variant_t *av_kern_variants(int *n);
/* The variant of a kind, tile, head dim and dtype; for the merge (one variant per head dim
 * and dtype) m and n are ignored, so its rows per CTA live in kernels/merge.cu only. */
const av_kern_variant_t *av_kern_find(int kind, int m, int n, int head_dim, int dtype);

/* Device buffers of one batch for one launch. Layouts:
 *   q, out     [n_requests][hq][d]           (dtype)
 *   k, v       paged: n_blocks blocks of block_size tokens per KV head (dtype), element
 *              (block, head, token, dim) at block*kv_stride_block + head*kv_stride_head +
 *              token*kv_stride_token + dim: HND [n_blocks][hkv][block][d] (the executor's
 *              cache) or NHD [n_blocks][block][hkv][d] (a serving engine's, anvil_run)
 *   node_block_off [n_nodes+1], block_ids: node u's logical block j is physical block
 *              block_ids[node_block_off[u] + j]
 *   part_o     [n_slots][hq][d] fp32, part_lse [n_slots][hq] fp32 (natural log)
 *   lse        [n_requests][hq] fp32 (natural log) of the final outputs, or NULL
 *   items      [n_items][AV_KERN_ITEM_INTS]  (see below), queries [..],
 *   segs       [..][4]: node, begin, end, node_block_off[node]
 *   trace      [n_trace_items][hkv] records, or NULL
 *   merge_trace [merge CTAs] records (CTA c merges rows 4c .. 4c+3 of [n_requests][hq]),
 *              or NULL */
#define AV_KERN_ITEM_INTS 12
/* AV_KI_TRACE: the plan's item index (trace record row). REQ0: the item's first request;
 * BOFF0, BEGIN0, END0: its first segment (node as node_block_off[node], begin, end), inline
 * so a CTA reaches the block table and its queries without reading queries[] and segs[]. */
enum { AV_KI_QBEGIN = 0, AV_KI_NQ, AV_KI_SEGBEGIN, AV_KI_NSEG, AV_KI_OUTPUT, AV_KI_SLOT,
       AV_KI_TRACE, AV_KI_REQ0, AV_KI_BOFF0, AV_KI_BEGIN0, AV_KI_END0 };

typedef struct av_kern_trace_rec {
  unsigned long long start_ns, end_ns;  /* %globaltimer */
  unsigned int smid, pad;
  unsigned long long pad2;
} av_kern_trace_rec_t;

/* The fields of a batch every kernel reads (kept in one list for both structs below):
 *   scale        softmax scale, 1/sqrt(d)
 *   kv_maps      sm_90: two CUtensorMaps (K then V, 128 bytes each) in device memory over
 *                the paged cache as 4-D (d, token, head, block) with its strides, boxes of
 *                kv_map_rows tokens x 64 dims of one head and block, 128-byte swizzle
 *                (av_kern_kv_maps); the wgmma tiles then copy KV by TMA. NULL: cp.async.
 *   merge_pdl    the merge is launched as a programmatic dependent of the launch before it on
 *                its stream (sm_90 and later; the pdl launch model,
 *                docs/kernels.md#launch-models)
 *   lse          written by FINAL items and the merge when not NULL */
#define AV_KERN_BATCH_FIELDS                                \
  const void *q;                                            \
  const void *k, *v;                                        \
  const int32_t *node_block_off, *block_ids;                \
  void *out;                                                \
  float *part_o, *part_lse;                                 \
  int hq, hkv, head_dim, dtype, block_size;                 \
  float scale;                                              \
  av_kern_trace_rec_t *trace;                               \
  av_kern_trace_rec_t *merge_trace;                         \
  const void *kv_maps;                                      \
  int kv_map_rows;                                          \
  int merge_pdl;                                            \
  float *lse;

/* What the attention kernels take: the fields above and the KV cache's element strides
 * (layout above; a block's and a token's span in bytes fit 32 bits, av_kern_kv_strides_ok). */
typedef struct av_kern_batch {
  AV_KERN_BATCH_FIELDS
  int64_t kv_stride_block, kv_stride_head, kv_stride_token;
} av_kern_batch_t;

/* What the merge kernel takes: the same fields without the strides it never reads. Its
 * parameters stay 128 bytes: with the strides too, ptxas gave the merge kernel 64 registers
 * and spills on sm_90 in place of 79 and none. */
typedef struct av_kern_merge_batch {
  AV_KERN_BATCH_FIELDS
} av_kern_merge_batch_t;

/* b's KV strides for the HND layout [n_blocks][hkv][block][d] of its hkv, block size and
 * head dim (the executor's own cache). */
static inline void av_kern_batch_hnd(av_kern_batch_t *b) {
  b->kv_stride_token = b->head_dim;
  b->kv_stride_head = (int64_t)b->block_size * b->head_dim;
  b->kv_stride_block = (int64_t)b->hkv * b->block_size * b->head_dim;
}

/* 1 when strides in elements of a 16-bit cache of `block_size` tokens suit the kernels: the
 * head dim contiguous, each stride positive and a multiple of 8 elements (16-byte copies),
 * and a block's and a block's tokens' spans below 4 GiB (the loader's 32-bit offsets). */
static inline int av_kern_kv_strides_ok(int64_t block, int64_t head, int64_t token,
                                        int block_size) {
  const int64_t s[3] = {block, head, token};
  for (int i = 0; i < 3; ++i)
    if (s[i] <= 0 || s[i] % 8 != 0) return 0;
  return block * 2 < ((int64_t)1 << 32) && token * 2 * block_size < ((int64_t)1 << 32);
}

typedef struct av_kern_launch {
  const int32_t *items;    /* this launch's items (AV_KERN_ITEM_INTS each) */
  int32_t n_items;
  const int32_t *queries;  /* the plan's item_queries */
  const int32_t *segs;     /* the plan's segments: node, begin, end, 0 */
  /* persistent launches: CTA c runs items queue[queue_off[c] .. queue_off[c+1]) in order */
  int32_t persistent_ctas;
  const int32_t *queue_off, *queue;
} av_kern_launch_t;

/* Encodes the TMA maps of b's K and V (n_blocks blocks, b's strides) into *maps (device
 * memory the caller frees with av_kern_free) and the rows of one copy into *rows. Leaves
 * *maps NULL, returning 0, where TMA does not apply: not an sm_90 device, a block size that
 * is not a power of two >= 8, a head dim that is not a multiple of 64, a stride that is not a
 * multiple of 16 bytes, or no encoder in the driver. A caller that
 * wants cp.async (the KV copy "cp_async", av_exec_batch_set_kv_copy) does not call it. */
int av_kern_kv_maps(const av_kern_batch_t *b, int32_t n_blocks, void **maps, int *rows);

/* The maps av_kern_kv_maps encodes, written to `host` (256 bytes, 64-byte aligned) instead
 * of device memory; *rows 0 where TMA does not apply. */
int av_kern_kv_maps_encode(const av_kern_batch_t *b, int32_t n_blocks, void *host, int *rows);

/* Launches one plan launch on `stream` (NULL = default). The variant must exist. */
int av_kern_attn_launch(const av_kern_variant_t *v, const av_kern_batch_t *b,
                        const av_kern_launch_t *l, void *stream);
/* Rows (request, query head) each merge CTA combines. */
int av_kern_merge_rows_per_cta(void);
/* Merges partial states: request r's slots merge_slots[merge_off[r] .. merge_off[r+1]) in that
 * order into out (requests with no slots are left alone: a FINAL item wrote them). */
int av_kern_merge_launch(const av_kern_batch_t *b, int32_t n_requests,
                         const int32_t *merge_off, const int32_t *merge_slots, void *stream);

/* Fills n elements of dtype with quiet NaN (poisons outputs), or n floats with NaN. */
int av_kern_fill_nan(void *p, size_t n, int elem_bytes, void *stream);

/* --- runtime wrappers ----------------------------------------------------------- */
int av_kern_device_count(int *n);
typedef struct av_kern_device {
  char name[256];
  int sm_count, sm_arch, l2_bytes;
  size_t free_bytes, total_bytes;
  int smem_per_block_optin;
  int mem_clock_khz;     /* peak memory clock; 0 when the driver does not say */
} av_kern_device_t;
int av_kern_device_info(int dev, av_kern_device_t *out);
int av_kern_malloc(void **p, size_t bytes);
int av_kern_free(void *p);
int av_kern_h2d(void *dst, const void *src, size_t bytes);
int av_kern_d2h(void *dst, const void *src, size_t bytes);
/* An asynchronous copy on `stream`; src must stay unchanged until the copy has run. */
int av_kern_h2d_async(void *dst, const void *src, size_t bytes, void *stream);
/* Page-locked host memory (asynchronous copies read it without staging). */
int av_kern_host_alloc(void **p, size_t bytes);
int av_kern_host_free(void *p);
/* The calling thread's current device. */
int av_kern_device_current(int *dev);
int av_kern_memset(void *p, int value, size_t bytes, void *stream);
/* Reads `bytes` at p (a multiple of 16) on `stream`: the lines end up in L2 clean, so
 * whatever L2 held before is evicted without leaving write-backs for the next kernel. */
int av_kern_read_all(const void *p, size_t bytes, void *stream);
/* A non-blocking stream; rank 0 has the device's greatest priority, each further rank the
 * next lower one (down to the least); rank < 0: the least, as a plain stream has. CTAs of a
 * higher priority's kernels waiting for room are started before a lower one's. */
int av_kern_stream_create(void **s, int rank);
int av_kern_stream_destroy(void *s);
int av_kern_event_create(void **e);
int av_kern_event_destroy(void *e);
int av_kern_event_record(void *e, void *stream);
/* Waits on the host until the work before e's last record has run. */
int av_kern_event_sync(void *e);
int av_kern_stream_wait(void *stream, void *event);
int av_kern_event_elapsed_ms(float *ms, void *start, void *end);
/* An event record that a graph captured from `stream` keeps as a timed node (plain records
 * inside a capture only order the work); outside a capture, av_kern_event_record. */
int av_kern_event_record_timed(void *e, void *stream);
/* CUDA graphs (docs/kernels.md#launch-models): everything issued on `stream` and on the
 * streams it forks into between begin and end becomes one graph, instantiated into *exec;
 * a launch of it replays the work on `stream`. A failed capture leaves no graph behind. */
int av_kern_capture_begin(void *stream);
int av_kern_capture_end(void *stream, void **exec);
int av_kern_graph_launch(void *exec, void *stream);
int av_kern_graph_destroy(void *exec);
int av_kern_sync(void);
/* *done 1 when everything issued on `stream` has run, 0 while some of it still runs: a host
 * that must not wait forever on a kernel (a test's watchdog) polls this. */
int av_kern_stream_done(void *stream, int *done);
/* Copies `bytes` device-to-device `reps` times and returns read+write bytes per second of
 * the median repeat (the simulator's HBM bandwidth, hbm_bw_measured_GBps). */
int av_kern_copy_bandwidth(size_t bytes, int reps, double *GBps);
/* Reads `bytes` (a multiple of 16) `reps` times with a read-only stream kernel and returns
 * bytes read per second of the median repeat: what a kernel that only reads KV can reach
 * (the roofline floor's bandwidth, docs/kernels.md#the-floor). */
int av_kern_read_bandwidth(size_t bytes, int reps, double *GBps);

/* "cudaMalloc(...) at kernels/runtime.cu:123: out of memory" for the last failure. */
const char *av_kern_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
