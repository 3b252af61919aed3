/* The KV side of an attention CTA: a plan item's record as the kernel reads it, the cursor
 * that walks its KV segments tile by tile, and the loader that copies a tile of the paged
 * cache into shared memory with cp.async (row-major padded for mma.sync, 128-byte swizzled
 * for wgmma). Included by attn.cuh inside namespace av. */
#ifndef AV_ATTN_KV_CUH
#define AV_ATTN_KV_CUH

#include <stdint.h>

#include "kernels/attn_ptx.cuh"
#include "kernels/attn_wgmma.cuh"
#include "kernels/kernels.h"

namespace av {

struct item_t {
  int q_begin, n_q, seg_begin, n_seg, output, slot, trace;
  int req0, boff0, begin0, end0;  /* first request and segment (kernels.h) */
};

__device__ __forceinline__ item_t item_from(const int32_t *p) {
  item_t it;
  it.q_begin = p[AV_KI_QBEGIN];
  it.n_q = p[AV_KI_NQ];
  it.seg_begin = p[AV_KI_SEGBEGIN];
  it.n_seg = p[AV_KI_NSEG];
  it.output = p[AV_KI_OUTPUT];
  it.slot = p[AV_KI_SLOT];
  it.trace = p[AV_KI_TRACE];
  it.req0 = p[AV_KI_REQ0];
  it.boff0 = p[AV_KI_BOFF0];
  it.begin0 = p[AV_KI_BEGIN0];
  it.end0 = p[AV_KI_END0];
  return it;
}
__device__ __forceinline__ item_t load_item(const int32_t *items, int i) {
  return item_from(items + (size_t)i * AV_KERN_ITEM_INTS);
}

/* Walks an item's KV tiles: tile = up to N consecutive tokens of one segment; boff is the
 * segment's node's offset in the block table. The first segment comes with the item. With
 * ALIGN (the TMA copies of the m64 wgmma tiles, attn_tma.cuh) a segment's first tile starts at
 * its begin rounded down to a multiple of amask + 1 (the rows of one bulk copy), and its first
 * lo tokens, before the segment, are masked like those past its end. */
template <bool ALIGN> struct tile_cursor_t {
  int seg, n_seg, seg_begin, boff, pos, end;
  int amask, lo;
  __device__ __forceinline__ void align() {
    if constexpr (ALIGN) {
      lo = pos & amask;
      pos -= lo;
    }
  }
  __device__ __forceinline__ void start(const int32_t *segs, const item_t &it, int am = 0) {
    seg = 0;
    n_seg = it.n_seg;
    seg_begin = it.seg_begin;
    boff = it.boff0;
    pos = it.begin0;
    end = it.end0;
    amask = am;
    align();
  }
  __device__ __forceinline__ void open(const int32_t *segs) {
    if (seg < n_seg) {
      const int4 s = *reinterpret_cast<const int4 *>(segs + (size_t)(seg_begin + seg) * 4);
      pos = s.y;
      end = s.z;
      boff = s.w;
      align();
    }
  }
  __device__ __forceinline__ bool valid() const { return seg < n_seg; }
  /* tokens of the tile before its segment (masked) */
  __device__ __forceinline__ int low() const {
    if constexpr (ALIGN) return lo;
    else return 0;
  }
  /* the tile at the cursor is its item's last */
  template <int N> __device__ __forceinline__ bool last() const {
    return seg + 1 >= n_seg && pos + N >= end;
  }
  template <int N> __device__ __forceinline__ void next(const int32_t *segs) {
    pos += N;
    if constexpr (ALIGN) lo = 0;
    if (pos >= end) {
      ++seg;
      open(segs);
    }
  }
};
using tile_cursor = tile_cursor_t<false>;

/* Copies KV tiles into shared memory. Thread tid always copies the same 16-byte column(s) of
 * rows tid/TPR + k*RS (k < R), so the block ids of a tile's rows can be read one tile ahead
 * into registers (fetch) and their latency hides behind the current tile's math; issue then
 * starts the tile's cp.async copies without waiting on the block table. A row's block and
 * in-block offset follow from the previous row's by adding RS = rs_q blocks + rs_r tokens
 * with one conditional carry (rs_r < block size), so neither side loops or divides per row:
 * one division per tile (per-row carry loops had made the loader a large share of the m64
 * tile's instructions). At d 128 a thread copies two chunks of each row, c and c + 8, one in
 * each 128-byte line, so a row's address arithmetic serves four copies while every copy
 * instruction of a warp still reads whole lines. Four consecutive chunks a thread read half
 * of each sector per instruction and lost bandwidth (docs/kernels.md#alternatives-measured). */
template <typename T, int N, int D, int NT, bool SWZ = false> struct kv_loader {
  static constexpr int CPR = D / 8;            /* 16-byte chunks per token row */
  static constexpr int CPT = D >= 128 ? 2 : 1; /* chunks a thread copies per row */
  static constexpr int TPR = CPR / CPT;        /* threads per row */
  static constexpr int RS = NT / TPR;
  static constexpr int R = N / RS;
  static constexpr int P = D + 8;
  static constexpr int HALF = TPR * 8;         /* dims between a thread's two chunks */
  /* elements between them in shared memory: the next half's block, or the padded row */
  static constexpr int HALF_SMEM = SWZ ? N * 64 : HALF;
  static_assert(NT % TPR == 0 && N % RS == 0 && (CPT == 1 || HALF == 64), "loader geometry");
  static_assert(!SWZ || RS % 8 == 0, "swizzled layout: a thread's rows keep their row mod 8");
  int blk[R];
  int row0, col;
  int dst0;  /* swizzled layout: element offset of row row0's chunk in the tile */
  int rs_q, rs_r;  /* RS = rs_q * block size + rs_r */
  int rem0;  /* (tile start + row0) mod block size */
  /* A warp's copy instruction reads whole 128-byte lines of the cache (at d 128: 4 tokens'
   * first or second halves). Row-major padded tiles put a row at pitch P; swizzled tiles
   * (attn_wgmma.cuh, wg_off) put each 128-byte line in one 128-byte row of shared memory with
   * its chunks permuted, so the copies' shared-memory writes take the ideal wavefronts (the
   * no-swizzle core-matrix order, 8 tokens x 4 chunks a warp, took 5.4x the wavefronts and
   * 2x the L2 sectors: docs/kernels.md#alternatives-measured). RS is a multiple of 8, so a
   * thread's rows keep row0 % 8 and its chunk's permuted slot. */
  __device__ __forceinline__ void init(int tid, int bs) {
    row0 = tid / TPR;
    col = (tid % TPR) * 8;
    if constexpr (SWZ) dst0 = wg_off(row0, col, N);
    rs_q = RS / bs;
    rs_r = RS - rs_q * bs;
  }
  template <class C> __device__ __forceinline__ void fetch(const C &c, const av_kern_batch_t &b) {
    const int32_t *blocks = b.block_ids + c.boff;
    const int bs = b.block_size;
    const int t0 = c.pos + row0;
    int q = t0 / bs, r = t0 - q * bs;
    rem0 = r;
#pragma unroll
    for (int k = 0; k < R; ++k) {
      blk[k] = t0 + k * RS < c.end ? __ldg(blocks + q) : -1;
      r += rs_r;
      q += rs_q;
      const bool carry = r >= bs;
      r = carry ? r - bs : r;
      q = carry ? q + 1 : q;
    }
  }
  __device__ __forceinline__ void issue(T *ks, T *vs, const av_kern_batch_t &b, int kvh) const {
    const int bs = b.block_size;
    /* the cache's strides (kernels.h): HND for the executor, NHD or HND for a caller's; a
     * block's and its tokens' spans fit 32 bits (av_kern_kv_strides_ok) */
    const size_t head = ((size_t)kvh * b.kv_stride_head + col) * sizeof(T);
    const char *K = static_cast<const char *>(b.k) + head;
    const char *V = static_cast<const char *>(b.v) + head;
    const unsigned sbb = (unsigned)(b.kv_stride_block * (int64_t)sizeof(T));
    const unsigned stb = (unsigned)(b.kv_stride_token * (int64_t)sizeof(T));
    int r = rem0;
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const int row = row0 + k * RS;
      const bool ok = blk[k] >= 0;
      const size_t off = ok ? (size_t)(unsigned)blk[k] * sbb + (unsigned)r * stb : 0;
      const int at = SWZ ? dst0 + k * RS * 64 : row * P + col;
      const int nb = ok ? 16 : 0;
      cp_async16(ks + at, K + off, nb);
      cp_async16(vs + at, V + off, nb);
      if constexpr (CPT == 2) {
        cp_async16(ks + at + HALF_SMEM, K + off + HALF * sizeof(T), nb);
        cp_async16(vs + at + HALF_SMEM, V + off + HALF * sizeof(T), nb);
      }
      r += rs_r;
      r = r >= bs ? r - bs : r;
    }
  }
};

}  // namespace av

#endif
