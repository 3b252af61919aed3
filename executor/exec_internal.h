/* Host-side helpers of the GPU executor that need no device: 16-bit float conversion, the
 * random paged KV cache, and the fp64 reference attention read from the same host copies
 * that were uploaded (executor/exec_host.c). */
#ifndef AV_EXEC_INTERNAL_H
#define AV_EXEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/workload.h"

/* 16-bit element (fp16 or bf16) to double. */
double av__exec_to_double(uint16_t x, av_dtype_t t);

/* Host copy of one batch's data, laid out as the kernels read it (kernels/kernels.h). */
typedef struct av_exec_host {
  int hq, hkv, d, bs;
  av_dtype_t dtype;
  int32_t n_blocks;
  int32_t *node_block_off;   /* n_nodes + 1 */
  int32_t *block_ids;        /* shuffled physical ids */
  uint16_t *q;               /* [n_requests][hq][d] */
  uint16_t *k, *v;           /* [n_blocks][hkv][bs][d] */
  /* Reference outputs of the sampled (request, q head) pairs. */
  int32_t n_check;
  int32_t *check_req, *check_head;
  double *ref;               /* n_check x d */
} av_exec_host_t;

/* Bytes the batch's device buffers take (Q, K, V, outputs, block table). */
size_t av__exec_batch_bytes(const av_workload_t *w);
/* Fills h with random data for w (seeded; block ids a random permutation). 0 or -1 (out of
 * memory). */
int av__exec_host_build(av_exec_host_t *h, const av_workload_t *w, uint64_t seed);
/* Computes the fp64 reference for up to max_req requests (spread evenly) and the q heads of
 * KV heads {0, hkv/2, hkv-1}. 0 or -1 (out of memory). */
int av__exec_host_reference(av_exec_host_t *h, const av_workload_t *w, int max_req);
void av__exec_host_free(av_exec_host_t *h);

#endif
