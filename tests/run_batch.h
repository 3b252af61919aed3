/* The caller's side of tests/gpu_run.c: a serving engine's batch as it holds it (a block
 * table with shuffled physical ids, a paged cache in NHD or HND of random data, queries),
 * uploaded to the device, and the fp64 attention of some of its requests read through the
 * block table, against which a run's outputs are checked. */
#ifndef AV_TESTS_RUN_BATCH_H
#define AV_TESTS_RUN_BATCH_H

#include <stddef.h>
#include <stdint.h>

/* One configuration of the caller's cache. */
typedef struct cfg {
  int hq, hkv, d, dtype, nhd, bs;
} cfg_t;

/* The caller's batch: block table, token counts, cache, queries (host and device). */
typedef struct batch {
  cfg_t c;
  int32_t n, stride;
  int32_t *table, *tokens;
  int64_t n_blocks, sb, sh, st;  /* element strides of block, KV head, token */
  uint16_t *k, *v, *q;
  void *dk, *dv, *dq, *dout;
  float *dlse;
  void *stream;
  /* fp64 reference of the checked requests (all heads): their ids, outputs, lse */
  int32_t n_check, *check;
  double *ref_o, *ref_lse;
} batch_t;

/* A levels tree (B nodes of L tokens per level, nl levels) as the block table a serving
 * engine holds: one request per leaf. */
void batch_levels(batch_t *b, const int64_t *B, const int64_t *L, int nl, uint64_t seed);
/* n requests of `tokens` tokens that are prefixes of one another (one chain of blocks). */
void batch_chain(batch_t *b, const int32_t *tokens, int32_t n, uint64_t seed);
/* The cache and queries of b's table, with random data, on the device; the fp64 reference. */
void batch_upload(batch_t *b, uint64_t seed);
void batch_free(batch_t *b);
/* The fp64 reference of b's checked requests (again after b's tokens changed). */
void batch_reference(batch_t *b);
/* A run's outputs (host copies) against the reference; `what` names the run in a failure. */
void batch_check(const batch_t *b, const uint16_t *out, const float *lse, const char *what);

#endif
