/* The profile file's reader (profile_format/profile_format.h writes it): the profile document
 * (<base>.json) and the "queue" key of the details document, checked key by key with errors
 * naming the file and the key path, into plain arrays of what was measured. Evaluating them
 * (interpolation, the start cost's derivation) is the `profile` cost model's business
 * (costmodels/profile*.c). */
#ifndef AV_PROFILE_READ_H
#define AV_PROFILE_READ_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/json_util.h"
#include "core/plan.h"

/* One entry of "variants": FlashForge §5.2's C(n_q, n) on a grid of query rows n_q and KV
 * tokens n ("n_kv"), each axis strictly increasing with at least 2 points. */
typedef struct av_profile_grid {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  size_t nx, ny;                        /* n_q points, n_kv points */
  int64_t *n_q, *n_kv;                  /* one allocation: n_q[nx], then n_kv[ny] */
  double *time_us;                      /* time_us[j * nx + i] = C(n_q[i], n_kv[j]) */
} av_profile_grid_t;

/* The optional "coresidency" key (docs/simulator.md#co-residency): per kernel variant,
 * how much longer a CTA streams its KV when k CTAs share its SM. */
#define AV_PROFILE_CORES_MAX_K 64

typedef struct av_profile_curve {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n;                                /* points: k[0] = 1 .. k[n-1] */
  double k[AV_PROFILE_CORES_MAX_K];
  double s[AV_PROFILE_CORES_MAX_K];     /* slowdown of the streaming time at k[i]; s[0] = 1 */
  double dur[AV_PROFILE_CORES_MAX_K];   /* the grid's mean CTA duration at k[i] ("duration_us") */
  int has_dur;                          /* dur was in the file */
} av_profile_curve_t;

typedef struct av_profile_curves {
  int n;
  av_profile_curve_t *c;                /* owned */
} av_profile_curves_t;

/* The optional "merge" key: the merge kernel's lone-CTA time over the partial states per
 * (request, query head) row, per head dim and dtype, and an empty persistent CTA's time. */
#define AV_PROFILE_MERGE_MAX_PTS 32

typedef struct av_profile_merge_curve {
  int head_dim;
  av_dtype_t dtype;
  int n;
  double slots[AV_PROFILE_MERGE_MAX_PTS];  /* strictly increasing, >= 1 */
  double t[AV_PROFILE_MERGE_MAX_PTS];      /* lone merge CTA, µs, its partial states in L2 */
  double cold[AV_PROFILE_MERGE_MAX_PTS];   /* the same with the states evicted to HBM
                                              ("time_cold_us", optional: t when absent) */
} av_profile_merge_curve_t;

typedef struct av_profile_merges {
  int rows_per_cta;                     /* 0: no "merge" key */
  double empty_cta_us;                  /* 0: not measured */
  int n;
  av_profile_merge_curve_t *c;          /* owned */
} av_profile_merges_t;

/* The first-wave start waves: the profile's optional "start" key (grids of k x SMs one-item
 * CTAs, at one query row and at the tile's m), or the details file's "queue" key (a full wave
 * of persistent queues' first items against one queue alone). */
#define AV_PROFILE_START_MAX_PTS 16       /* wave sizes per variant */
#define AV_PROFILE_START_MAX_ROWS 4       /* query-row counts per wave */
#define AV_PROFILE_START_MAX_KV 4         /* KV lengths per wave */

typedef struct av_profile_start_wave {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n;                                  /* wave sizes measured */
  int32_t ctas[AV_PROFILE_START_MAX_PTS]; /* CTAs that started together, increasing */
  int n_rows;
  int32_t rows[AV_PROFILE_START_MAX_ROWS]; /* query rows of each CTA's item, increasing */
  int n_kv;
  int64_t kv[AV_PROFILE_START_MAX_KV];    /* KV tokens of each CTA's item */
  /* mean CTA (first item) time in the wave, and the same CTA alone (NAN: C(rows, kv) of
   * the variant's grid) */
  double dur_us[AV_PROFILE_START_MAX_PTS][AV_PROFILE_START_MAX_ROWS][AV_PROFILE_START_MAX_KV];
  double lone_us[AV_PROFILE_START_MAX_ROWS][AV_PROFILE_START_MAX_KV];
} av_profile_start_wave_t;

typedef struct av_profile_starts {
  int n;
  av_profile_start_wave_t *v;             /* owned */
  const char *from;                       /* "start", "queue" or NULL (nothing measured) */
} av_profile_starts_t;

/* The profile document as read. */
typedef struct av_profile_doc {
  char gpu[128];                          /* the spec name it was measured on */
  int n;
  av_profile_grid_t *t;                   /* owned; no two of the same variant */
  av_profile_curves_t cores;              /* n 0: not measured */
  av_profile_merges_t merge;
  av_profile_starts_t start;
} av_profile_doc_t;

/* Reads the profile document root (c->source names its file). *out is zeroed first; free it
 * with av_profile_doc_free even on error. */
int av_profile_read(const av_jctx_t *c, const json_t *root, av_profile_doc_t *out);
void av_profile_doc_free(av_profile_doc_t *d);
/* Reads the "queue" object of a .details.json document: per persistent variant one wave,
 * ctas = loaded_ctas, one query row, dur = loaded_first_us, lone = first_us (absent = n 0,
 * AV_OK). *out is zeroed first; free it with av_profile_starts_free even on error. */
int av_profile_read_queue(const av_jctx_t *c, const json_t *details, av_profile_starts_t *out);
void av_profile_starts_free(av_profile_starts_t *s);

/* The parts' readers (profile_format/profile_read_*.c), each of root's key (absent = nothing
 * measured, AV_OK); *out is zeroed first. */
int av__profile_read_cores(const av_jctx_t *c, const json_t *root, av_profile_curves_t *out);
int av__profile_read_merge(const av_jctx_t *c, const json_t *root, av_profile_merges_t *out);
int av__profile_read_start(const av_jctx_t *c, const json_t *root, av_profile_starts_t *out);
/* An array of exactly `want` numbers in [lo, hi] at path.key (one per point of a curve);
 * out may be NULL (check only). */
int av__profile_read_numbers(const av_jctx_t *c, const json_t *obj, const char *path,
                             const char *key, size_t want, double lo, double hi, double *out);
/* kind, m, n, warps, head_dim and dtype of the variant object at path; merge is a kind only
 * where allow_merge. */
int av__profile_read_tile(const av_jctx_t *c, const json_t *obj, const char *path,
                          int allow_merge, av_tile_t *tile, int *head_dim, av_dtype_t *dtype);
/* The dtype named at path.key ("fp16" or "bf16"). */
int av__profile_read_dtype(const av_jctx_t *c, const json_t *obj, const char *path,
                           const char *key, av_dtype_t *out);
/* Whether two variants are the same (kind, m, n, warps, head_dim, dtype). */
int av__profile_same_variant(const av_tile_t *a, int a_hd, av_dtype_t a_dt, const av_tile_t *b,
                             int b_hd, av_dtype_t b_dt);

#endif
