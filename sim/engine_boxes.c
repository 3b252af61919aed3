/* The KV a CTA really copies (docs/simulator.md#kv-copies-by-whole-boxes). On sm_90 the kernels
 * keep every tile in the 128-byte swizzle and copy it by TMA in boxes of r = min(block size,
 * 32) tokens that start on a page boundary (kernels/attn_tma.cuh, kernels/runtime.cu
 * av_kern_kv_maps): a segment's first tile starts at its begin rounded down to r and masks
 * the tokens before it (kernels/attn_kv.cuh, tile_cursor_t<true>), and its last box is read
 * whole. So a piece that begins inside a page reads, and streams through the CTA's pipeline,
 * the tokens from that page's start, and every piece reads up to the end of its last box.
 * The profile measures C(n_q, n) on pieces that begin at token 0 (anvil profile), where the
 * rounding down is nothing; fixed_division's pieces (node length / k) and the long-KV splits
 * begin anywhere. */
#include "sim/engine_internal.h"

/* The TMA path's conditions (av_kern_kv_maps): a Hopper GPU (the kernels' sm_90a build), a
 * power-of-two block size of at least 8 and a head dim that is a multiple of 64; and the
 * run's KV copy (experiment key "kv_copy", anvil exec --kv-copy): cp_async copies
 * token-exact, as kernels without the TMA path do, so records of such runs are re-predicted
 * with it. */
int32_t av__engine_box_rows(const av_gpu_t *gpu, const av_workload_t *w,
                            av_kv_copy_t kv_copy) {
  if (kv_copy == AV_KV_COPY_CP_ASYNC) return 0;
  const int bs = w->block_size_tokens > 0 ? w->block_size_tokens : 16;
  if (gpu->sm_arch != 90 || bs < 8 || (bs & (bs - 1)) || w->heads.head_dim % 64 != 0) return 0;
  return bs < 32 ? bs : 32;
}

void av__engine_box_span(int32_t r, int64_t begin, int64_t end, int64_t *b, int64_t *e) {
  if (r <= 0 || end <= begin) {
    *b = begin;
    *e = end;
    return;
  }
  *b = begin - begin % r;
  *e = (end + r - 1) / r * r;
}

/* Points slot sl's L2 cursor at the first line of the first segment of its item from k on
 * that has tokens, the boxes it copies (AV__NO_PHASE when none is left). */
void av__engine_seg_enter(av__eng_t *e, int64_t sl, const av_item_t *item, int32_t k) {
  for (; k < item->n_seg; k++) {
    const av_segment_t *sg = &e->plan->segments[item->seg_begin + k];
    if (sg->end <= sg->begin) continue;
    int64_t s0, s1;
    av__engine_box_span(e->box_rows, sg->begin, sg->end, &s0, &s1);
    av__l2_cursor_t *c = &e->sl_cur[sl];
    c->seg = k;
    c->s0 = s0;
    c->s1 = s1;
    c->line = s0 / e->line_tokens;
    c->tok = s0;
    c->key = ((uint64_t)e->sl_head[sl] * (uint64_t)e->plan->n_nodes + (uint64_t)sg->node) << 32;
    return;
  }
  e->sl_cur[sl].seg = AV__NO_PHASE;
}
