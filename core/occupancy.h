/* Resident CTAs per SM from threads, registers and shared memory, with the CUDA rules
 * (register allocation per warp in units, shared-memory granularity and per-CTA
 * reservation, warp / thread / CTA limits); must agree with
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor. */
#ifndef AV_OCCUPANCY_H
#define AV_OCCUPANCY_H

#include "core/gpu.h"

typedef enum {
  AV_OCC_LIMIT_CTAS = 0, AV_OCC_LIMIT_WARPS, AV_OCC_LIMIT_REGS, AV_OCC_LIMIT_SMEM,
  AV_OCC_LIMIT_INVALID  /* the CTA cannot launch at all (too many threads/regs/smem) */
} av_occ_limit_t;

typedef struct av_occupancy {
  int ctas_per_sm;
  av_occ_limit_t limit;   /* the binding limit */
  int by_ctas, by_warps, by_regs, by_smem; /* the bound each resource gives */
} av_occupancy_t;

const char *av_occ_limit_name(av_occ_limit_t l);
/* smem_bytes is the CTA's dynamic + static shared memory. */
void av_occupancy(const av_gpu_t *g, int threads, int regs_per_thread, int smem_bytes,
                  av_occupancy_t *out);

#endif
