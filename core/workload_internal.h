/* Internals shared by the workload files (sim/workload*.c): size limits, message locations
 * and the located variants of the builders, so a JSON spec's errors name its key path
 * (`workloads[1].B[2]`) while the public builders report paths relative to their arguments. */
#ifndef AV_WORKLOAD_INTERNAL_H
#define AV_WORKLOAD_INTERNAL_H

#include <stdint.h>

#include "core/workload.h"

/* Sane limits: every count and sum below stays far from int32/int64 overflow, and a
 * batch this large is already beyond any serving engine's decode step. */
#define AV_WL_MAX_NODES (1 << 22)
#define AV_WL_MAX_REQUESTS (1 << 20)
#define AV_WL_MAX_NODE_TOKENS INT32_MAX
#define AV_WL_MAX_PATH_TOKENS ((int64_t)1 << 40)
#define AV_WL_MAX_SHARE_SUM (1 << 28) /* sum of shares = size of node_reqs */
#define AV_WL_MAX_BLOCK_SIZE (1 << 20)
#define AV_WL_MAX_BLOCKS (1 << 26)    /* block-table entries over all requests */
#define AV_WL_MAX_DEPTH 16            /* random forests */

/* Where a builder's input came from: messages get `source` and `path` + "." + relative key. */
typedef struct av__wloc {
  const char *source; /* may be NULL */
  const char *path;   /* prefix, may be NULL or "" */
  av_error_t *err;
  /* block_table from JSON: request r was written as {"blocks": [...]} (its ids' paths are
   * requests[r].blocks[j], else requests[r][j]). NULL for programmatic input. */
  const unsigned char *bt_object_form;
} av__wloc_t;

/* Records an error at path prefix + relative key (rel may be NULL: the prefix itself). */
int av__wl_error(const av__wloc_t *loc, int code, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Full key path prefix + rel into out. */
void av__wl_path(const av__wloc_t *loc, const char *rel, char *out, size_t size);

/* h, or the default (32, 8) heads, d 128, fp16 in *buf when h is NULL. */
const av_heads_t *av__heads_or_default(const av_heads_t *h, av_heads_t *buf);
/* Heads: hq, hkv >= 1, hq % hkv == 0, head_dim in {64, 128, 256}, a known dtype. */
int av__heads_check(const av_heads_t *h, const av__wloc_t *loc);
int av__workload_finalize(av_workload_t *w, const av__wloc_t *loc);
/* Sets w->name from a format (truncated with "..." when too long). */
void av__workload_set_name(av_workload_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "[1,4,16]" into out, shortened with "..." when it does not fit. */
void av__wl_format_list(char *out, size_t size, const int64_t *v, int n);

av_workload_t *av__workload_levels(const int64_t *B, const int64_t *L, int n_levels,
                                   const av_heads_t *heads, const av__wloc_t *loc);
av_workload_t *av__workload_kary(int arity, int depth, const int64_t *L, int n_L,
                                 int requests_per_leaf, const av_heads_t *heads,
                                 const av__wloc_t *loc);
av_workload_t *av__workload_degenerate(int arity, int depth, const int64_t *L, int n_L,
                                       const av_heads_t *heads, const av__wloc_t *loc);
av_workload_t *av__workload_ratio(int64_t batch, int64_t context_tokens, double shared_ratio,
                                  const av_heads_t *heads, const av__wloc_t *loc);
av_workload_t *av__workload_random(const av_random_spec_t *spec, const av_heads_t *heads,
                                   const av__wloc_t *loc);
/* Block ids of a block table: per-request lists, or (lists NULL) the rows of an int32
 * table, `stride` entries apart. `shared`, when not NULL, receives per request the leading
 * blocks it shares with the previous request (0 for the first). */
typedef struct av__bt_ids {
  const int64_t *const *lists;
  const int32_t *table;
  int64_t stride;
  int32_t *shared;
} av__bt_ids_t;
av_workload_t *av__workload_block_table(const av__bt_ids_t *ids, const int32_t *n_blocks,
                                        int32_t n_requests, int block_size,
                                        const int32_t *last_block_tokens,
                                        const av_heads_t *heads, const av__wloc_t *loc);

#endif
