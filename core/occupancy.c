/* Resident CTAs per SM, following the CUDA occupancy calculator (cuda_occupancy.h,
 * cudaOccMaxActiveBlocksPerMultiprocessor) with the default cache configuration: the bound
 * from each resource (CTA slots, warp slots, registers per sub-partition, shared memory) and
 * the binding one. Checked row by row against cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * on an H200 (tests/data/occupancy_h200.json). */
#include "core/occupancy.h"

#include <limits.h>

const char *av_occ_limit_name(av_occ_limit_t l) {
  switch (l) {
    case AV_OCC_LIMIT_CTAS: return "ctas";
    case AV_OCC_LIMIT_WARPS: return "warps";
    case AV_OCC_LIMIT_REGS: return "registers";
    case AV_OCC_LIMIT_SMEM: return "shared memory";
    case AV_OCC_LIMIT_INVALID: return "invalid";
  }
  return "?";
}

static int div_up(int x, int y) { return (x + y - 1) / y; }
static int round_up(int x, int y) { return div_up(x, y) * y; }

/* cudaOccMaxBlocksPerSMRegsLimit: registers are allocated per warp in units of
 * reg_alloc_unit, and each of the SM's sub-partitions (warp_alloc_granularity of them, 4 on
 * sm_70+) holds whole warps from its own quarter of the register file. The per-CTA check
 * assumes warps spread over all sub-partitions, so the CTA's warps are rounded up to the
 * sub-partition count there. Returns -1 when the CTA cannot launch. */
static int regs_limit(const av_gpu_t *g, int warps, int regs_per_thread) {
  int parts = g->warp_alloc_granularity;
  int per_warp = round_up(regs_per_thread * 32, g->reg_alloc_unit);
  if (regs_per_thread > g->max_regs_per_thread) return -1;
  if (per_warp * round_up(warps, parts) > g->max_regs_per_cta) return -1; /* hardware check */
  if (per_warp * warps > g->max_regs_per_cta) return -1;                  /* software check */
  if (per_warp == 0) return INT_MAX;
  int warps_per_part = (g->regs_per_sm / parts) / per_warp;
  return warps_per_part * parts / warps;
}

/* cudaOccMaxBlocksPerSMSmemLimit with the default carveout: the CTA's static + dynamic
 * shared memory plus the driver's per-CTA reservation (sm_80+), rounded up to the
 * allocation unit, against the SM's whole shared memory. The per-CTA limit is the opt-in
 * maximum plus the reservation. Returns -1 when the CTA cannot launch. */
static int smem_limit(const av_gpu_t *g, int smem_bytes) {
  long alloc = (long)round_up(smem_bytes + g->smem_reserved_per_cta_bytes,
                              g->smem_alloc_unit_bytes);
  if (smem_bytes > g->smem_per_cta_max_bytes ||
      alloc > (long)g->smem_per_cta_max_bytes + g->smem_reserved_per_cta_bytes)
    return -1;
  if (alloc == 0) return INT_MAX;
  return (int)(g->smem_per_sm_bytes / alloc);
}

void av_occupancy(const av_gpu_t *g, int threads, int regs_per_thread, int smem_bytes,
                  av_occupancy_t *out) {
  out->ctas_per_sm = 0;
  out->limit = AV_OCC_LIMIT_INVALID;
  out->by_ctas = out->by_warps = out->by_regs = out->by_smem = 0;
  if (threads <= 0 || threads > g->max_threads_per_cta || regs_per_thread < 0 ||
      smem_bytes < 0)
    return;
  int warps = div_up(threads, 32);
  int by_regs = regs_limit(g, warps, regs_per_thread);
  int by_smem = smem_limit(g, smem_bytes);
  out->by_ctas = g->max_ctas_per_sm;
  out->by_warps = g->max_warps_per_sm / warps;
  out->by_regs = by_regs < 0 ? 0 : by_regs;
  out->by_smem = by_smem < 0 ? 0 : by_smem;
  if (by_regs < 0 || by_smem < 0) return;
  /* The binding limit, in the calculator's order of preference for ties: the resource a
   * user can change (smem, regs) is reported before the fixed slot limits. */
  int k = out->by_ctas;
  out->limit = AV_OCC_LIMIT_CTAS;
  if (out->by_warps <= k) {
    k = out->by_warps;
    out->limit = AV_OCC_LIMIT_WARPS;
  }
  if (out->by_regs <= k) {
    k = out->by_regs;
    out->limit = AV_OCC_LIMIT_REGS;
  }
  if (out->by_smem <= k) {
    k = out->by_smem;
    out->limit = AV_OCC_LIMIT_SMEM;
  }
  out->ctas_per_sm = k;
  if (k == 0) out->limit = AV_OCC_LIMIT_INVALID;
}
