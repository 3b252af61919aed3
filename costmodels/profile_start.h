/* The first-wave start cost (docs/validation.md, "The first-wave start cost"): a CTA that
 * starts together with many others takes longer than alone, beyond what the engine's
 * bandwidth sharing gives it: every starting CTA issues its dependent prologue loads (queue or
 * item record, block table, queries, its first KV tiles) at the same moment, and they queue
 * behind each other in the memory system. Measured by `anvil profile` and read by the
 * `profile` cost model (costmodels/profile.c), which hands the engine the extra time of a CTA
 * starting with q.starting others (av_item_cost_t.start_us). Two sources:
 *   - the profile file's "start" key (the profiler's start step, session 11): grids of
 *     k x SMs one-item CTAs, each on its own short root, at one query row and at the tile's
 *     m, against the same CTA alone (C);
 *   - else the .details.json file's "queue" key (the queue step, session 7): a full wave of
 *     persistent queues' first items against one queue alone.
 * This file parses both and interpolates; the derivation of the cost from the raw times needs
 * the C tables and curves and is costmodels/profile.c's. Not a public API. */
#ifndef AV_PROFILE_START_H
#define AV_PROFILE_START_H

#include <jansson.h>
#include <stdint.h>

#include "costmodels/profile_coresidency.h"
#include "core/json_util.h"
#include "core/plan.h"

#define AV__START_MAX_PTS 16              /* wave sizes per variant */
#define AV__START_MAX_ROWS 4              /* query-row counts per wave */
#define AV__START_MAX_KV 4                /* KV lengths per wave */
#define AV__START_SHORT_TOKENS 128        /* longest item whose wave measures the start cost */

typedef struct av__start_variant {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n;                                  /* wave sizes measured */
  int32_t ctas[AV__START_MAX_PTS];        /* CTAs that started together, increasing */
  int n_rows;
  int32_t rows[AV__START_MAX_ROWS];       /* query rows of each CTA's item, increasing */
  int n_kv;
  int64_t kv[AV__START_MAX_KV];           /* KV tokens of each CTA's item */
  /* mean CTA (first item) time in the wave, and the same CTA alone (NAN: C(rows, kv) of
   * the variant's table) */
  double dur_us[AV__START_MAX_PTS][AV__START_MAX_ROWS][AV__START_MAX_KV];
  double lone_us[AV__START_MAX_ROWS][AV__START_MAX_KV];
  double delta_us[AV__START_MAX_PTS][AV__START_MAX_ROWS]; /* the start cost (derived) */
} av__start_variant_t;

typedef struct av__start {
  int n;
  av__start_variant_t *v;                 /* owned */
  const char *from;                       /* "start", "queue" or NULL (nothing measured) */
} av__start_t;

/* Reads root's "start" object (the profile file; absent = n 0, AV_OK). Errors name the file
 * and the key path. *out is zeroed first; free it with av__start_free even on error. */
int av__start_read(const av_jctx_t *c, const json_t *root, av__start_t *out);
/* Reads the "queue" object of a .details.json document: per persistent variant one point,
 * ctas = loaded_ctas, one query row, dur = loaded_first_us, lone = first_us (absent = n 0,
 * AV_OK). */
int av__start_read_queue(const av_jctx_t *c, const json_t *details, av__start_t *out);
void av__start_free(av__start_t *s);
/* What the derivation needs from the rest of the profile model. */
typedef struct av__start_env {
  double hbm_bytes_per_us;                /* the spec's HBM bandwidth (the engine's B) */
  int sm_count;
  const av__cores_t *cores;               /* co-residency curves as measured (may be empty) */
  /* v's lone CTA of `rows` query rows over kv tokens: its time C(rows, kv) and its own
   * streaming bound (bytes/us, 1 / the slope of C), as the engine calibrates an item
   * (sim/engine.c item_calibrate) */
  void (*lone)(const void *ctx, const av__start_variant_t *v, int32_t rows, int64_t kv,
               double *time_us, double *cap);
  const void *ctx;
} av__start_env_t;

/* Sets every point's delta_us: the wave's mean CTA time over the lone CTA's, less what the
 * engine already charges a CTA of that wave (its bytes at min(lone bound / curve(k), B / ctas)
 * instead of the lone bound, k = ctas / SMs rounded up), averaged over the KV lengths up to
 * AV__START_SHORT_TOKENS and never below 0: the time the engine does not otherwise see. */
void av__start_derive(av__start_t *s, const av__start_env_t *env);
/* The co-residency grids (k x SMs CTAs starting together) contain the start cost at k x SMs
 * CTAs, which their slowdown attributes to streaming. With start costs D_k, a curve with
 * durations is recomputed as s'(k) = (s(k) T - D_k) / (T - D_1), T = the lone CTA's
 * streaming time as the profile took it ((dur_last - dur_1) / (s_last - 1)), so that the
 * engine charging both reproduces the grid's measured time. Curves without durations, or
 * nearly flat ones (s_last < 1.001), stay. AV_ERR_INTERNAL when GSL fails. */
int av__start_discount(const av__start_t *s, av__cores_t *cores, int sm_count);
/* The measured variant nearest to (tile, head_dim, dtype) (av__profile_tile_distance); NULL
 * when nothing was measured. */
const av__start_variant_t *av__start_find(const av__start_t *s, const av_tile_t *tile,
                                          int head_dim, av_dtype_t dtype);
/* The start cost of a CTA of `tile` with `rows` query rows when `ctas` CTAs start together:
 * linear in ctas through (0, 0) and the measured points (each starting CTA adds its
 * prologue's requests to the queue), the last segment's slope beyond them; linear in
 * log(rows) between measured row counts, clamped outside; never below 0. 0 when nothing was
 * measured. Pure and allocation-free. */
double av__start_cost(const av__start_t *s, const av_tile_t *tile, int head_dim,
                      av_dtype_t dtype, int32_t ctas, int32_t rows);

#endif
