/* The warp-specialised m128 item body (sm_90a, TMA copies): a compute-bound tile that fills an
 * SM by itself, in the arrangement of FlashAttention-3 (§3.1 warp specialisation, §3.2
 * ping-pong and intra-warpgroup overlap).
 *
 *  - Three warpgroups, 384 threads. Warpgroup 0 is the producer: its first warp issues the TMA
 *    copies of every KV tile into a three-stage ring of n128 tiles (kv_tma, 64 KiB a stage)
 *    and the others idle. `setmaxnreg` gives the producer's registers to the consumers (40
 *    against 232 a thread), so that O, S, P and Q of 64 rows stay in registers.
 *  - Warpgroups 1 and 2 are the consumers, 64 query rows each (128 GQA-fused rows a CTA): both
 *    read every copied tile, so a tile's bytes land in shared memory once per 128 rows.
 *  - Each stage has a "full" mbarrier (the copies complete their bytes on it) and an "empty"
 *    one that the consumers' 8 warps arrive on once their PV of that tile has completed; the
 *    producer refills a stage when it is empty. No CTA barrier runs in the loop, so the
 *    warpgroups may drift apart.
 *  - Intra-warpgroup overlap: iteration i issues QK^T of tile i and PV of tile i-1 as two
 *    wgmma groups, runs tile i's softmax once the first completes while the second still
 *    runs, and rescales O only after that PV has completed.
 *  - Ping-pong (WS_PINGPONG, on): the consumer warpgroups take turns issuing their GEMMs
 *    through two named barriers, so one's softmax runs while the other's GEMMs keep the
 *    tensor cores busy.
 *
 * The tile needs the executor's tensor maps of the cache (a block size TMA can box); the
 * executor refuses a plan naming it otherwise. It is built only for sm_90a: compiled for
 * another architecture the body traps, and its shared memory (three 68 KiB stages) exceeds
 * every other architecture's per-block limit, so no plan for those GPUs can name it
 * (schedulers keep only tiles with a non-zero occupancy). Included by attn.cuh. */
#ifndef AV_ATTN_WS_CUH
#define AV_ATTN_WS_CUH

/* registers a thread of the producer and of the consumer warpgroups keep (setmaxnreg; the
 * three warpgroups' total must fit the SM's 64 Ki registers) */
#define AV_WS_REGS_PRODUCER 40
#define AV_WS_REGS_CONSUMER 232

namespace av {
constexpr bool WS_PINGPONG = true;  /* the consumers take turns (measured faster) */

__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
#if AV_HAVE_TMA
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
#endif
}
template <int R> __device__ __forceinline__ void ws_setmaxnreg_inc() {
#if AV_HAVE_WGMMA
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
template <int R> __device__ __forceinline__ void ws_setmaxnreg_dec() {
#if AV_HAVE_WGMMA
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
__device__ __forceinline__ void ws_bar_sync(int id) {
  if (WS_PINGPONG) asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory");
}
__device__ __forceinline__ void ws_bar_arrive(int id) {
  if (WS_PINGPONG) asm volatile("bar.arrive %0, 256;\n" ::"r"(id) : "memory");
}

/* The producer: warp 0 copies the item's tiles in order into the ring, waiting for a stage to
 * be emptied before refilling it (tile i waits for the release of tile i - S). */
template <typename T, int N, int D, int S, int BUF, int VOFF>
__device__ __forceinline__ void ws_produce(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                           const item_t &it, int kvh, T *kvbuf) {
  using kt = kv_tma<T, N, D>;
  if (threadIdx.x >= 32) return;
  kt tl;
  tl.init(b);
  tile_cursor_t<true> ld;
  ld.start(l.segs, it, tl.rows - 1);
  for (int i = 0; ld.valid(); ++i) {
    const int st = i % S;
    T *ks = kvbuf + st * BUF;
    tl.fetch(ld, b);
    if (i >= S) mbar_wait(kt::bar(ks) - 1, (unsigned)(i / S - 1) & 1u);
    tl.issue(ks, ks + VOFF, b, kvh);
    ld.template next<N>(l.segs);
  }
}

/* A consumer warpgroup (wg 0 or 1 of the two): its 64 rows against every tile of the item. */
template <typename T, int N, int D, int S, int BUF, int VOFF>
__device__ __forceinline__ void ws_consume(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                           const item_t &it, int kvh, const T *kvbuf, int wg) {
  using kt = kv_tma<T, N, D>;
  constexpr int SN = N / 8;
  const int cw = (threadIdx.x >> 5) - 4, lane = threadIdx.x & 31;
  const float scale_log2 = b.scale * 1.4426950408889634f;
  const int mine = 1 + wg, theirs = 2 - wg;  /* named barriers 1 and 2: whose turn it is */
  uint32_t qf[D / 16][4];
  load_q<T, D>(qf, b, l, it, kvh, cw * 16, lane);
  acc_t<D> a;
  a.reset();
  tile_cursor_t<true> cp;
  cp.start(l.segs, it, b.kv_map_rows - 1);
  float s[SN][4], alpha[2];
  uint32_t pa[N / 16][4];
  auto release = [&](int st) {
    __syncwarp();
    if (lane == 0) mbar_arrive(kt::bar(kvbuf + st * BUF) - 1);
  };
  if (wg == 1) ws_bar_arrive(1);  /* warpgroup 0 takes the first turn */
  if (!cp.valid()) return;
  /* tile 0: QK^T and its softmax (O is zero, so no rescale) */
  mbar_wait(kt::bar(kvbuf), 0);
  ws_bar_sync(mine);
  wg_qk_issue<T, N, D>(s, qf, kvbuf);
  ws_bar_arrive(theirs);
  wg_wait<0>();
  wg_fence_regs<SN>(s);
  tile_softmax<64, N, D, false>(s, a, alpha, cp.end - cp.pos, 0, lane, scale_log2, cp.low());
  wg_pack_p<T, N>(pa, s);
  int prev = 0;
  cp.template next<N>(l.segs);
  for (int i = 1; cp.valid(); ++i) {
    const int st = i % S;
    const T *ks = kvbuf + st * BUF;
    mbar_wait(kt::bar(ks), (unsigned)(i / S) & 1u);
    ws_bar_sync(mine);
    wg_qk_issue<T, N, D>(s, qf, ks);
    wg_pv_issue<T, N, D>(a.o, pa, kvbuf + prev * BUF + VOFF);
    ws_bar_arrive(theirs);
    wg_wait<1>();  /* QK^T of tile i; PV of tile i-1 still runs */
    wg_fence_regs<SN>(s);
    tile_softmax<64, N, D, false>(s, a, alpha, cp.end - cp.pos, 0, lane, scale_log2, cp.low());
    wg_wait<0>();
    wg_fence_regs<D / 8>(a.o);
    release(prev);
    rescale_o<D>(a, alpha);
    wg_pack_p<T, N>(pa, s);
    prev = st;
    cp.template next<N>(l.segs);
  }
  ws_bar_sync(mine);
  wg_pv_issue<T, N, D>(a.o, pa, kvbuf + prev * BUF + VOFF);
  if (wg == 0) ws_bar_arrive(theirs);  /* warpgroup 1's last turn leaves none pending */
  wg_wait<0>();
  wg_fence_regs<D / 8>(a.o);
  release(prev);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    a.sum[h] += __shfl_xor_sync(0xffffffffu, a.sum[h], 1);
    a.sum[h] += __shfl_xor_sync(0xffffffffu, a.sum[h], 2);
  }
  item_write_rows<T, D>(b, l, it, kvh, a, cw * 16, lane);
}

template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_item_ws(const av_kern_batch_t &b, const av_kern_launch_t &l,
                                             const item_t &it, int kvh, char *smem) {
  using G = geom<M, N, D>;
  static_assert(M == 128 && G::T == 384 && G::S >= 2, "three warpgroups over a ring");
#if AV_HAVE_WGMMA
  using kt = kv_tma<T, N, D>;
  T *kvbuf = reinterpret_cast<T *>(smem);
  if (threadIdx.x == 0)
#pragma unroll
    for (int st = 0; st < G::S; ++st) {
      mbar_init(kt::bar(kvbuf + st * G::BUF), 1);       /* full: the producer's arrival */
      mbar_init(kt::bar(kvbuf + st * G::BUF) - 1, 8);   /* empty: the consumers' 8 warps */
    }
  __syncthreads();
  const int wg = threadIdx.x >> 7;
  if (wg == 0) {
    ws_setmaxnreg_dec<AV_WS_REGS_PRODUCER>();
    ws_produce<T, N, D, G::S, G::BUF, G::VOFF>(b, l, it, kvh, kvbuf);
  } else {
    ws_setmaxnreg_inc<AV_WS_REGS_CONSUMER>();
    ws_consume<T, N, D, G::S, G::BUF, G::VOFF>(b, l, it, kvh, kvbuf, wg - 1);
  }
#else
  (void)b, (void)l, (void)it, (void)kvh, (void)smem;
  __trap();
#endif
}

}  // namespace av

#endif
