/* KV copies by the Hopper tensor memory accelerator (TMA), and the KV source the attention
 * bodies use (kv_src): on sm_90a, where every tile is kept in the 128-byte swizzle, TMA when
 * the executor encoded tensor maps of the cache (kernels.h av_kern_kv_maps), else kv_loader's
 * cp.async copies; elsewhere cp.async into padded row-major tiles.
 *
 * Why: with cp.async every thread of a CTA issues its share of a tile's 16-byte copies and
 * computes their addresses. On the H200 that was about half of the m64 wgmma tile's ~500
 * instructions per warp and tile (counted in its SASS), issued by the same
 * warps that run the softmax. FlashAttention-3 (§3.1) has a producer issue TMA copies so
 * the consumers only compute. Here the copies of a tile are a handful of TMA instructions
 * from the first lanes of warp 0, one per (block-table page, 64-dim half, K or V), each landing
 * a box of `rows` tokens x 128 bytes directly in the 128-byte swizzled layout (attn_wgmma.cuh:
 * half h of token n at row n of block h, chunks permuted by n % 8, which is the TMA's
 * SWIZZLE_128B pattern for 1024-byte aligned boxes) that the wgmma descriptors and
 * ldmatrix (attn.cuh, kv_at) read. Completion is counted in bytes on one mbarrier per ring
 * stage; the consumers wait on it instead of on cp.async groups and a CTA barrier.
 *
 * A box starts on a page boundary of `rows` tokens, so a segment's first tile starts at its
 * begin rounded down to `rows` and masks the tokens before the segment (tile_cursor_t<true>);
 * pages past the segment's end are copied from the tile's first page (finite data, masked),
 * so every copy lands and every stage's byte count is the same. Included by attn.cuh. */
#ifndef AV_ATTN_TMA_CUH
#define AV_ATTN_TMA_CUH

#include "kernels/attn_kv.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define AV_HAVE_TMA 1
#else
#define AV_HAVE_TMA 0
#endif

namespace av {

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
#if AV_HAVE_TMA
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
/* One arrival that also expects `bytes` of copies to complete on the barrier's phase. */
__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, unsigned bytes) {
#if AV_HAVE_TMA
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
#endif
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) {
#if AV_HAVE_TMA
  asm volatile(
      "{\n.reg .pred P1;\nLAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
#endif
}
/* Box (c0, c1, c2, c3) of the 4-D tensor map at `map` (global memory) into shared memory at
 * dst, completing its bytes on bar. */
__device__ __forceinline__ void tma_load4(void *dst, const void *map, int c0, int c1, int c2,
                                          int c3, uint64_t *bar) {
#if AV_HAVE_TMA
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32(bar))
      : "memory");
#endif
}

/* TMA copies of a swizzled KV tile of N tokens. Lane j < N / rows of warp 0 copies page j of
 * the tile (D/64 boxes of K and as many of V); lane 0 arms the stage's barrier. A stage's
 * barrier is its last 8 bytes: stages are sized padded (geom) while the swizzled tiles use
 * 2*N*D elements of them, and the persistent kernel's epilogue, staged in a freed stage,
 * stays below it (geom::STREAM_STAGE_FITS). */
template <typename T, int N, int D> struct kv_tma {
  static constexpr unsigned BYTES = 2u * N * D * sizeof(T);
  int rows, bs_log2;
  int c1, blk;       /* this lane's page of the next tile: row in its block, block id */
  unsigned phase;    /* per ring buffer, the parity of the phase to wait for */
  static __device__ __forceinline__ uint64_t *bar(const T *ks) {
    return reinterpret_cast<uint64_t *>(const_cast<T *>(ks) + 2 * N * (D + 8)) - 1;
  }
  /* The lanes that issue copies first acquire the K and V maps: the host rewrites them in
   * place when a caller's cache moves (executor/device_plan.c), and a tensor map written
   * through the generic proxy (a host copy) is seen by the TMA unit only after this fence
   * (PTX ISA 8.3, fence.proxy.tensormap). */
  __device__ __forceinline__ void init(const av_kern_batch_t &b) {
    rows = b.kv_map_rows;
    bs_log2 = __ffs(b.block_size) - 1;
    phase = 0;
#if AV_HAVE_TMA
    if (threadIdx.x < 32) {
      asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(b.kv_maps)
                   : "memory");
      asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(
                       static_cast<const char *>(b.kv_maps) + 128)
                   : "memory");
    }
#endif
  }
  template <class C> __device__ __forceinline__ void fetch(const C &c, const av_kern_batch_t &b) {
    const int lane = threadIdx.x;
    if (lane >= 32 || lane * rows >= N) return;
    int t = c.pos + lane * rows;
    if (t >= c.end) t = c.pos;
    const int lb = t >> bs_log2;
    c1 = t - (lb << bs_log2);
    blk = __ldg(b.block_ids + c.boff + lb);
  }
  __device__ __forceinline__ void issue(T *ks, T *vs, const av_kern_batch_t &b, int kvh) const {
    const int lane = threadIdx.x;
    if (lane >= 32) return;
    uint64_t *br = bar(ks);
    if (lane == 0) mbar_expect_tx(br, BYTES);
    if (lane * rows < N) {
      const char *maps = static_cast<const char *>(b.kv_maps);
#pragma unroll
      for (int h = 0; h < D / 64; ++h) {
        const int at = h * N * 64 + lane * rows * 64;
        tma_load4(ks + at, maps, h * 64, c1, kvh, blk, br);
        tma_load4(vs + at, maps + 128, h * 64, c1, kvh, blk, br);
      }
    }
  }
  __device__ __forceinline__ void wait(const T *ks, int buf) {
    mbar_wait(bar(ks), (phase >> buf) & 1u);
    phase ^= 1u << buf;
  }
};

/* Where a body's KV tiles come from. SWZ tiles (the m64 wgmma ones) copy by TMA when the
 * batch has tensor maps, else by cp.async; the others always by cp.async, with the cursor and
 * waits they had before (CAN_TMA false compiles none of the TMA code). */
template <typename T, int N, int D, int NT, bool SWZ> struct kv_src {
  static constexpr bool CAN_TMA = SWZ && AV_HAVE_WGMMA;
  using cursor = tile_cursor_t<CAN_TMA>;
  kv_loader<T, N, D, NT, SWZ> cl;
  kv_tma<T, N, D> tl;
  bool tma;
  /* The ring has S stages of BUF elements at kvbuf. */
  template <int S, int BUF>
  __device__ __forceinline__ void init(int tid, const av_kern_batch_t &b, T *kvbuf) {
    tma = false;
    if constexpr (CAN_TMA) {
      static_assert(BUF * (int)sizeof(T) >= (int)kv_tma<T, N, D>::BYTES + 8, "stage padding");
      tma = b.kv_maps != nullptr;
      if (tma) {
        tl.init(b);
        if (tid == 0)
#pragma unroll
          for (int s = 0; s < S; ++s) mbar_init(kv_tma<T, N, D>::bar(kvbuf + s * BUF), 1);
        __syncthreads();
        return;
      }
    }
    cl.init(tid, b.block_size);
  }
  /* the cursor's alignment: a copy's rows (TMA) or none */
  __device__ __forceinline__ int amask() const {
    if constexpr (CAN_TMA) return tma ? tl.rows - 1 : 0;
    else return 0;
  }
  template <class C> __device__ __forceinline__ void fetch(const C &c, const av_kern_batch_t &b) {
    if constexpr (CAN_TMA)
      if (tma) {
        tl.fetch(c, b);
        return;
      }
    cl.fetch(c, b);
  }
  __device__ __forceinline__ void issue(T *ks, T *vs, const av_kern_batch_t &b, int kvh) const {
    if constexpr (CAN_TMA)
      if (tma) {
        tl.issue(ks, vs, b, kvh);
        return;
      }
    cl.issue(ks, vs, b, kvh);
  }
  __device__ __forceinline__ void commit() const {
    if constexpr (CAN_TMA)
      if (tma) return;
    cp_commit();
  }
  /* Waits until the tile in ring buffer `buf` (at ks) has landed and is visible to every
   * thread: cp.async waits until at most W groups are in flight, then a barrier; TMA waits
   * on the stage's barrier (and a CTA barrier too when SYNC: the persistent body also
   * publishes item records there). */
  template <int W, bool SYNC = false>
  __device__ __forceinline__ void ready(const T *ks, int buf) {
    if constexpr (CAN_TMA)
      if (tma) {
        tl.wait(ks, buf);
        if constexpr (SYNC) __syncthreads();
        return;
      }
    cp_wait<W>();
    if constexpr (SWZ) fence_proxy_async();
    __syncthreads();
  }
  __device__ __forceinline__ void drain() const {
    if constexpr (CAN_TMA)
      if (tma) return;
    cp_wait<0>();
  }
};

}  // namespace av

#endif
