/* The profile file's optional "merge" key (profile_format/ reads and writes it): the merge
 * kernel's lone-CTA time over the partial states per (request, query head) row, per head dim
 * and dtype, and the time one CTA slot spends on a persistent CTA whose queue is empty. Read
 * by the `profile` cost model, which answers merge queries (tile kind merge, n_q = slots per
 * row) and empty-CTA queries (n_q = 0, kv_tokens = 0) from it. Not a public API. */
#ifndef AV_PROFILE_MERGE_H
#define AV_PROFILE_MERGE_H

#include <gsl/gsl_interp.h>

#include "profile_format/profile_read.h"

/* The "merge" key as read (profile_format/profile_read.h), each curve with its warm and cold
 * interpolation. */
typedef struct av__merge {
  int rows_per_cta;                     /* 0: no "merge" key */
  double empty_cta_us;                  /* 0: not measured */
  int n;
  av_profile_merge_curve_t *c;          /* owned */
  gsl_interp **interp;                  /* 2 per curve (warm, cold); NULL where n == 1 */
} av__merge_t;

/* Takes the curves of `read` (left empty) and sets up their interpolation. AV_ERR_NOMEM or
 * AV_ERR_INTERNAL (GSL) naming source; free m with av__merge_free even on error. */
int av__merge_setup(av__merge_t *m, av_profile_merges_t *read, const char *source,
                    av_error_t *err);
void av__merge_free(av__merge_t *m);
/* A lone merge CTA's time with `slots` partial states per row, from the curve of (head_dim,
 * dtype), else the same head dim's, else none: linear between measured points, the last
 * segment's slope beyond them; `cold_frac` of the states read from HBM (the cold curve),
 * the rest from L2. 0 when nothing applies. Pure and allocation-free. */
double av__merge_time(const av__merge_t *m, int head_dim, av_dtype_t dtype, double slots,
                      double cold_frac);

#endif
