/* The first-wave start cost (docs/simulator.md#a-launchs-first-wave): a CTA that
 * starts together with many others takes longer than alone, beyond what the engine's
 * bandwidth sharing gives it: every starting CTA issues its dependent prologue loads (queue or
 * item record, block table, queries, its first KV tiles) at the same moment, and they queue
 * behind each other in the memory system. Measured by `anvil profile` and read by the
 * `profile` cost model (costmodels/profile.c), which hands the engine the extra time of a CTA
 * starting with q.starting others (av_item_cost_t.start_us). Two sources:
 *   - the profile file's "start" key (the profiler's start step): grids of
 *     k x SMs one-item CTAs, each on its own short root, at one query row and at the tile's
 *     m, against the same CTA alone (C);
 *   - else the .details.json file's "queue" key (the queue step): a full wave of
 *     persistent queues' first items against one queue alone.
 * profile_format/ reads both; this file derives the cost from them and interpolates (the
 * derivation needs the C tables and curves, which costmodels/profile.c hands it). Not a
 * public API. */
#ifndef AV_PROFILE_START_H
#define AV_PROFILE_START_H

#include <jansson.h>
#include <stdint.h>

#include "costmodels/profile_coresidency.h"
#include "core/plan.h"
#include "profile_format/profile_read.h"

#define AV__START_MAX_PTS AV_PROFILE_START_MAX_PTS
#define AV__START_MAX_ROWS AV_PROFILE_START_MAX_ROWS
#define AV__START_SHORT_TOKENS 128        /* longest item whose wave measures the start cost */

/* The waves as read (profile_format/profile_read.h) and the start cost derived from them. */
typedef struct av__start {
  int n;
  av_profile_start_wave_t *v;             /* owned */
  const char *from;                       /* "start", "queue" or NULL (nothing measured) */
  double (*delta_us)[AV__START_MAX_PTS][AV__START_MAX_ROWS]; /* per wave: the start cost at
                                             each (wave size, query rows), av__start_derive */
} av__start_t;

/* Takes the waves of `read` (left empty). AV_ERR_NOMEM naming source; free s with
 * av__start_free even on error. */
int av__start_setup(av__start_t *s, av_profile_starts_t *read, const char *source,
                    av_error_t *err);
void av__start_free(av__start_t *s);
/* What the derivation needs from the rest of the profile model. */
typedef struct av__start_env {
  double hbm_bytes_per_us;                /* the spec's HBM bandwidth (the engine's B) */
  int sm_count;
  const av__cores_t *cores;               /* co-residency curves as measured (may be empty) */
  /* v's lone CTA of `rows` query rows over kv tokens: its time C(rows, kv) and its own
   * streaming bound (bytes/us, 1 / the slope of C), as the engine calibrates an item
   * (sim/engine.c item_calibrate) */
  void (*lone)(const void *ctx, const av_profile_start_wave_t *v, int32_t rows, int64_t kv,
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
const av_profile_start_wave_t *av__start_find(const av__start_t *s, const av_tile_t *tile,
                                          int head_dim, av_dtype_t dtype);
/* The start cost of a CTA of `tile` with `rows` query rows when `ctas` CTAs start together:
 * linear in ctas through (0, 0) and the measured points (each starting CTA adds its
 * prologue's requests to the queue), the last segment's slope beyond them; linear in
 * log(rows) between measured row counts, clamped outside; never below 0. 0 when nothing was
 * measured. Pure and allocation-free. */
double av__start_cost(const av__start_t *s, const av_tile_t *tile, int head_dim,
                      av_dtype_t dtype, int32_t ctas, int32_t rows);

#endif
