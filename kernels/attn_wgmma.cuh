/* Hopper warpgroup MMA (wgmma.mma_async, sm_90a only) for the m64 tiles: the four warps of a
 * CTA are one warpgroup, the A operand (Q for QK^T, P for PV) comes from registers in the
 * same fragment layout as mma.sync m16n8k16's A (warp w holds rows 16w..16w+15), and the
 * accumulator layout per warp is mma.sync's C layout tiled over N, so the softmax of
 * attn.cuh runs unchanged on it (FlashAttention-3 §3.1 keeps P in registers the same way for
 * 16-bit types). B (K, V) is read by the tensor cores straight from shared memory through a
 * matrix descriptor, once per warpgroup instead of once per warp by ldmatrix: that quarters
 * the shared-memory reads of the m64 tile, which bound the mma.sync kernel (docs/kernels.md).
 *
 * Shared-memory layout of a KV tile (the PTX ISA's 128-byte swizzle, as FlashAttention-3 and
 * CUTLASS keep theirs): a token's dims are cut into 64-element (128-byte) halves; half h of
 * token n is the 128-byte row n of block h (blocks of N rows, N*128 bytes apart), and within
 * that row 16-byte chunk c sits at slot c ^ (n % 8) (wg_off). Eight rows make a 1024-byte
 * swizzle atom, so tiles start 1024-byte aligned. K is B of QK^T in K-major form: 8-token
 * groups SBO = 1024 bytes apart, k-steps of 16 dims 32 bytes apart inside a half (LBO unused).
 * V is B of PV in MN-major form (transposed): the 64-dim halves LBO = N*128 bytes apart,
 * 8-token groups SBO = 1024 bytes apart, k-steps of 16 tokens 2048 bytes apart. The loader
 * writes a cache line (a token's half) into one such row: no bank conflict, whole lines read.
 * (A no-swizzle core-matrix layout needs 8 tokens x 4 chunks per warp request: on the H200
 * 5.4x the ideal shared-memory wavefronts and 2x the L2 sectors,
 * docs/kernels.md#alternatives-measured.)
 */
#ifndef AV_ATTN_WGMMA_CUH
#define AV_ATTN_WGMMA_CUH

#include <type_traits>

#include "kernels/attn_ptx.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define AV_HAVE_WGMMA 1
#else
#define AV_HAVE_WGMMA 0
#endif

/* Descriptor strides of the layout above (bytes) for a tile of N tokens; AV_WG_* override
 * them for the layout probe (bench/wgmma_probe.cu). */
#ifndef AV_WG_V_LBO
#define AV_WG_K_LBO(N) 16
#define AV_WG_K_SBO(N) 1024
#define AV_WG_V_LBO(N) ((N) * 128)
#define AV_WG_V_SBO(N) 1024
#endif

namespace av {

/* Element offset of (token n, dim c) in a swizzled tile of N tokens (layout above). */
__host__ __device__ __forceinline__ int wg_off(int n, int c, int N) {
  return (c / 64) * N * 64 + n * 64 + ((((c % 64) / 8) ^ (n % 8)) * 8) + c % 8;
}

/* A shared-memory matrix descriptor: start address, leading and stride byte offsets (all
 * encoded >> 4), 128-byte swizzle (mode 1, bits 62-63). */
__device__ __forceinline__ uint64_t wg_desc(const void *p, uint32_t lbo, uint32_t sbo) {
  const uint64_t a = (smem_u32(p) & 0x3FFFFu) >> 4;
  return a | (uint64_t)((lbo >> 4) & 0x3FFFu) << 16 | (uint64_t)((sbo >> 4) & 0x3FFFu) << 32 |
         (uint64_t)1 << 62;
}
/* Advancing a descriptor's start address by `bytes` (16-byte aligned, inside the window). */
__device__ __forceinline__ uint64_t wg_advance(uint64_t d, uint32_t bytes) {
  return d + (bytes >> 4);
}
__device__ __forceinline__ void wg_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/* Waits until at most P of this warpgroup's committed wgmma groups are in flight (they
 * complete in commit order). */
template <int P = 0> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(P) : "memory");
}
__device__ __forceinline__ void wg_wait0() { wg_wait<0>(); }
/* Orders this thread's generic-proxy writes to shared memory (the cp.async copies) before the
 * async proxy's reads (wgmma's B operand). */
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

#define AV_WG_REGS_32 \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15 " \
  "}, {%16, %17, %18, %19}, %20, p, 1, 1, %21;\n"
/* The accumulator operands, n8 columns j of d as "+f" (4 per thread): built up by halves. */
#define AV_WG_OUT8(d, j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define AV_WG_OUTS_32(d) AV_WG_OUT8(d, 0), AV_WG_OUT8(d, 1), AV_WG_OUT8(d, 2), AV_WG_OUT8(d, 3)
#define AV_WG_OUTS_64(d) AV_WG_OUTS_32(d), AV_WG_OUTS_32((d + 4))
#define AV_WG_OUTS_128(d) AV_WG_OUTS_64(d), AV_WG_OUTS_64((d + 8))
#define AV_WG_REGS_64 \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31 " \
  "}, {%32, %33, %34, %35}, %36, p, 1, 1, %37;\n"
#define AV_WG_REGS_128 \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63 " \
  "}, {%64, %65, %66, %67}, %68, p, 1, 1, %69;\n"

/* D (64 x NN, f32) += A (64 x 16, registers) B (16 x NN, descriptor); TRANS_B 1 reads B in
 * MN-major form. One asm statement per dtype: only the type suffix differs. */
#define AV_WG_MMA(NN)                                                                        \
  template <typename T, int TRANS_B>                                                         \
  __device__ __forceinline__ void wg_mma_n##NN(float (*d)[4], const uint32_t *a,             \
                                               uint64_t desc) {                              \
    if constexpr (std::is_same<T, __nv_bfloat16>::value)                                     \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32.bf16.bf16 " AV_WG_REGS_##NN \
                   "}\n"                                                                     \
                   : AV_WG_OUTS_##NN(d)                                                      \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(TRANS_B));   \
    else                                                                                     \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32.f16.f16 " AV_WG_REGS_##NN \
                   "}\n"                                                                     \
                   : AV_WG_OUTS_##NN(d)                                                      \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(TRANS_B));   \
  }
AV_WG_MMA(32)
AV_WG_MMA(64)
AV_WG_MMA(128)

template <typename T, int NN, int TRANS_B>
__device__ __forceinline__ void wg_mma(float (*d)[4], const uint32_t *a, uint64_t desc) {
  if constexpr (NN == 32) wg_mma_n32<T, TRANS_B>(d, a, desc);
  else if constexpr (NN == 64) wg_mma_n64<T, TRANS_B>(d, a, desc);
  else wg_mma_n128<T, TRANS_B>(d, a, desc);
}

/* Tells the compiler that an in-flight wgmma may change the registers of d at this point, so
 * that it neither reads them earlier nor keeps copies across (CUTLASS's fence_operand). */
template <int R> __device__ __forceinline__ void wg_fence_regs(float (*d)[4]) {
#pragma unroll
  for (int j = 0; j < R; ++j)
    asm volatile("" : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])::"memory");
}

/* Issues S (64 x N) = Q K^T as one wgmma group, D/16 k-steps over the head dim, K tile in the
 * swizzled layout at ks (1024-byte aligned); S is ready after the next wg_wait0. */
template <typename T, int N, int D>
__device__ __forceinline__ void wg_qk_issue(float (*s)[4], const uint32_t (*qf)[4],
                                            const T *ks) {
#pragma unroll
  for (int j = 0; j < N / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
  const uint64_t d0 = wg_desc(ks, AV_WG_K_LBO(N), AV_WG_K_SBO(N));
  wg_fence();
#pragma unroll
  for (int k = 0; k < D / 16; ++k)
    wg_mma<T, N, 0>(s, qf[k], wg_advance(d0, (k / 4) * N * 128 + (k % 4) * 32));
  wg_commit();
}
template <typename T, int N, int D>
__device__ __forceinline__ void wg_qk(float (*s)[4], const uint32_t (*qf)[4], const T *ks) {
  wg_qk_issue<T, N, D>(s, qf, ks);
  wg_wait0();
  wg_fence_regs<N / 8>(s);
}

/* P (64 x N, the softmax weights in S's accumulator layout) packed as the A fragments of PV:
 * the m16n8 C layout of two adjacent n8 tiles is the m16k16 A layout. */
template <typename T, int N>
__device__ __forceinline__ void wg_pack_p(uint32_t (*pa)[4], const float (*p)[4]) {
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) {
    pa[kk][0] = dt<T>::pack(p[2 * kk][0], p[2 * kk][1]);
    pa[kk][1] = dt<T>::pack(p[2 * kk][2], p[2 * kk][3]);
    pa[kk][2] = dt<T>::pack(p[2 * kk + 1][0], p[2 * kk + 1][1]);
    pa[kk][3] = dt<T>::pack(p[2 * kk + 1][2], p[2 * kk + 1][3]);
  }
}
/* Issues O (64 x D) += P V as one wgmma group: N/16 k-steps over the tile's tokens; pa and o
 * must stay untouched until the group is waited for. */
template <typename T, int N, int D>
__device__ __forceinline__ void wg_pv_issue(float (*o)[4], const uint32_t (*pa)[4],
                                            const T *vs) {
  const uint64_t d0 = wg_desc(vs, AV_WG_V_LBO(N), AV_WG_V_SBO(N));
  wg_fence();
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) wg_mma<T, D, 1>(o, pa[kk], wg_advance(d0, kk * 2048));
  wg_commit();
}
/* O (64 x D) += P V, synchronously. */
template <typename T, int N, int D>
__device__ __forceinline__ void wg_pv(float (*o)[4], const float (*p)[4], const T *vs) {
  uint32_t pa[N / 16][4];
  wg_pack_p<T, N>(pa, p);
  wg_pv_issue<T, N, D>(o, pa, vs);
  wg_wait0();
  wg_fence_regs<D / 8>(o);
}

}  // namespace av

#endif
