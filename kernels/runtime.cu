/* Host side of the kernels library: the variant registry gathered from the attention
 * translation units, the extern "C" launchers, and thin CUDA runtime wrappers so host C code
 * stays free of CUDA headers. Every CUDA call goes through AV_CUDA_CHECK; every launch is
 * followed by a last-error check. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kern_internal.h"

static char av_kern_errbuf[512];

int av__kern_fail(cudaError_t e, const char *what, const char *file, int line) {
  const char *f = strstr(file, "kernels/");
  snprintf(av_kern_errbuf, sizeof av_kern_errbuf, "%s at %s:%d: %s (%s)", what,
           f ? f : file, line, cudaGetErrorString(e), cudaGetErrorName(e));
  return (int)e;
}

extern "C" const char *av_kern_last_error(void) { return av_kern_errbuf; }

/* --- registry ------------------------------------------------------------------- */
#define AV_MAX_VARIANTS 128
static av_kern_variant_t av_variants_flat[AV_MAX_VARIANTS];
static const av_kern_entry_t *av_entries[AV_MAX_VARIANTS];
static bool av_smem_set[AV_MAX_VARIANTS];
static int av_n_variants = -1;

static void av_gather(void) {
  if (av_n_variants >= 0) return;
  const av_kern_entry_t *tabs[] = {AV_KERN_TABLE(fp16, 128), AV_KERN_TABLE(bf16, 128),
                                   AV_KERN_TABLE(fp16, 64), AV_KERN_TABLE(bf16, 64),
                                   av_kern_tab_merge};
  const int cnts[] = {AV_KERN_COUNT(fp16, 128), AV_KERN_COUNT(bf16, 128),
                      AV_KERN_COUNT(fp16, 64), AV_KERN_COUNT(bf16, 64), av_kern_cnt_merge};
  int n = 0;
  for (int t = 0; t < 5; ++t)
    for (int i = 0; i < cnts[t] && n < AV_MAX_VARIANTS; ++i) {
      av_entries[n] = &tabs[t][i];
      av_variants_flat[n++] = tabs[t][i].v;
    }
  av_n_variants = n;
}

extern "C" const av_kern_variant_t *av_kern_variants(int *n) {
  av_gather();
  *n = av_n_variants;
  return av_variants_flat;
}

static int av_index_of(const av_kern_variant_t *v) {
  av_gather();
  const long i = v - av_variants_flat;
  return (i >= 0 && i < av_n_variants) ? (int)i : -1;
}

extern "C" const av_kern_variant_t *av_kern_find(int kind, int m, int n, int head_dim,
                                                 int dtype) {
  av_gather();
  for (int i = 0; i < av_n_variants; ++i) {
    const av_kern_variant_t *v = &av_variants_flat[i];
    if (v->kind == kind && v->head_dim == head_dim && v->dtype == dtype &&
        (kind == AV_KIND_MERGE || (v->m == m && v->n == n)))
      return v;
  }
  return NULL;
}

/* Opts the kernel into its dynamic shared memory (> 48 KiB needs the attribute). */
static int av_prepare(int idx) {
  if (av_smem_set[idx]) return 0;
  AV_CUDA_CHECK(cudaFuncSetAttribute(av_entries[idx]->fn,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     av_entries[idx]->v.smem_dynamic));
  av_smem_set[idx] = true;
  return 0;
}

extern "C" int av_kern_attn_launch(const av_kern_variant_t *v, const av_kern_batch_t *b,
                                   const av_kern_launch_t *l, void *stream) {
  const int idx = av_index_of(v);
  if (idx < 0 || v->kind == AV_KIND_MERGE)
    return av__kern_fail(cudaErrorInvalidDeviceFunction, "av_kern_attn_launch(variant)",
                         __FILE__, __LINE__);
  int rc = av_prepare(idx);
  if (rc) return rc;
  const int ctas = v->kind == AV_KIND_PERSISTENT ? l->persistent_ctas : l->n_items;
  if (ctas <= 0) return 0;
  dim3 grid((unsigned)ctas, (unsigned)b->hkv), block((unsigned)v->threads);
  av_kern_batch_t bb = *b;
  av_kern_launch_t ll = *l;
  void *args[] = {&bb, &ll};
  AV_CUDA_CHECK(cudaLaunchKernel(av_entries[idx]->fn, grid, block, args,
                                 (size_t)v->smem_dynamic, (cudaStream_t)stream));
  AV_CUDA_CHECK_LAUNCH("attention");
  return 0;
}

/* The TMA maps of the KV cache for every tile on sm_90a (kernels/attn_tma.cuh): the cache
 * seen as 4-D (d, token, head, block) with its element strides (HND or NHD alike: a tensor
 * map takes its dimensions' strides in any order); a box is one block's and head's `rows`
 * tokens (at most 32, so that every tile of 32, 64 or 128 tokens is whole boxes) by 64 dims,
 * landing in the 128-byte swizzle the wgmma descriptors and ldmatrix read. The encoder comes
 * from the driver by entry point, so the library needs no link to libcuda. */
extern "C" int av_kern_kv_maps_encode(const av_kern_batch_t *b, int32_t n_blocks, void *host,
                                      int *rows) {
  *rows = 0;
  const int bs = b->block_size;
  if (bs < 8 || (bs & (bs - 1)) || b->head_dim % 64 != 0 || n_blocks <= 0) return 0;
  const int64_t st[3] = {b->kv_stride_token, b->kv_stride_head, b->kv_stride_block};
  if (!av_kern_kv_strides_ok(st[2], st[1], st[0], bs)) return 0;
  int dev = 0, major = 0;
  AV_CUDA_CHECK(cudaGetDevice(&dev));
  AV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major != 9) return 0;
  void *fn = NULL;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn) {
    (void)cudaGetLastError();
    return 0;
  }
  const PFN_cuTensorMapEncodeTiled_v12000 encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
  const int r = bs < 32 ? bs : 32;
  const cuuint64_t dims[4] = {(cuuint64_t)b->head_dim, (cuuint64_t)bs, (cuuint64_t)b->hkv,
                              (cuuint64_t)n_blocks};
  const cuuint64_t strides[3] = {(cuuint64_t)st[0] * 2, (cuuint64_t)st[1] * 2,
                                 (cuuint64_t)st[2] * 2};
  const cuuint32_t box[4] = {64, (cuuint32_t)r, 1, 1}, step[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type =
      b->dtype == 1 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  CUtensorMap *m = static_cast<CUtensorMap *>(host);
  for (int i = 0; i < 2; ++i) {
    const CUresult e = encode(&m[i], type, 4, const_cast<void *>(i ? b->v : b->k), dims, strides,
                              box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (e != CUDA_SUCCESS) {
      snprintf(av_kern_errbuf, sizeof av_kern_errbuf,
               "cuTensorMapEncodeTiled(%s: %lld blocks of %d x %d heads x %d) at "
               "kernels/runtime.cu: CUresult %d", i ? "V" : "K", (long long)dims[3], bs,
               b->hkv, b->head_dim, (int)e);
      return (int)cudaErrorInvalidValue;
    }
  }
  *rows = r;
  return 0;
}

extern "C" int av_kern_kv_maps(const av_kern_batch_t *b, int32_t n_blocks, void **maps,
                               int *rows) {
  *maps = NULL;
  alignas(64) CUtensorMap m[2];
  const int rc = av_kern_kv_maps_encode(b, n_blocks, m, rows);
  if (rc || !*rows) return rc;
  AV_CUDA_CHECK(cudaMalloc(maps, sizeof m));
  AV_CUDA_CHECK(cudaMemcpy(*maps, m, sizeof m, cudaMemcpyHostToDevice));
  return 0;
}

extern "C" int av_kern_merge_rows_per_cta(void) {
  const av_kern_variant_t *v = av_kern_find(AV_KIND_MERGE, 0, 0, 128, 0);
  return v ? v->m : 4;
}

extern "C" int av_kern_merge_launch(const av_kern_batch_t *b, int32_t n_requests,
                                    const int32_t *merge_off, const int32_t *merge_slots,
                                    void *stream) {
  const av_kern_variant_t *v = av_kern_find(AV_KIND_MERGE, 0, 0, b->head_dim, b->dtype);
  if (!v)
    return av__kern_fail(cudaErrorInvalidDeviceFunction, "av_kern_merge_launch(variant)",
                         __FILE__, __LINE__);
  const long rows = (long)n_requests * b->hq;
  if (rows == 0) return 0;
  dim3 grid((unsigned)((rows + v->m - 1) / v->m)), block((unsigned)v->threads);
  /* the merge kernel's parameters: the batch's fields up to its lse (kernels.h) */
  static_assert(offsetof(av_kern_batch_t, lse) == offsetof(av_kern_merge_batch_t, lse),
                "the merge batch is the batch's first fields");
  av_kern_merge_batch_t bb;
  memcpy(&bb, b, sizeof bb);
  int32_t nr = n_requests;
  const int32_t *mo = merge_off, *ms = merge_slots;
  void *args[] = {&bb, &nr, &mo, &ms};
  /* a run that asks for the lse gets the merge that writes it (kernels/merge.cu) */
  const void *fn = b->lse ? av_kern_merge_lse_fn(b->dtype, b->head_dim)
                          : av_entries[av_index_of(v)]->fn;
  int dev = 0, major = 0;
  if (b->merge_pdl) {
    AV_CUDA_CHECK(cudaGetDevice(&dev));
    AV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  }
  if (major >= 9) {
    /* a programmatic dependent of the launch before it on the stream: its CTAs may be
     * scheduled once that launch's CTAs have all started (griddepcontrol.launch_dependents
     * in every attention kernel) and wait in griddepcontrol.wait for its memory */
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = (cudaStream_t)stream;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    AV_CUDA_CHECK(cudaLaunchKernelExC(&cfg, fn, args));
  } else {
    AV_CUDA_CHECK(cudaLaunchKernel(fn, grid, block, args, 0, (cudaStream_t)stream));
  }
  AV_CUDA_CHECK_LAUNCH("merge");
  return 0;
}

__global__ void av_k_fill_nan16(uint16_t *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = 0x7fff;  /* a quiet NaN in both fp16 and bf16 */
}
__global__ void av_k_fill_nan32(float *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = __int_as_float(0x7fffffff);
}

extern "C" int av_kern_fill_nan(void *p, size_t n, int elem_bytes, void *stream) {
  if (n == 0) return 0;
  const unsigned grid = (unsigned)(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096);
  if (elem_bytes == 2)
    av_k_fill_nan16<<<grid, 256, 0, (cudaStream_t)stream>>>((uint16_t *)p, n);
  else
    av_k_fill_nan32<<<grid, 256, 0, (cudaStream_t)stream>>>((float *)p, n);
  AV_CUDA_CHECK_LAUNCH("fill_nan");
  return 0;
}

/* --- runtime wrappers ----------------------------------------------------------- */
extern "C" int av_kern_device_count(int *n) {
  *n = 0;
  cudaError_t e = cudaGetDeviceCount(n);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    *n = 0;
    return 0;
  }
  AV_CUDA_CHECK(e);
  return 0;
}

extern "C" int av_kern_device_info(int dev, av_kern_device_t *out) {
  cudaDeviceProp p;
  AV_CUDA_CHECK(cudaSetDevice(dev));
  AV_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->sm_count = p.multiProcessorCount;
  out->sm_arch = p.major * 10 + p.minor;
  out->l2_bytes = p.l2CacheSize;
  out->smem_per_block_optin = (int)p.sharedMemPerBlockOptin;
  /* The memory clock tells an A100 40 GB from its 80 GB sibling (executor/device_id.c). */
  if (cudaDeviceGetAttribute(&out->mem_clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    out->mem_clock_khz = 0;
  }
  AV_CUDA_CHECK(cudaMemGetInfo(&out->free_bytes, &out->total_bytes));
  return 0;
}

extern "C" int av_kern_malloc(void **p, size_t bytes) {
  *p = NULL;
  AV_CUDA_CHECK(cudaMalloc(p, bytes ? bytes : 16));
  return 0;
}
extern "C" int av_kern_free(void *p) {
  if (p) AV_CUDA_CHECK(cudaFree(p));
  return 0;
}
extern "C" int av_kern_h2d(void *dst, const void *src, size_t bytes) {
  if (bytes) AV_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  return 0;
}
extern "C" int av_kern_h2d_async(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes)
    AV_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
  return 0;
}
extern "C" int av_kern_host_alloc(void **p, size_t bytes) {
  AV_CUDA_CHECK(cudaMallocHost(p, bytes ? bytes : 1));
  return 0;
}
extern "C" int av_kern_host_free(void *p) {
  if (p) AV_CUDA_CHECK(cudaFreeHost(p));
  return 0;
}
extern "C" int av_kern_device_current(int *dev) {
  AV_CUDA_CHECK(cudaGetDevice(dev));
  return 0;
}
extern "C" int av_kern_d2h(void *dst, const void *src, size_t bytes) {
  if (bytes) AV_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  return 0;
}
extern "C" int av_kern_memset(void *p, int value, size_t bytes, void *stream) {
  AV_CUDA_CHECK(cudaMemsetAsync(p, value, bytes, (cudaStream_t)stream));
  return 0;
}

__global__ void av_k_read_all(const uint4 *p, size_t n, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u && sink) *sink = acc;  /* keeps the loads; practically never taken */
}

extern "C" int av_kern_read_all(const void *p, size_t bytes, void *stream) {
  const size_t n = bytes / sizeof(uint4);
  if (n == 0) return 0;
  av_k_read_all<<<1024, 256, 0, (cudaStream_t)stream>>>(static_cast<const uint4 *>(p), n,
                                                        nullptr);
  AV_CUDA_CHECK_LAUNCH("read_all");
  return 0;
}
extern "C" int av_kern_stream_create(void **s, int rank) {
  int least = 0, greatest = 0;
  AV_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  /* greater priority is the smaller number: rank 0 gets `greatest` */
  const int prio = rank < 0 ? least : greatest + rank < least ? greatest + rank : least;
  cudaStream_t st;
  AV_CUDA_CHECK(cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, prio));
  *s = st;
  return 0;
}
extern "C" int av_kern_stream_destroy(void *s) {
  if (s) AV_CUDA_CHECK(cudaStreamDestroy((cudaStream_t)s));
  return 0;
}
extern "C" int av_kern_event_create(void **e) {
  cudaEvent_t ev;
  AV_CUDA_CHECK(cudaEventCreate(&ev));
  *e = ev;
  return 0;
}
extern "C" int av_kern_event_sync(void *e) {
  AV_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)e));
  return 0;
}
extern "C" int av_kern_event_destroy(void *e) {
  if (e) AV_CUDA_CHECK(cudaEventDestroy((cudaEvent_t)e));
  return 0;
}
extern "C" int av_kern_event_record(void *e, void *stream) {
  AV_CUDA_CHECK(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)stream));
  return 0;
}
extern "C" int av_kern_event_record_timed(void *e, void *stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  AV_CUDA_CHECK(cudaStreamIsCapturing((cudaStream_t)stream, &st));
  if (st == cudaStreamCaptureStatusActive)
    AV_CUDA_CHECK(cudaEventRecordWithFlags((cudaEvent_t)e, (cudaStream_t)stream,
                                           cudaEventRecordExternal));
  else
    AV_CUDA_CHECK(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)stream));
  return 0;
}
extern "C" int av_kern_capture_begin(void *stream) {
  AV_CUDA_CHECK(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeRelaxed));
  return 0;
}
extern "C" int av_kern_capture_end(void *stream, void **exec) {
  *exec = NULL;
  cudaGraph_t graph = NULL;
  AV_CUDA_CHECK(cudaStreamEndCapture((cudaStream_t)stream, &graph));
  cudaGraphExec_t ge = NULL;
  const cudaError_t e = cudaGraphInstantiate(&ge, graph, 0);
  cudaGraphDestroy(graph);
  if (e != cudaSuccess) return av__kern_fail(e, "cudaGraphInstantiate", __FILE__, __LINE__);
  *exec = ge;
  return 0;
}
extern "C" int av_kern_graph_launch(void *exec, void *stream) {
  AV_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream));
  return 0;
}
extern "C" int av_kern_graph_destroy(void *exec) {
  if (exec) AV_CUDA_CHECK(cudaGraphExecDestroy((cudaGraphExec_t)exec));
  return 0;
}
extern "C" int av_kern_stream_wait(void *stream, void *event) {
  AV_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
  return 0;
}
extern "C" int av_kern_event_elapsed_ms(float *ms, void *start, void *end) {
  AV_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)end));
  AV_CUDA_CHECK(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
  return 0;
}
extern "C" int av_kern_sync(void) {
  AV_CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}
extern "C" int av_kern_stream_done(void *stream, int *done) {
  const cudaError_t e = cudaStreamQuery((cudaStream_t)stream);
  *done = e == cudaSuccess;
  if (e == cudaErrorNotReady || e == cudaSuccess) return 0;
  return av__kern_fail(e, "cudaStreamQuery", __FILE__, __LINE__);
}

static int av_cmp_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* A read-only stream (the best of the variants bench/read_stream.cu measures): a block reads
 * 4 x 256 consecutive 16-byte chunks per step (thread t: t + k*256), four loads in flight per
 * thread, every word of each load used so none is narrowed; the grid fills every SM's thread
 * slots (8 blocks of 256 per SM). */
__global__ void av_k_read_stream(const uint4 *p, size_t n, unsigned *sink) {
  constexpr int U = 4;
  unsigned acc = 0;
  const size_t step = (size_t)gridDim.x * U * blockDim.x;
  size_t base = (size_t)blockIdx.x * U * blockDim.x;
  for (; base + U * blockDim.x <= n; base += step) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = p[base + threadIdx.x + k * blockDim.x];
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  for (size_t i = base + threadIdx.x; i < n && i < base + U * blockDim.x; i += blockDim.x)
    acc ^= p[i].x ^ p[i].y ^ p[i].z ^ p[i].w;  /* the last, partial step: each block its own */
  if (acc == 0x9e3779b9u && sink) *sink = acc;  /* keeps the loads; practically never taken */
}

/* Times `reps` streams of `bytes` (after warm-ups) and returns the median's bytes moved
 * per second: read + write for the device-to-device copy, read for the read stream. */
static int av_bandwidth(int read_only, size_t bytes, int reps, double *GBps) {
  void *a = NULL, *b = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  float *ms = (float *)calloc((size_t)(reps > 0 ? reps : 1), sizeof *ms);
  int rc = 0, dev = 0, sms = 0;
#define AV_BW_CHECK(call)                                             \
  do {                                                                \
    cudaError_t av_e_ = (call);                                       \
    if (av_e_ != cudaSuccess && !rc)                                  \
      rc = av__kern_fail(av_e_, #call, __FILE__, __LINE__);           \
  } while (0)
  if (!ms || reps <= 0) rc = av__kern_fail(cudaErrorMemoryAllocation, "calloc", __FILE__, __LINE__);
  if (!rc) AV_BW_CHECK(cudaGetDevice(&dev));
  if (!rc) AV_BW_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (!rc) AV_BW_CHECK(cudaMalloc(&a, bytes));
  if (!rc && !read_only) AV_BW_CHECK(cudaMalloc(&b, bytes));
  if (!rc) AV_BW_CHECK(cudaMemset(a, 1, bytes));
  if (!rc) AV_BW_CHECK(cudaEventCreate(&e0));
  if (!rc) AV_BW_CHECK(cudaEventCreate(&e1));
  /* warm-up runs: two for the copy; sixteen for the read stream, whose rate stays ~12 % low
   * for a few milliseconds after a burst of copies (bench/read_stream.cu measured it) */
  for (int i = read_only ? -16 : -2; !rc && i < reps; ++i) {
    AV_BW_CHECK(cudaEventRecord(e0, 0));
    if (read_only)
      av_k_read_stream<<<sms * 8, 256>>>(static_cast<const uint4 *>(a), bytes / sizeof(uint4),
                                         nullptr);
    else
      AV_BW_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
    AV_BW_CHECK(cudaGetLastError());
    AV_BW_CHECK(cudaEventRecord(e1, 0));
    AV_BW_CHECK(cudaEventSynchronize(e1));
    if (i >= 0) AV_BW_CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
  }
  if (!rc) {
    qsort(ms, (size_t)reps, sizeof *ms, av_cmp_float);
    *GBps = (read_only ? 1.0 : 2.0) * (double)bytes / (ms[reps / 2] * 1e-3) / 1e9;
  }
#undef AV_BW_CHECK
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (a) cudaFree(a);
  if (b) cudaFree(b);
  free(ms);
  return rc;
}

extern "C" int av_kern_copy_bandwidth(size_t bytes, int reps, double *GBps) {
  return av_bandwidth(0, bytes, reps, GBps);
}

extern "C" int av_kern_read_bandwidth(size_t bytes, int reps, double *GBps) {
  return av_bandwidth(1, bytes, reps, GBps);
}
