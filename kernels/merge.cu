/* Merge kernel: combines each request's partial states (O, lse) in the plan's fixed order
 * with the log-sum-exp composition (PAT §4.3; FlashInfer §2.2's attention-state merge).
 * One warp per (request, query head); the order of the sum is the plan's, so the same plan
 * gives bitwise the same output. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attn.cuh"
#include "kernels/kern_internal.h"

namespace av {
constexpr int MERGE_WARPS = 4;

template <typename T, int D>
__device__ __forceinline__ void merge_rows(const av_kern_batch_t b, int32_t n_requests,
                                           const int32_t *merge_off, const int32_t *slots) {
  const int lane = threadIdx.x & 31;
  const long row = (long)blockIdx.x * MERGE_WARPS + (threadIdx.x >> 5);
  if (row >= (long)n_requests * b.hq) return;
  const int req = (int)(row / b.hq), h = (int)(row % b.hq);
  const int s0 = merge_off[req], s1 = merge_off[req + 1];
  if (s0 == s1) return;
  float gm = -INFINITY;
  for (int s = s0; s < s1; ++s) gm = fmaxf(gm, b.part_lse[(size_t)slots[s] * b.hq + h]);
  constexpr int E = D / 32;  /* elements per lane: 4 (d 128) or 2 (d 64) */
  float acc[E] = {};
  float L = 0.f;
  for (int s = s0; s < s1; ++s) {
    const size_t base = (size_t)slots[s] * b.hq + h;
    const float lse = b.part_lse[base];
    const float f = lse == -INFINITY ? 0.f : expf(lse - gm);
    L += f;
    const float *o = b.part_o + base * D + lane * E;
#pragma unroll
    for (int e = 0; e < E; ++e) acc[e] += f * o[e];
  }
  const float inv = L > 0.f ? 1.f / L : 0.f;
  T *out = static_cast<T *>(b.out) + ((size_t)req * b.hq + h) * D + lane * E;
#pragma unroll
  for (int e = 0; e < E; e += 2) {
    const uint32_t pk = dt<T>::pack(acc[e] * inv, acc[e + 1] * inv);
    *reinterpret_cast<uint32_t *>(out + e) = pk;
  }
}
}  // namespace av

#define AV_DEFINE_MERGE(TN, T, D)                                                          \
  extern "C" __global__ void __launch_bounds__(av::MERGE_WARPS * 32)                      \
      av_k_merge_##TN##_d##D(const av_kern_batch_t b, int32_t n_requests,                 \
                             const int32_t *merge_off, const int32_t *slots) {            \
    av::merge_rows<T, D>(b, n_requests, merge_off, slots);                                \
  }
AV_DEFINE_MERGE(fp16, __half, 128)
AV_DEFINE_MERGE(bf16, __nv_bfloat16, 128)
AV_DEFINE_MERGE(fp16, __half, 64)
AV_DEFINE_MERGE(bf16, __nv_bfloat16, 64)

/* Merge: m = rows (request, q head) per CTA; n = 1: it walks the slots one at a time and
 * reads no KV tile. */
#define AV_MERGE_ENT(TN, DTN, D)                                                              \
  {{"av_k_merge_" #TN "_d" #D, AV_KIND_MERGE, av::MERGE_WARPS, 1, av::MERGE_WARPS, D, DTN,    \
    av::MERGE_WARPS * 32, 0},                                                                 \
   (const void *)av_k_merge_##TN##_d##D},
extern "C" const av_kern_entry_t av_kern_tab_merge[] = {
    AV_MERGE_ENT(fp16, 0, 128) AV_MERGE_ENT(bf16, 1, 128) AV_MERGE_ENT(fp16, 0, 64)
        AV_MERGE_ENT(bf16, 1, 64)};
extern "C" const int av_kern_cnt_merge =
    (int)(sizeof av_kern_tab_merge / sizeof av_kern_tab_merge[0]);
