/* The engine's L2 lookups: where a CTA is in its KV (the cursor over its segments' lines)
 * and the next phase of its KV bytes, split into L2 hits and HBM misses by the model the
 * run chose: runs of lines (sim/engine_ranges.c, the default) or one line at a time through
 * the per-line LRU (sim/l2.c), the reference the range model is tested against
 * (docs/simulator.md#l2-over-ranges). */
#include "sim/engine_internal.h"

/* KV bytes of the job on slot sl, split into L2 hits and HBM misses line by line; returns
 * the HBM-equivalent bytes the CTA must move, *miss_out the part that comes from HBM. A CTA
 * reads its KV over its whole run, and CTAs that read one prefix at nearly the same pace hit
 * each other's lines even when the prefix is larger than the L2: so the lines are looked up
 * a phase (AV__L2_PHASE_LINES lines) at a time, each phase when the CTA has moved the bytes
 * before it (process_sm), in the order the kernel reads them. This call looks up the next phase from
 * the slot's cursor (seg_enter) and leaves its seg at AV__NO_PHASE after the last. Without an
 * L2 a job is one phase. */
static double line_phase(av__eng_t *e, int64_t sl, double *miss_out) {
  const av_item_t *item = &e->plan->items[e->sl_job[sl]];
  if (e->l2.cap == 0) {
    double b = (double)e->item_kv_tokens[e->sl_job[sl]] * e->token_bytes;
    e->hbm_bytes += b;
    e->sl_cur[sl].seg = AV__NO_PHASE;
    *miss_out = b;
    return b;
  }
  const int64_t bs = e->line_tokens;
  double hit = 0, miss = 0;
  av__l2_cursor_t *c = &e->sl_cur[sl];
  for (int32_t left = AV__L2_PHASE_LINES; left > 0 && c->seg != AV__NO_PHASE; left--) {
    const int64_t b = c->line, s0 = c->s0, s1 = c->s1;
    const int64_t lo = b * bs > s0 ? b * bs : s0;
    const int64_t hi = (b + 1) * bs < s1 ? (b + 1) * bs : s1;
    const double bytes = (double)(hi - lo) * e->token_bytes;
    if (av__l2_access(&e->l2, c->key | (uint64_t)b)) hit += bytes;
    else miss += bytes;
    if ((b + 1) * bs < s1) c->line = b + 1;
    else av__engine_seg_enter(e, sl, item, c->seg + 1);
  }
  e->hbm_bytes += miss;
  e->l2_bytes += hit;
  *miss_out = e->cta_caps ? miss : miss + hit * e->l2_cost;
  /* A CTA held to its own rate bound (cta_caps) is limited by its pipeline, not by where
   * the bytes come from: the profile's kernels stream at a fraction of even L2's latency
   * bound, so a hit takes a byte's time of the CTA like a miss does. */
  return miss + hit * (e->cta_caps ? 1.0 : e->l2_cost);
}

double av__engine_kv_phase(av__eng_t *e, int64_t sl, double other, double *hbm_out) {
  if (e->l2_ranges) return av__ranges_phase(e, sl, other, hbm_out);
  double miss, bytes = line_phase(e, sl, &miss) + other;
  *hbm_out = miss + other;
  return bytes;
}
