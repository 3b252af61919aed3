/* The co-residency curves of the profile file (docs/simulator.md#co-residency; read by
 * profile_format/): per kernel variant, how much longer a CTA streams its KV when k CTAs
 * share its SM, measured by `anvil profile` with grids of exactly k identical CTAs per SM.
 * The `profile` cost model (costmodels/profile.c) hands the curve to the engine through
 * av_item_cost_t.slowdown. Not a public API. */
#ifndef AV_PROFILE_CORESIDENCY_H
#define AV_PROFILE_CORESIDENCY_H

#include <gsl/gsl_interp.h>

#include "core/plan.h"
#include "profile_format/profile_read.h"

/* The curves as read (profile_format/profile_read.h), each with its interpolation. */
typedef struct av__cores {
  int n;
  av_profile_curve_t *c;                /* owned */
  gsl_interp **interp;                  /* per curve, linear in k; NULL where n == 1 */
} av__cores_t;

/* Takes the curves of `read` (which is left empty) and sets up their interpolation.
 * AV_ERR_NOMEM or AV_ERR_INTERNAL (GSL) naming source; free s with av__cores_free even on
 * error. */
int av__cores_setup(av__cores_t *s, av_profile_curves_t *read, const char *source,
                    av_error_t *err);
void av__cores_free(av__cores_t *s);
/* Replaces curve i's slowdowns by sl (c[i].n of them, sl[0] = 1) and sets up its
 * interpolation again (the profile model discounts the start cost,
 * costmodels/profile_start.h). AV_ERR_INTERNAL when GSL cannot. */
int av__cores_set(av__cores_t *s, int i, const double *sl);
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
