/* The profile file's optional "coresidency" key (docs/validation.md, "Co-residency"): per
 * kernel variant, how much longer a CTA streams its KV when k CTAs share its SM, measured by
 * `anvil profile` with grids of exactly k identical CTAs per SM. Read by the `profile` cost
 * model (costmodels/profile.c), which hands the curve to the engine through
 * av_item_cost_t.slowdown. Not a public API. */
#ifndef AV_PROFILE_CORESIDENCY_H
#define AV_PROFILE_CORESIDENCY_H

#include <gsl/gsl_interp.h>
#include <jansson.h>

#include "core/json_util.h"
#include "core/plan.h"

#define AV__CORES_MAX_K 64

typedef struct av__cores_curve {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n;                                /* points: k[0] = 1 .. k[n-1] */
  double k[AV__CORES_MAX_K];
  double s[AV__CORES_MAX_K];            /* slowdown of the streaming time at k[i]; s[0] = 1 */
  double dur[AV__CORES_MAX_K];          /* the grid's mean CTA duration at k[i] ("duration_us") */
  int has_dur;                          /* dur was in the file */
  gsl_interp *interp;                   /* linear in k; NULL when n == 1 */
} av__cores_curve_t;

typedef struct av__cores {
  int n;
  av__cores_curve_t *c;                 /* owned */
} av__cores_t;

/* Reads the "coresidency" object at `path` (the key itself; absent = no curves, AV_OK).
 * Errors name the file (c->source) and the key path. *out is zeroed first; free it with
 * av__cores_free even on error. */
int av__cores_read(const av_jctx_t *c, const json_t *root, av__cores_t *out);
void av__cores_free(av__cores_t *s);
/* An array of exactly `want` numbers in [lo, hi] at path.key (one per point of a curve);
 * out may be NULL (check only). Shared by the profile file's curve readers. */
int av__profile_read_numbers(const av_jctx_t *c, const json_t *obj, const char *path,
                             const char *key, size_t want, double lo, double hi, double *out);
/* Replaces t's slowdowns by s (t->n of them, s[0] = 1) and sets up its interpolation again
 * (the profile model discounts the start cost, costmodels/profile_start.h). AV_ERR_INTERNAL
 * when GSL cannot. */
int av__cores_set(av__cores_curve_t *t, const double *s);
/* kind, m, n, warps, head_dim and dtype of the variant object at path (merge is not one). */
int av__profile_read_tile(const av_jctx_t *c, const json_t *obj, const char *path,
                          av_tile_t *tile, int *head_dim, av_dtype_t *dtype);
/* How far measured variant b is from a: a different head dim or dtype weighs more than a
 * different kind, which weighs more than different warps, which weighs more than any
 * difference in (m, n) (log distance). Variants without their own measurement take the
 * nearest measured one's. */
double av__profile_tile_distance(const av_tile_t *a, int a_hd, av_dtype_t a_dt,
                                 const av_tile_t *b, int b_hd, av_dtype_t b_dt);
/* The slowdown when k CTAs share the SM, for the curve of `tile` (head_dim, dtype), else of
 * the nearest measured variant (same kind, d and dtype first, then closest m and n);
 * interpolated linearly (GSL) between measured k, extrapolated from the last two points
 * beyond them (never below the last point). 0 when there are no curves or k < 1. Pure and
 * allocation-free. */
double av__cores_slowdown(const av__cores_t *s, const av_tile_t *tile, int head_dim,
                          av_dtype_t dtype, int k);

#endif
