/* The partial-attention CTA body shared by the partial, persistent and decode kernels: one
 * plan item's query rows (queries x GQA group, head-group fusion) against its KV segments,
 * read from the paged cache into an S-stage ring (cp.async, or TMA on sm_90a: attn_tma.cuh),
 * QK^T and PV on tensor cores (mma.sync m16n8k16, or wgmma for the m64 tiles on sm_90a:
 * attn_wgmma.cuh; fp32 accumulate), online softmax in fp32 (FlashAttention-2 style), and
 * either the final output or a partial state (O, lse) for the merge (PAT §4; FlashInfer §3).
 * docs/kernels.md#the-tile-family describes the family. */
#ifndef AV_ATTN_CUH
#define AV_ATTN_CUH

#include <stdint.h>

#include "kernels/attn_ptx.cuh"
#include "kernels/attn_wgmma.cuh"
#include "kernels/kernels.h"

namespace av {

/* Tile geometry. Rows: WM = M/16 warps of 16 rows; each KV tile's N tokens are split over
 * WN warps (>= 16 tokens each, the mma's k), at most 4 warps in all. Rows of shared memory
 * are padded by 16 bytes so ldmatrix's 8 row addresses fall in distinct banks. Queries live in
 * registers only (read straight from global memory into mma fragments), so shared memory holds
 * just the S-stage K/V ring: S = 3 where three tiles fit the smallest per-block limit of the
 * three architectures (99 KiB on sm_89), else 2 -- and 2 for the smallest tile (m16, n32),
 * which serves short nodes (PAT §5.2 gives n = 32 to CTAs of at most 128 tokens): there a third
 * buffer overlaps little but costs two of six CTAs per SM, and a one-tile item's latency is hidden
 * only by other CTAs. MINB is the CTAs per SM that __launch_bounds__ asks registers to allow:
 * what the shared memory allows on sm_90, capped at 3 for m16/m32 tiles (register-light,
 * latency-bound: more CTAs hide more latency; 6 for m16 n32, 64 threads) and at 2 for m64
 * tiles on mma.sync, whose math runs faster with registers to spare than with a third CTA.
 * On wgmma (sm_90a) the m64 tiles fit 168 registers without spilling and run faster three to
 * an SM. Each cap is the faster of the settings measured on the H200
 * (docs/kernels.md#alternatives-measured). */
__host__ __device__ constexpr int minb_cap(int m, int n, bool wg) {
  return m >= 64 ? (wg ? 3 : 2) : m == 16 && n <= 32 ? 6 : 3;
}
template <int M, int N, int D> struct geom {
  static constexpr int WM = M / 16;
  static constexpr int WN_MAX = 4 / WM > 0 ? 4 / WM : 1;
  static constexpr int WN = (N / 16) < WN_MAX ? (N / 16) : WN_MAX;
  /* m128 is the warp-specialised tile of attn_ws.cuh: a producer warpgroup and two consumer
   * warpgroups of 64 rows, one CTA an SM, a three-stage ring */
  static constexpr bool WS = M == 128;
  static constexpr int W = WS ? 12 : WM * WN;
  static constexpr int T = W * 32;
  static constexpr int NS = N / WN;         /* tokens per warp per tile */
  static constexpr int P = D + 8;           /* smem row pitch, elements */
  /* Tiles whose 4 warps own 16 rows each over the whole KV tile (m64) are one warpgroup: on
   * sm_90a they run QK^T and PV as wgmma (attn_wgmma.cuh) on K/V tiles in the 128-byte
   * swizzled layout, V right after K (VOFF elements into a stage); elsewhere, and for the
   * other tiles, as mma.sync on row-major padded tiles, V at N rows of pitch P. A stage has
   * the padded size either way, so the host's launch and the device's layout agree. (Sizing
   * the m64 n64 stages unpadded on a 90a-only build gave it three stages and QK^T a tile
   * ahead: no faster on the H200, docs/kernels.md#alternatives-measured.) */
  static constexpr bool WG = AV_HAVE_WGMMA && WM == 4 && WN == 1;
  /* On sm_90a every tile is kept swizzled, so every tile can be copied by TMA
   * (attn_tma.cuh); mma.sync reads it with ldmatrix at permuted addresses (kv_at). */
  static constexpr bool SWZ = AV_HAVE_WGMMA;
  static constexpr int VOFF = SWZ ? N * D : N * P;
  static constexpr int BUF = 2 * N * P;     /* elements of one stage (K then V) */
  static constexpr int TILE_BYTES = BUF * 2;
  static constexpr int S = WS || (3 * TILE_BYTES <= 99 * 1024 && !(M == 16 && N <= 32)) ? 3 : 2;
  static constexpr int KV_BYTES = S * TILE_BYTES;
  static constexpr int OP = D + 4;          /* fp32 staging pitch */
  /* the epilogue's staging (tiles whose warps split the tokens; m64 warps write from registers) */
  static constexpr int STAGE_BYTES = WN == 1 ? 0 : W * 16 * OP * 4 + W * 16 * 2 * 4;
  static constexpr int SMEM = KV_BYTES > STAGE_BYTES ? KV_BYTES : STAGE_BYTES;
  static constexpr int FIT = (227 * 1024) / (SMEM + 1024);
  static constexpr int CAP = WS ? 1 : minb_cap(M, N, WG);
  static constexpr int MINB = FIT < 1 ? 1 : (FIT > CAP ? CAP : FIT);
  /* The persistent kernel streams tiles across its queue's items (attn_stream) on a ring of
   * SS stages: it stages an item's epilogue in the ring buffer its last tile just freed, and
   * keeps the records of the items in flight (at most SS + 1) in a small ring after the KV
   * ring. Its queues are pure copy streams (a few query rows against long KV), so their speed
   * is the bytes they keep in flight: SS - 1 tiles while one computes. */
  static constexpr int SS = S;  /* the persistent ring: as deep as the one-item kernels' */
  static constexpr int STREAM_STAGE_FITS = STAGE_BYTES + 8 <= TILE_BYTES;  /* + TMA barrier */
  static constexpr int RING_OFF = SS * TILE_BYTES;
  static constexpr int SMEM_STREAM = RING_OFF + (SS + 1) * AV_KERN_ITEM_INTS * 4;
};

template <int M, int N, int D> struct use_wg {
  static constexpr bool value = geom<M, N, D>::WG;
};

/* Element offset of (token tok, dim c, a multiple of 8) in a KV tile: row-major padded, or
 * the 128-byte swizzle (wg_off) on sm_90a. ldmatrix's 8 row addresses (8 consecutive tokens,
 * one 16-byte chunk) fall in distinct banks either way. */
template <int M, int N, int D> __device__ __forceinline__ int kv_at(int tok, int c) {
  if constexpr (geom<M, N, D>::SWZ) return wg_off(tok, c, N);
  else return tok * geom<M, N, D>::P + c;
}

}  // namespace av

#include "kernels/attn_tma.cuh"

namespace av {

/* Where the warp's two query rows (lane/4 and lane/4 + 8 of its 16) start in Q, 32-bit
 * words in the m16n8k16 A layout (columns 2(lane%4) and + 8); null for rows past n_q * group.
 * Reads the plan's query list, so issuing it early hides that load. */
template <typename T, int D>
__device__ __forceinline__ void q_rows(const uint32_t **src, const av_kern_batch_t &b,
                                       const av_kern_launch_t &l, const item_t &it, int kvh,
                                       int row_base, int lane) {
  const int g = b.hq / b.hkv, rows = it.n_q * g;
  const T *Q = static_cast<const T *>(b.q);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row_base + (lane >> 2) + h * 8;
    src[h] = nullptr;
    if (r < rows) {
      const int req = r < g ? it.req0 : l.queries[it.q_begin + r / g];
      src[h] = reinterpret_cast<const uint32_t *>(
          Q + ((size_t)req * b.hq + (size_t)kvh * g + r % g) * D + (lane & 3) * 2);
    }
  }
}
/* The warp's 16 query rows as mma A fragments, read straight from global memory; rows past
 * the item's are zero. */
template <int D>
__device__ __forceinline__ void q_frags(uint32_t (*qf)[4], const uint32_t *const *src) {
#pragma unroll
  for (int k = 0; k < D / 16; ++k) {
    qf[k][0] = src[0] ? __ldg(src[0] + k * 8) : 0u;
    qf[k][1] = src[1] ? __ldg(src[1] + k * 8) : 0u;
    qf[k][2] = src[0] ? __ldg(src[0] + k * 8 + 4) : 0u;
    qf[k][3] = src[1] ? __ldg(src[1] + k * 8 + 4) : 0u;
  }
}

/* The warp's 16 query rows from row_base on, as mma A fragments (q_rows, then q_frags). */
template <typename T, int D>
__device__ __forceinline__ void load_q(uint32_t (*qf)[4], const av_kern_batch_t &b,
                                       const av_kern_launch_t &l, const item_t &it, int kvh,
                                       int row_base, int lane) {
  const uint32_t *src[2];
  q_rows<T, D>(src, b, l, it, kvh, row_base, lane);
  q_frags<D>(qf, src);
}

/* The per-warp running state of one item: unnormalised O, row max and row sum. */
template <int D> struct acc_t {
  float o[D / 8][4];
  float mx[2], sum[2];
  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    mx[0] = mx[1] = -INFINITY;
    sum[0] = sum[1] = 0.f;
  }
};

/* S = Q K^T for this warp's 16 rows x NS tokens of the tile in ks. */
template <typename T, int M, int N, int D>
__device__ __forceinline__ void tile_qk(float (*s)[4], const uint32_t (*qf)[4], const T *ks,
                                        int t0, int lane) {
  constexpr int SN = geom<M, N, D>::NS / 8;
  if constexpr (use_wg<M, N, D>::value) {
    wg_qk<T, N, D>(s, qf, ks);
  } else {
#pragma unroll
    for (int j = 0; j < SN; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int k = 0; k < D / 16; ++k) {
#pragma unroll
      for (int j = 0; j < SN; j += 2) {
        uint32_t kb[4];
        const int mi = lane >> 3;
        const int tok = t0 + j * 8 + (mi >> 1) * 8 + (lane & 7);
        ldsm_x4(kb, ks + kv_at<M, N, D>(tok, k * 16 + (mi & 1) * 8));
        dt<T>::mma(s[j], qf[k], kb[0], kb[1]);
        dt<T>::mma(s[j + 1], qf[k], kb[2], kb[3]);
      }
    }
  }
}

/* Online softmax of S (rows lane/4 and lane/4 + 8; tokens at or past `valid` and below `lo`
 * masked, which only a warp whose tokens run past its segment's end or start before its begin
 * checks: lo > 0 only on the TMA path's first tile of a segment): S becomes the tile's weights
 * P, the running maximum and sum move on, and alpha is the factor O must be rescaled by
 * before this tile's PV: here when RESCALE, else by the caller (rescale_o), so that a body may
 * run this while its previous PV still accumulates into O. The running maximum is kept in the log2 domain of the scaled
 * scores; as the scale is positive, the tile's maximum is taken on the raw scores and each
 * weight is one fused multiply-add and one ex2 (FlashAttention-2 §3.1). */
template <int D> __device__ __forceinline__ void rescale_o(acc_t<D> &a, const float *alpha);
template <int M, int N, int D, bool RESCALE>
__device__ __forceinline__ void tile_softmax(float (*s)[4], acc_t<D> &a, float *alpha,
                                             int valid, int t0, int lane, float scale_log2,
                                             int lo) {
  constexpr int SN = geom<M, N, D>::NS / 8;
  if (valid < t0 + geom<M, N, D>::NS || lo > t0) {
#pragma unroll
    for (int j = 0; j < SN; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int tok = t0 + j * 8 + (lane & 3) * 2 + (e & 1);
        if (tok >= valid || tok < lo) s[j][e] = -INFINITY;
      }
    }
  }
  float tmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < SN; ++j) {
    tmax[0] = fmaxf(tmax[0], fmaxf(s[j][0], s[j][1]));
    tmax[1] = fmaxf(tmax[1], fmaxf(s[j][2], s[j][3]));
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    tmax[h] = fmaxf(tmax[h], __shfl_xor_sync(0xffffffffu, tmax[h], 1));
    tmax[h] = fmaxf(tmax[h], __shfl_xor_sync(0xffffffffu, tmax[h], 2));
    const float mnew = fmaxf(a.mx[h], tmax[h] * scale_log2);
    alpha[h] = a.mx[h] == -INFINITY ? 0.f : ex2(a.mx[h] - mnew);
    a.mx[h] = mnew;
    a.sum[h] *= alpha[h];
  }
  if constexpr (RESCALE) rescale_o<D>(a, alpha);
  const float ref0 = a.mx[0] == -INFINITY ? 0.f : -a.mx[0];
  const float ref1 = a.mx[1] == -INFINITY ? 0.f : -a.mx[1];
#pragma unroll
  for (int j = 0; j < SN; ++j) {
    s[j][0] = ex2(fmaf(s[j][0], scale_log2, ref0));
    s[j][1] = ex2(fmaf(s[j][1], scale_log2, ref0));
    s[j][2] = ex2(fmaf(s[j][2], scale_log2, ref1));
    s[j][3] = ex2(fmaf(s[j][3], scale_log2, ref1));
    a.sum[0] += s[j][0] + s[j][1];
    a.sum[1] += s[j][2] + s[j][3];
  }
}

/* O *= alpha per row. Past the first tiles a row's maximum rarely grows: alpha is then exactly
 * 1 on all the warp's rows and the D/2 multiplies per thread are skipped. */
template <int D> __device__ __forceinline__ void rescale_o(acc_t<D> &a, const float *alpha) {
  if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      a.o[j][0] *= alpha[0];
      a.o[j][1] *= alpha[0];
      a.o[j][2] *= alpha[1];
      a.o[j][3] *= alpha[1];
    }
  }
}

/* tile_softmax, rescale_o, then O += P V with V from vs: P's accumulator layout is the next
 * mma's A layout. */
template <typename T, int M, int N, int D>
__device__ __forceinline__ void tile_softmax_pv(float (*s)[4], acc_t<D> &a, const T *vs,
                                                int valid, int t0, int lane, float scale_log2,
                                                int lo = 0) {
  constexpr int SN = geom<M, N, D>::NS / 8;
  constexpr int ON = D / 8;
  float alpha[2];
  tile_softmax<M, N, D, true>(s, a, alpha, valid, t0, lane, scale_log2, lo);
  if constexpr (use_wg<M, N, D>::value) {
    wg_pv<T, N, D>(a.o, s, vs);
  } else {
#pragma unroll
    for (int kk = 0; kk < SN / 2; ++kk) {
      uint32_t pa[4];
      pa[0] = dt<T>::pack(s[2 * kk][0], s[2 * kk][1]);
      pa[1] = dt<T>::pack(s[2 * kk][2], s[2 * kk][3]);
      pa[2] = dt<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pa[3] = dt<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int j = 0; j < ON; j += 2) {
        uint32_t vb[4];
        const int mi = lane >> 3;
        const int tok = t0 + kk * 16 + (mi & 1) * 8 + (lane & 7);
        ldsm_x4_t(vb, vs + kv_at<M, N, D>(tok, (j + (mi >> 1)) * 8));
        dt<T>::mma(a.o[j], pa, vb[0], vb[1]);
        dt<T>::mma(a.o[j + 1], pa, vb[2], vb[3]);
      }
    }
  }
}

/* The epilogue of a warp that owns its 16 rows whole (WN = 1: m64 tiles): it normalises its
 * accumulators in registers and writes them straight from the mma layout (rows lane/4 and
 * lane/4 + 8, columns 8j + 2(lane%4) and + 1), with no staging, barrier or row loop. The same
 * arithmetic as the staged path with one warp (its factor exp2(m - max) is 1), so the output
 * is bitwise the same. */
template <typename T, int D>
__device__ __forceinline__ void item_write_rows(const av_kern_batch_t &b,
                                                const av_kern_launch_t &l, const item_t &it,
                                                int kvh, const acc_t<D> &a, int row_base,
                                                int lane) {
  const int g = b.hq / b.hkv, rows = it.n_q * g, c0 = (lane & 3) * 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row_base + (lane >> 2) + h * 8;
    if (r >= rows) continue;
    const float L = a.mx[h] == -INFINITY ? 0.f : a.sum[h];
    const float inv = L > 0.f ? 1.f / L : 0.f;
    const int qh = kvh * g + r % g;
    if (it.output == 0) {
      const int req = r < g ? it.req0 : l.queries[it.q_begin + r / g];
      T *out = static_cast<T *>(b.out) + ((size_t)req * b.hq + qh) * D + c0;
#pragma unroll
      for (int j = 0; j < D / 8; ++j)
        *reinterpret_cast<uint32_t *>(out + j * 8) =
            dt<T>::pack(a.o[j][2 * h] * inv, a.o[j][2 * h + 1] * inv);
      if (b.lse && (lane & 3) == 0)
        b.lse[(size_t)req * b.hq + qh] =
            L > 0.f ? (a.mx[h] + log2f(L)) * 0.6931471805599453f : -INFINITY;
    } else {
      const size_t slot = (size_t)it.slot + r / g;
      float *po = b.part_o + (slot * b.hq + qh) * D + c0;
#pragma unroll
      for (int j = 0; j < D / 8; ++j)
        *reinterpret_cast<float2 *>(po + j * 8) =
            make_float2(a.o[j][2 * h] * inv, a.o[j][2 * h + 1] * inv);
      if ((lane & 3) == 0)
        b.part_lse[slot * b.hq + qh] = L > 0.f ? (a.mx[h] + log2f(L)) * 0.6931471805599453f
                                               : -INFINITY;
    }
  }
}

/* The item's epilogue: each warp stages its unnormalised O and (max, sum) per row in `stage`
 * (geom::STAGE_BYTES, free of in-flight copies); then the CTA combines the WN warps of each
 * row group and writes the output or the partial state. Starts with a barrier, so the caller
 * may pass the buffer the last tile was just read from. Tiles whose warps own whole rows skip
 * all that (item_write_rows). */
template <typename T, int M, int N, int D>
__device__ __forceinline__ void item_write(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                           const item_t &it, int kvh, acc_t<D> &a,
                                           char *stage) {
  using G = geom<M, N, D>;
  constexpr int ON = D / 8;
  constexpr int NT = G::T;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = b.hq / b.hkv;
  const int rows = it.n_q * g;
  float *st = reinterpret_cast<float *>(stage);
  float *ml = st + G::W * 16 * G::OP;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    a.sum[h] += __shfl_xor_sync(0xffffffffu, a.sum[h], 1);
    a.sum[h] += __shfl_xor_sync(0xffffffffu, a.sum[h], 2);
  }
  if constexpr (G::WN == 1) {
    item_write_rows<T, D>(b, l, it, kvh, a, (warp % G::WM) * 16, lane);
    return;
  }
  __syncthreads();
  {
    float *sw = st + warp * 16 * G::OP;
    const int r0 = lane >> 2, c0 = (lane & 3) * 2;
#pragma unroll
    for (int j = 0; j < ON; ++j) {
      *reinterpret_cast<float2 *>(sw + r0 * G::OP + j * 8 + c0) =
          make_float2(a.o[j][0], a.o[j][1]);
      *reinterpret_cast<float2 *>(sw + (r0 + 8) * G::OP + j * 8 + c0) =
          make_float2(a.o[j][2], a.o[j][3]);
    }
    if ((lane & 3) == 0) {
      ml[(warp * 16 + r0) * 2] = a.mx[0];
      ml[(warp * 16 + r0) * 2 + 1] = a.sum[0];
      ml[(warp * 16 + r0 + 8) * 2] = a.mx[1];
      ml[(warp * 16 + r0 + 8) * 2 + 1] = a.sum[1];
    }
  }
  __syncthreads();
  /* Once per row (a thread each): the warps' weights exp2(m_w - max) / L, written over their
   * maxima, the lse of a partial state, and for a final output the request, written over the
   * first warp's sum (each thread reads and writes only its own row's entries). */
  for (int r = tid; r < rows; r += NT) {
    const int rg = r / 16, rr = r % 16;
    float gm = -INFINITY, f[G::WN];
#pragma unroll
    for (int w = 0; w < G::WN; ++w) gm = fmaxf(gm, ml[((w * G::WM + rg) * 16 + rr) * 2]);
    float L = 0.f;
#pragma unroll
    for (int w = 0; w < G::WN; ++w) {
      const int e = ((w * G::WM + rg) * 16 + rr) * 2;
      f[w] = ml[e] == -INFINITY ? 0.f : exp2f(ml[e] - gm);
      L += f[w] * ml[e + 1];
    }
    const float inv = L > 0.f ? 1.f / L : 0.f;
#pragma unroll
    for (int w = 0; w < G::WN; ++w) ml[((w * G::WM + rg) * 16 + rr) * 2] = f[w] * inv;
    if (it.output == 0) {
      const int req = r < g ? it.req0 : l.queries[it.q_begin + r / g];
      ml[(rg * 16 + rr) * 2 + 1] = __int_as_float(req);
      if (b.lse)
        b.lse[(size_t)req * b.hq + kvh * g + r % g] =
            L > 0.f ? (gm + log2f(L)) * 0.6931471805599453f : -INFINITY;
    } else {
      const size_t slot = (size_t)it.slot + r / g;
      /* natural-log lse of the scaled scores: (max + log2 sum) ln 2 */
      b.part_lse[slot * b.hq + kvh * g + r % g] =
          L > 0.f ? (gm + log2f(L)) * 0.6931471805599453f : -INFINITY;
    }
  }
  __syncthreads();
  constexpr int C4 = D / 4;
  for (int i = tid; i < rows * C4; i += NT) {
    const int r = i / C4, c = (i % C4) * 4;
    const int rg = r / 16, rr = r % 16;
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll
    for (int w = 0; w < G::WN; ++w) {
      const int ww = w * G::WM + rg;
      const float f = ml[(ww * 16 + rr) * 2];
      const float4 v = *reinterpret_cast<const float4 *>(st + (ww * 16 + rr) * G::OP + c);
      a0 += f * v.x;
      a1 += f * v.y;
      a2 += f * v.z;
      a3 += f * v.w;
    }
    const int qh = kvh * g + r % g;
    if (it.output == 0) {
      const int req = __float_as_int(ml[(rg * 16 + rr) * 2 + 1]);
      T *out = static_cast<T *>(b.out) + ((size_t)req * b.hq + qh) * D + c;
      uint2 pk;
      pk.x = dt<T>::pack(a0, a1);
      pk.y = dt<T>::pack(a2, a3);
      *reinterpret_cast<uint2 *>(out) = pk;
    } else {
      const size_t slot = (size_t)it.slot + r / g;
      *reinterpret_cast<float4 *>(b.part_o + (slot * b.hq + qh) * D + c) =
          make_float4(a0, a1, a2, a3);
    }
  }
}

__device__ __forceinline__ void trace_write(const av_kern_batch_t &b, const item_t &it, int kvh,
                                            unsigned long long t0, unsigned long long t1) {
  av_kern_trace_rec_t *r = b.trace + (size_t)it.trace * b.hkv + kvh;
  r->start_ns = t0;
  r->end_ns = t1;
  r->smid = smid();
}

/* One item on KV head kvh: the whole CTA cooperates; smem is geom<M,N,D>::SMEM bytes. */
template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_item(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                          const item_t &it, int kvh, char *smem) {
  using G = geom<M, N, D>;
  constexpr int NT = G::T;
  constexpr int KT = D / 16;        /* k-steps of QK^T */
  constexpr int SN = G::NS / 8;     /* n8 tiles of S per warp */
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % G::WM, wn = warp / G::WM;
  T *kvbuf = reinterpret_cast<T *>(smem);
  constexpr int S = G::S;
  constexpr int BUF = G::BUF;
  const float scale_log2 = b.scale * 1.4426950408889634f;

  /* Pipeline: tiles 0..S-2 are issued up front; iteration t issues tile t+S-1 into the
   * buffer iteration t-1 freed, then waits for tile t only (S-1 tiles stay in flight while
   * it computes). Block ids are always one issued tile ahead (kv_loader::fetch). */
  kv_src<T, N, D, NT, G::SWZ> kv;
  kv.template init<S, BUF>(tid, b, kvbuf);
  typename decltype(kv)::cursor ld, cp;
  ld.start(l.segs, it, kv.amask());
  cp = ld;
  if (ld.valid()) kv.fetch(ld, b);
#pragma unroll
  for (int s0 = 0; s0 < S - 1; ++s0) {
    if (ld.valid()) {
      kv.issue(kvbuf + s0 * BUF, kvbuf + s0 * BUF + G::VOFF, b, kvh);
      ld.template next<N>(l.segs);
      if (ld.valid()) kv.fetch(ld, b);
    }
    kv.commit();
  }
  uint32_t qf[KT][4];
  load_q<T, D>(qf, b, l, it, kvh, wm * 16, lane);
  acc_t<D> a;
  a.reset();

  int rb = 0, wb = S - 1;  /* buffer read this iteration, buffer written */
  while (cp.valid()) {
    if (ld.valid()) {
      kv.issue(kvbuf + wb * BUF, kvbuf + wb * BUF + G::VOFF, b, kvh);
      ld.template next<N>(l.segs);
      if (ld.valid()) kv.fetch(ld, b);
    }
    kv.commit();
    const T *ks = kvbuf + rb * BUF;
    kv.template ready<S - 1>(ks, rb);
    float s[SN][4];
    tile_qk<T, M, N, D>(s, qf, ks, wn * G::NS, lane);
    tile_softmax_pv<T, M, N, D>(s, a, ks + G::VOFF, cp.end - cp.pos, wn * G::NS, lane,
                                scale_log2, cp.low());
    __syncthreads();  /* buffer rb is refilled by the next iteration */
    cp.template next<N>(l.segs);
    rb = rb + 1 == S ? 0 : rb + 1;
    wb = wb + 1 == S ? 0 : wb + 1;
  }
  kv.drain();
  item_write<T, M, N, D>(b, l, it, kvh, a, smem);
}

}  // namespace av

#include "kernels/attn_wg_item.cuh"
#include "kernels/attn_ws.cuh"

namespace av {

template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_traced(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                            int item_index, int kvh, char *smem) {
  const item_t it = load_item(l.items, item_index);
  unsigned long long t0 = 0;
  if (b.trace && threadIdx.x == 0) t0 = globaltimer();
  if constexpr (geom<M, N, D>::WS)
    attn_item_ws<T, M, N, D>(b, l, it, kvh, smem);
  else if constexpr (wg_ahead<M, N, D>::value)
    attn_item_wg<T, M, N, D>(b, l, it, kvh, smem);
  else
    attn_item<T, M, N, D>(b, l, it, kvh, smem);
  if (b.trace) {
    __syncthreads();
    if (threadIdx.x == 0) trace_write(b, it, kvh, t0, globaltimer());
  }
}

/* One CTA per item (partial and decode kinds): grid (items, hkv). */
template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_grid(const av_kern_batch_t &b, const av_kern_launch_t &l) {
  extern __shared__ __align__(1024) char smem[];  /* swizzled tiles: 1024-byte atoms */
  attn_traced<T, M, N, D>(b, l, blockIdx.x, blockIdx.y, smem);
}

}  // namespace av

#include "kernels/attn_stream.cuh"

/* Kernel symbols are extern "C" so the compiler's resource report names them plainly
 * (kernels/gen_variants.py parses it into kernels/variants.json). Each CTA first lets a
 * merge launched as its programmatic dependent (the pdl launch model) be scheduled once every
 * CTA of the launch has started; without such a dependent the instruction does nothing. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define AV_PDL_TRIGGER() asm volatile("griddepcontrol.launch_dependents;")
#else
#define AV_PDL_TRIGGER() (void)0
#endif
#define AV_DEFINE_ATTN(KIND, BODY, TN, DT, M, N, D)                                 \
  extern "C" __global__ void __launch_bounds__(av::geom<M, N, D>::T,               \
                                               av::geom<M, N, D>::MINB)            \
      av_k_##KIND##_##TN##_d##D##_m##M##_n##N(const av_kern_batch_t b,             \
                                              const av_kern_launch_t l) {          \
    AV_PDL_TRIGGER();                                                              \
    av::BODY<DT, M, N, D>(b, l);                                                   \
  }

#endif
