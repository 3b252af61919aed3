/* The profile file's optional "merge" key (validation/profile_merge.c writes it): the merge
 * kernel's lone-CTA time over the partial states per (request, query head) row, per head dim
 * and dtype, and the time one CTA slot spends on a persistent CTA whose queue is empty. Read
 * by the `profile` cost model, which answers merge queries (tile kind merge, n_q = slots per
 * row) and empty-CTA queries (n_q = 0, kv_tokens = 0) from it. Not a public API. */
#ifndef AV_PROFILE_MERGE_H
#define AV_PROFILE_MERGE_H

#include <gsl/gsl_interp.h>
#include <jansson.h>

#include "core/json_util.h"
#include "core/plan.h"

#define AV__MERGE_MAX_PTS 32

typedef struct av__merge_curve {
  int head_dim;
  av_dtype_t dtype;
  int n;
  double slots[AV__MERGE_MAX_PTS];      /* strictly increasing, >= 1 */
  double t[AV__MERGE_MAX_PTS];          /* lone merge CTA, µs, its partial states in L2 */
  double cold[AV__MERGE_MAX_PTS];       /* the same with the states evicted to HBM ("time_cold_us",
                                           optional: equal to t when absent) */
  gsl_interp *interp, *interp_cold;     /* linear; NULL when n == 1 */
} av__merge_curve_t;

typedef struct av__merge {
  int rows_per_cta;                     /* 0: no "merge" key */
  double empty_cta_us;                  /* 0: not measured */
  int n;
  av__merge_curve_t *c;                 /* owned */
} av__merge_t;

/* Reads root's "merge" object (absent = nothing measured, AV_OK). Errors name the file and
 * the key path. *out is zeroed first; free it with av__merge_free even on error. */
int av__merge_read(const av_jctx_t *c, const json_t *root, av__merge_t *out);
void av__merge_free(av__merge_t *m);
/* A lone merge CTA's time with `slots` partial states per row, from the curve of (head_dim,
 * dtype), else the same head dim's, else none: linear between measured points, the last
 * segment's slope beyond them; `cold_frac` of the states read from HBM (the cold curve),
 * the rest from L2. 0 when nothing applies. Pure and allocation-free. */
double av__merge_time(const av__merge_t *m, int head_dim, av_dtype_t dtype, double slots,
                      double cold_frac);

#endif
