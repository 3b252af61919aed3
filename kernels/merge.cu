/* Merge kernel: combines each request's partial states (O, lse) in the plan's fixed order
 * with the log-sum-exp composition (PAT §4.3; FlashInfer §2.2's attention-state merge).
 * One warp per (request, query head) row, MERGE_WARPS rows per CTA.
 *
 * The warp fetches the slot ids and lse of 32 slots at once (one per lane) and then reads
 * the partial outputs 8 slots at a time, the loads issued before any is used (for rows of
 * at most 32 slots the first 8 together with the lse): a request's merge costs a few memory
 * latencies per 32 slots rather than two dependent loads per slot, as a walk of the slot
 * list one slot at a time would. Every lane still adds the slots in the plan's order and the
 * normaliser is summed in a fixed butterfly, so the same plan gives bitwise the same output
 * (docs/kernels.md#the-merge). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attn.cuh"
#include "kernels/kern_internal.h"

namespace av {
constexpr int MERGE_WARPS = 4;
constexpr int MERGE_BATCH = 8;  /* partial outputs in flight per lane */

template <int E> struct fvec;
template <> struct fvec<4> {
  static __device__ __forceinline__ void load(float *v, const float *p) {
    const float4 x = *reinterpret_cast<const float4 *>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  }
};
template <> struct fvec<2> {
  static __device__ __forceinline__ void load(float *v, const float *p) {
    const float2 x = *reinterpret_cast<const float2 *>(p);
    v[0] = x.x, v[1] = x.y;
  }
};

/* Issues the loads of slots j .. j+MERGE_BATCH (those below n) of one row's chunk, lane l of
 * the warp holding slot l's id: nothing waits for them here. */
template <int D>
__device__ __forceinline__ void load_batch(const av_kern_merge_batch_t &b, int h, int n, int j,
                                           int my_slot, float (*v)[D / 32]) {
  constexpr int E = D / 32;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int u = 0; u < MERGE_BATCH; ++u) {
    const int slot = __shfl_sync(0xffffffffu, my_slot, (j + u) & 31);
    if (j + u < n) fvec<E>::load(v[u], b.part_o + ((size_t)slot * b.hq + h) * D + lane * E);
  }
}

/* Adds the batch in slot order, each slot weighted by its lane's my_f. */
template <int D>
__device__ __forceinline__ void add_batch(int n, int j, float my_f, const float (*v)[D / 32],
                                          float *acc) {
  constexpr int E = D / 32;
#pragma unroll
  for (int u = 0; u < MERGE_BATCH; ++u) {
    const float f = __shfl_sync(0xffffffffu, my_f, (j + u) & 31);
    if (j + u < n) {
#pragma unroll
      for (int e = 0; e < E; ++e) acc[e] += f * v[u][e];
    }
  }
}

/* Slots c .. c+n (n <= 32) of one row: lane j holds slot c+j's id and weight; the first
 * batch may already be in flight (`loaded`). */
template <int D>
__device__ __forceinline__ void merge_chunk(const av_kern_merge_batch_t &b, int h, int n,
                                            int my_slot, float my_f, float *acc,
                                            float (*v)[D / 32], bool loaded) {
  for (int j = 0; j < n; j += MERGE_BATCH) {
    if (j > 0 || !loaded) load_batch<D>(b, h, n, j, my_slot, v);
    add_batch<D>(n, j, my_f, v, acc);
  }
}

/* The row's global maximum lse over lanes holding `lse` (-inf elsewhere). */
__device__ __forceinline__ float warp_max(float m) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  return m;
}

/* A row of at most 32 slots (nearly every row: one slot per tree level or KV chunk) waits on
 * three memory latencies: its list bounds, its slot ids, then the lse and the first batch of
 * partial outputs together. Longer rows first find the maximum lse over all their slots. The
 * arithmetic (and so every output bit) is the same on both paths. */
template <typename T, int D, bool LSE>
__device__ __forceinline__ void merge_row(const av_kern_merge_batch_t &b, int req, int h,
                                          const int32_t *merge_off, const int32_t *slots) {
  const int lane = threadIdx.x & 31;
  const int s0 = merge_off[req], s1 = merge_off[req + 1];
  if (s0 == s1) return;  /* a FINAL item wrote this row */
  constexpr int E = D / 32;  /* elements per lane: 4 (d 128) or 2 (d 64) */
  float acc[E] = {};
  float L = 0.f;
  float v[MERGE_BATCH][E];
  float row_max = -INFINITY;  /* read only with LSE */
  if (s1 - s0 <= 32) {
    const int n = s1 - s0;
    const int my_slot = lane < n ? slots[s0 + lane] : 0;
    const float lse = lane < n ? b.part_lse[(size_t)my_slot * b.hq + h] : -INFINITY;
    load_batch<D>(b, h, n, 0, my_slot, v);
    const float gm = warp_max(lse);
    row_max = gm;
    const float my_f = lse == -INFINITY ? 0.f : expf(lse - gm);
    L += my_f;
    merge_chunk<D>(b, h, n, my_slot, my_f, acc, v, true);
  } else {
    float gm = -INFINITY;
    for (int s = s0 + lane; s < s1; s += 32)
      gm = fmaxf(gm, b.part_lse[(size_t)slots[s] * b.hq + h]);
    gm = warp_max(gm);
    row_max = gm;
    for (int c = s0; c < s1; c += 32) {
      const int n = s1 - c < 32 ? s1 - c : 32;
      int my_slot = 0;
      float my_f = 0.f;
      if (lane < n) {
        my_slot = slots[c + lane];
        const float lse = b.part_lse[(size_t)my_slot * b.hq + h];
        my_f = lse == -INFINITY ? 0.f : expf(lse - gm);
      }
      L += my_f;
      merge_chunk<D>(b, h, n, my_slot, my_f, acc, v, false);
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) L += __shfl_xor_sync(0xffffffffu, L, o);
  const float inv = L > 0.f ? 1.f / L : 0.f;
  T *out = static_cast<T *>(b.out) + ((size_t)req * b.hq + h) * D + lane * E;
#pragma unroll
  for (int e = 0; e < E; e += 2) {
    const uint32_t pk = dt<T>::pack(acc[e] * inv, acc[e + 1] * inv);
    *reinterpret_cast<uint32_t *>(out + e) = pk;
  }
  /* the merged row's natural-log lse: max + ln(sum of exp(lse_s - max)) */
  if constexpr (LSE)
    if (lane == 0) b.lse[(size_t)req * b.hq + h] = L > 0.f ? row_max + logf(L) : -INFINITY;
}

/* The CTA: its rows, then (traced runs) one record per CTA at merge_trace[blockIdx.x]. */
template <typename T, int D, bool LSE>
__device__ __forceinline__ void merge_cta(const av_kern_merge_batch_t &b, int32_t n_requests,
                                          const int32_t *merge_off, const int32_t *slots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  /* launched as a programmatic dependent (the pdl launch model): wait until the attention
   * launch before it has finished and its partial states are visible; otherwise a no-op */
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  unsigned long long t0 = 0;
  if (b.merge_trace && threadIdx.x == 0) t0 = globaltimer();
  const long row = (long)blockIdx.x * MERGE_WARPS + (threadIdx.x >> 5);
  if (row < (long)n_requests * b.hq)
    merge_row<T, D, LSE>(b, (int)(row / b.hq), (int)(row % b.hq), merge_off, slots);
  if (b.merge_trace) {
    __syncthreads();
    if (threadIdx.x == 0) {
      av_kern_trace_rec_t *r = b.merge_trace + blockIdx.x;
      r->start_ns = t0;
      r->end_ns = globaltimer();
      r->smid = smid();
    }
  }
}
}  // namespace av

/* The merge kernels of the variant table, and beside them (av_kern_merge_lse_fn) the same
 * merge that also writes each row's lse, for runs that ask for it (anvil_run): a kernel of
 * its own, so the table's kernels, their resources and the executor's outputs stay as they
 * were. */
#define AV_DEFINE_MERGE(TN, T, D)                                                          \
  extern "C" __global__ void __launch_bounds__(av::MERGE_WARPS * 32)                      \
      av_k_merge_##TN##_d##D(const av_kern_merge_batch_t b, int32_t n_requests,           \
                             const int32_t *merge_off, const int32_t *slots) {            \
    av::merge_cta<T, D, false>(b, n_requests, merge_off, slots);                          \
  }                                                                                       \
  extern "C" __global__ void __launch_bounds__(av::MERGE_WARPS * 32)                      \
      av_k_merge_lse_##TN##_d##D(const av_kern_merge_batch_t b, int32_t n_requests,       \
                                 const int32_t *merge_off, const int32_t *slots) {        \
    av::merge_cta<T, D, true>(b, n_requests, merge_off, slots);                           \
  }
AV_DEFINE_MERGE(fp16, __half, 128)
AV_DEFINE_MERGE(bf16, __nv_bfloat16, 128)
AV_DEFINE_MERGE(fp16, __half, 64)
AV_DEFINE_MERGE(bf16, __nv_bfloat16, 64)

extern "C" const void *av_kern_merge_lse_fn(int dtype, int head_dim) {
  if (head_dim == 128) return dtype ? (const void *)av_k_merge_lse_bf16_d128
                                    : (const void *)av_k_merge_lse_fp16_d128;
  if (head_dim == 64) return dtype ? (const void *)av_k_merge_lse_bf16_d64
                                   : (const void *)av_k_merge_lse_fp16_d64;
  return nullptr;
}

/* Merge: m = rows (request, q head) per CTA; n = 1: it reads no KV tile. */
#define AV_MERGE_ENT(TN, DTN, D)                                                              \
  {{"av_k_merge_" #TN "_d" #D, AV_KIND_MERGE, av::MERGE_WARPS, 1, av::MERGE_WARPS, D, DTN,    \
    av::MERGE_WARPS * 32, 0},                                                                 \
   (const void *)av_k_merge_##TN##_d##D},
extern "C" const av_kern_entry_t av_kern_tab_merge[] = {
    AV_MERGE_ENT(fp16, 0, 128) AV_MERGE_ENT(bf16, 1, 128) AV_MERGE_ENT(fp16, 0, 64)
        AV_MERGE_ENT(bf16, 1, 64)};
extern "C" const int av_kern_cnt_merge =
    (int)(sizeof av_kern_tab_merge / sizeof av_kern_tab_merge[0]);
