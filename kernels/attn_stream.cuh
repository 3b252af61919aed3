/* The persistent kernel's body: CTA c runs the items queue[queue_off[c] .. queue_off[c+1])
 * (FlashInfer §3.3's work queues, used by streamk_balance and greedy_division) as one stream
 * of KV tiles. The copies run S-1 tiles ahead of the math across item boundaries, so a short
 * item's prologue (item record, segments, block table, first tile) is hidden behind the
 * previous item's math instead of being paid once per item: FlashInfer's persistent kernels
 * keep their pipeline full the same way. Each item still gets its own epilogue (output or
 * partial state) and, in trace mode, its own record: start when the CTA starts on it (the
 * previous item's end), end when its results are written. Included by attn.cuh. */
#ifndef AV_ATTN_STREAM_CUH
#define AV_ATTN_STREAM_CUH

namespace av {

/* The copy side of the stream: the queue position whose tiles are being issued, its tile
 * cursor and the block ids of the next tile. Advancing past an item's last tile opens the
 * next item and records it (thread 0) in the shared ring the math side reads it from. */
template <typename T, int M, int N, int D> struct stream_loader {
  using G = geom<M, N, D>;
  kv_src<T, N, D, G::T, G::SWZ> kl;
  typename decltype(kl)::cursor cur;
  int k, kend;
  __device__ __forceinline__ bool more() const { return k < kend; }
  __device__ __forceinline__ void open(const av_kern_launch_t &l, int32_t *ring) {
    const int32_t *rec = l.items + (size_t)l.queue[k] * AV_KERN_ITEM_INTS;
    const item_t it = item_from(rec);
    cur.start(l.segs, it, kl.amask());
    if (threadIdx.x == 0) {
      int32_t *slot = ring + (k % (G::SS + 1)) * AV_KERN_ITEM_INTS;
#pragma unroll
      for (int f = 0; f < AV_KERN_ITEM_INTS; ++f) slot[f] = rec[f];
    }
  }
  /* Issues the tile at the cursor into buffer `buf`, then moves to the next tile (opening
   * the next item when this one is done) and fetches its block ids. */
  __device__ __forceinline__ void issue_next(T *buf, const av_kern_batch_t &b,
                                             const av_kern_launch_t &l, int kvh,
                                             int32_t *ring) {
    kl.issue(buf, buf + G::VOFF, b, kvh);
    cur.template next<N>(l.segs);
    if (!cur.valid() && ++k < kend) open(l, ring);
    if (k < kend) kl.fetch(cur, b);
  }
};

template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_stream(const av_kern_batch_t &b, const av_kern_launch_t &l) {
  using G = geom<M, N, D>;
  static_assert(G::STREAM_STAGE_FITS, "the epilogue must fit in one ring buffer");
  extern __shared__ __align__(1024) char smem[];  /* swizzled tiles: 1024-byte atoms */
  constexpr int S = G::SS;
  constexpr int BUF = G::BUF;
  constexpr int SN = G::NS / 8;
  const int kvh = blockIdx.y, kbeg = l.queue_off[blockIdx.x], kend = l.queue_off[blockIdx.x + 1];
  if (kbeg >= kend) return;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % G::WM, wn = warp / G::WM;
  const float scale_log2 = b.scale * 1.4426950408889634f;
  T *kvbuf = reinterpret_cast<T *>(smem);
  int32_t *ring = reinterpret_cast<int32_t *>(smem + G::RING_OFF);
  unsigned long long t_item = 0;
  if (b.trace && tid == 0) t_item = globaltimer();

  stream_loader<T, M, N, D> ld;
  ld.kl.template init<S, BUF>(tid, b, kvbuf);
  ld.k = kbeg;
  ld.kend = kend;
  ld.open(l, ring);
  /* Item k's record is ring slot k % (S + 1): the copies, at most S tiles ahead, open item
   * k + S + 1 (which reuses the slot) only after item k's epilogue has read it. */
  const item_t first = load_item(l.items, l.queue[kbeg]);
  auto cp = ld.cur;
  ld.kl.fetch(ld.cur, b);
#pragma unroll
  for (int s0 = 0; s0 < S - 1; ++s0) {
    if (ld.more()) ld.issue_next(kvbuf + s0 * BUF, b, l, kvh, ring);
    ld.kl.commit();
  }
  uint32_t qf[D / 16][4];
  const uint32_t *qsrc[2];
  q_rows<T, D>(qsrc, b, l, first, kvh, wm * 16, lane);
  q_frags<D>(qf, qsrc);
  acc_t<D> a;
  a.reset();

  int k = kbeg, rb = 0, wb = S - 1;
  while (k < kend) {
    if (ld.more()) ld.issue_next(kvbuf + wb * BUF, b, l, kvh, ring);
    ld.kl.commit();
    ld.kl.template ready<S - 1, true>(kvbuf + rb * BUF, rb);
    /* The next item's record is in the ring by now (its first tile is issued), so its
     * query rows are looked up before this tile's math and its Q fragments loaded right
     * after QK^T, the last use of this item's. */
    const bool last = cp.template last<N>();
    const bool chain = last && k + 1 < kend;
    if (chain)
      q_rows<T, D>(qsrc, b, l, item_from(ring + ((k + 1) % (S + 1)) * AV_KERN_ITEM_INTS), kvh,
                   wm * 16, lane);
    const T *ks = kvbuf + rb * BUF;
    float s[SN][4];
    tile_qk<T, M, N, D>(s, qf, ks, wn * G::NS, lane);
    if (chain) q_frags<D>(qf, qsrc);
    tile_softmax_pv<T, M, N, D>(s, a, ks + G::VOFF, cp.end - cp.pos, wn * G::NS, lane,
                                scale_log2, cp.low());
    if (last) {
      /* buffer rb is refilled only by the next iteration's copies: stage the epilogue there */
      const item_t it = item_from(ring + (k % (S + 1)) * AV_KERN_ITEM_INTS);
      item_write<T, M, N, D>(b, l, it, kvh, a, smem + rb * BUF * (int)sizeof(T));
      if (b.trace) {
        __syncthreads();
        if (tid == 0) {
          const unsigned long long now = globaltimer();
          trace_write(b, it, kvh, t_item, now);
          t_item = now;
        }
      }
      ++k;
      if (k < kend) {
        cp.start(l.segs, item_from(ring + (k % (S + 1)) * AV_KERN_ITEM_INTS), ld.kl.amask());
        a.reset();
      }
    } else {
      cp.template next<N>(l.segs);
    }
    __syncthreads();  /* buffer rb is refilled by the next iteration */
    rb = rb + 1 == S ? 0 : rb + 1;
    wb = wb + 1 == S ? 0 : wb + 1;
  }
  ld.kl.drain();
}

/* The persistent kernel's entry: one stream per CTA (grid: queues x KV heads). */
template <typename T, int M, int N, int D>
__device__ __forceinline__ void attn_persistent(const av_kern_batch_t &b,
                                                const av_kern_launch_t &l) {
  attn_stream<T, M, N, D>(b, l);
}

}  // namespace av

#endif
