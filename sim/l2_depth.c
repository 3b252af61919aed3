/* LRU depth of a KV line in the range L2 from its stamp (sim/l2_runs.h): distinct lines
 * read since = misses since + re-reads since of lines stamped before it. The re-reads since
 * stamp s are all re-reads made after the clock passed s, less those of lines stamped after
 * s (those were read after s anyway, so a re-read does not push the line down). */
#include "sim/l2_runs.h"

#define B AV__DEPTH_BUCKETS

static int64_t bucket(const av__l2_depth_t *d, double s) { return (int64_t)(s / d->w); }

void av__depth_init(av__l2_depth_t *d, double cap_bytes) {
  /* the window [m - cap, m] spans at most B - 1 buckets */
  d->w = cap_bytes > 0 ? cap_bytes / (B - 2) : 1;
  d->top = 0;
  d->reread = 0;
  for (int i = 0; i < B; i++) d->h[i] = d->rr_at[i] = 0;
}

void av__depth_sync(av__l2_depth_t *d, double m) {
  const int64_t k = bucket(d, m);
  if (k <= d->top) return;
  const int64_t from = k - d->top > B ? k - B + 1 : d->top + 1;
  for (int64_t b = from; b <= k; b++) {
    d->h[b % B] = 0;
    d->rr_at[b % B] = d->reread;
  }
  d->top = k;
}

void av__depth_reread(av__l2_depth_t *d, double s_lo, double s_hi, double n, double m) {
  av__depth_sync(d, m);
  d->reread += n;
  const int64_t oldest = d->top - (B - 2);
  if (s_hi < s_lo) {
    double x = s_lo;
    s_lo = s_hi;
    s_hi = x;
  }
  int64_t b0 = bucket(d, s_lo), b1 = bucket(d, s_hi);
  if (b1 > d->top) b1 = d->top;
  if (b0 == b1 || s_hi <= s_lo) {
    if (b1 >= oldest) d->h[b1 % B] += n;
    return;
  }
  for (int64_t b = b0 < oldest ? oldest : b0; b <= b1; b++) {
    const double lo = b * d->w > s_lo ? b * d->w : s_lo;
    const double hi = (b + 1) * d->w < s_hi ? (b + 1) * d->w : s_hi;
    if (hi > lo) d->h[b % B] += n * (hi - lo) / (s_hi - s_lo);
  }
}

int av__depth_held(const av__l2_depth_t *d, double s, double m, double cap_bytes,
                   double line_bytes) {
  const double cap = cap_bytes / line_bytes;
  const double misses = (m - s) / line_bytes;
  if (misses >= cap) return 0;
  int64_t kb = bucket(d, s);
  if (kb > d->top) kb = d->top;
  if (kb < d->top - (B - 2)) return 0;
  const double frac = s / d->w - (double)kb;
  /* re-reads since s: interpolated inside s's bucket */
  const double rr0 = d->rr_at[kb % B];
  const double rr1 = kb < d->top ? d->rr_at[(kb + 1) % B] : d->reread;
  const double since = d->reread - (rr0 + frac * (rr1 - rr0));
  double newer = d->h[kb % B] * (1 - frac);  /* re-reads of lines stamped after s */
  for (int64_t b = kb + 1; b <= d->top; b++) newer += d->h[b % B];
  const double depth = misses + since - newer;
  return depth < cap;
}
