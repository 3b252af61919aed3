/* The m64 item body on sm_90a with QK^T one tile ahead (FlashAttention-3 §3.2, intra-warpgroup
 * overlap of softmax and the two GEMMs): iteration t issues tile t+1's QK^T as an asynchronous
 * wgmma group, then runs tile t's softmax on the CUDA cores while the tensor cores compute it,
 * then tile t's PV. The synchronous order (QK^T, wait, softmax, PV, wait) leaves the tensor
 * cores idle during every softmax; this order runs them under it (the tile's math alone with
 * either order: docs/kernels.md#targets-and-limits). Needs three KV stages (tile t computed,
 * t+1 read by the early QK^T, t+2 copied), so it serves the m64 tiles with S = 3 (n32 at
 * d 128, n64 at d 64); the others keep the synchronous order. Included by attn.cuh. */
#ifndef AV_ATTN_WG_ITEM_CUH
#define AV_ATTN_WG_ITEM_CUH

namespace av {

template <int M, int N, int D> struct wg_ahead {
  static constexpr bool value = use_wg<M, N, D>::value && geom<M, N, D>::S == 3;
};

template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_item_wg(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                             const item_t &it, int kvh, char *smem) {
  using G = geom<M, N, D>;
  constexpr int S = G::S, BUF = G::BUF, SN = N / 8;
  static_assert(S == 3, "one tile copied while two are read");
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  T *kvbuf = reinterpret_cast<T *>(smem);
  const float scale_log2 = b.scale * 1.4426950408889634f;

  kv_src<T, N, D, G::T, true> kv;
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
  uint32_t qf[D / 16][4];
  load_q<T, D>(qf, b, l, it, kvh, warp * 16, lane);
  acc_t<D> a;
  a.reset();
  float s[SN][4], s2[SN][4];
  if (cp.valid()) {
    kv.template ready<S - 2>(kvbuf, 0);
    wg_qk<T, N, D>(s, qf, kvbuf);
  }

  int rb = 0, wb = S - 1;
  while (cp.valid()) {
    /* buffer wb held tile t-1, whose PV ended before the last barrier */
    if (ld.valid()) {
      kv.issue(kvbuf + wb * BUF, kvbuf + wb * BUF + G::VOFF, b, kvh);
      ld.template next<N>(l.segs);
      if (ld.valid()) kv.fetch(ld, b);
    }
    kv.commit();
    auto cn = cp;
    cn.template next<N>(l.segs);
    const int nb = rb + 1 == S ? 0 : rb + 1;
    if (cn.valid()) {
      kv.template ready<1>(kvbuf + nb * BUF, nb);  /* tile t+1; t+2 may still be in flight */
      wg_qk_issue<T, N, D>(s2, qf, kvbuf + nb * BUF);
    }
    /* tile t: softmax while QK^T of t+1 runs, then PV; wg_pv waits for both groups */
    const T *ks = kvbuf + rb * BUF;
    tile_softmax_pv<T, M, N, D>(s, a, ks + G::VOFF, cp.end - cp.pos, 0, lane, scale_log2,
                                cp.low());
    wg_fence_regs<SN>(s2);
#pragma unroll
    for (int j = 0; j < SN; ++j) {
      s[j][0] = s2[j][0];
      s[j][1] = s2[j][1];
      s[j][2] = s2[j][2];
      s[j][3] = s2[j][3];
    }
    __syncthreads();  /* buffer rb is refilled by the next iteration */
    cp = cn;
    rb = nb;
    wb = wb + 1 == S ? 0 : wb + 1;
  }
  kv.drain();
  item_write<T, M, N, D>(b, l, it, kvh, a, smem);
}

}  // namespace av

#endif
