/* Dispatch figures the kernels' own traces do not contain, reduced from traces the profiler
 * already takes (docs/validation.md#profiling): the gap a grid CTA leaves in its SM slot
 * between the previous CTA's end and its own traced start (the block scheduler's refill and
 * the item-table read before the kernel's timer), and the gap between two launches of one
 * stream (the first kernel's completion, the next one's first CTA). No GPU needed here. */
#include <stdlib.h>

#include "profiler/profile.h"

typedef struct rec {
  int sm;
  double start, end;
} rec_t;

static int by_sm_start(const void *a, const void *b) {
  const rec_t *x = a, *y = b;
  if (x->sm != y->sm) return x->sm - y->sm;
  return (x->start > y->start) - (x->start < y->start);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The attention records (item >= 0) of a trace; *n of them. Caller frees. */
static rec_t *records(const json_t *trace, int32_t *n, av_error_t *err) {
  const json_t *ctas = json_object_get(trace, "ctas");
  size_t m = json_array_size(ctas);
  rec_t *r = malloc(sizeof *r * (m + 1));
  if (!r) {
    av_error_set(err, AV_ERR_NOMEM, "profile", NULL, "out of memory");
    return NULL;
  }
  int32_t k = 0;
  for (size_t i = 0; i < m; i++) {
    const json_t *c = json_array_get(ctas, i);
    if (json_integer_value(json_object_get(c, "item")) < 0) continue;
    r[k].sm = (int)json_integer_value(json_object_get(c, "sm"));
    r[k].start = json_number_value(json_object_get(c, "start_us"));
    r[k].end = json_number_value(json_object_get(c, "end_us"));
    k++;
  }
  *n = k;
  return r;
}

/* Per SM in start order: a CTA that starts after an earlier CTA of the SM has ended took
 * that CTA's slot (the earliest end not yet taken, as slots free in end order); its refill
 * gap is its start minus that end. CTAs that found a slot free from the launch's start (the
 * first wave) have none. *mean_us is the mean over all refills (0 and *n_out 0 when the
 * grid had none). Caller owns nothing. */
int av_profile_refill_gap(const json_t *trace, double *mean_us, int32_t *n_out,
                          av_error_t *err) {
  *mean_us = 0;
  *n_out = 0;
  int32_t n;
  rec_t *r = records(trace, &n, err);
  if (!r) return AV_ERR_NOMEM;
  double *ends = malloc(sizeof *ends * (size_t)(n + 1));
  if (!ends) {
    free(r);
    return av_error_set(err, AV_ERR_NOMEM, "profile", NULL, "out of memory");
  }
  qsort(r, (size_t)n, sizeof *r, by_sm_start);
  double sum = 0;
  int32_t refills = 0;
  for (int32_t a = 0, b; a < n; a = b) {
    for (b = a; b < n && r[b].sm == r[a].sm; b++) ends[b - a] = r[b].end;
    /* ends of the SM's CTAs in time order; taken[k] once a later CTA reused that slot */
    qsort(ends, (size_t)(b - a), sizeof *ends, cmp_dbl);
    int32_t next_free = 0;
    for (int32_t i = a; i < b; i++) {
      if (next_free < b - a && ends[next_free] <= r[i].start) {
        sum += r[i].start - ends[next_free++];
        refills++;
      }
    }
  }
  free(ends);
  free(r);
  *n_out = refills;
  *mean_us = refills > 0 ? sum / refills : 0;
  return AV_OK;
}

/* Launch l of plan p ran from its first CTA's start to its last CTA's end; for every two
 * consecutive launches of one stream, the next one's first start minus the previous one's
 * last end, averaged into *mean_us (0 when the plan has no such pair). */
int av_profile_stream_gap(const json_t *trace, const av_plan_t *p, double *mean_us,
                          av_error_t *err) {
  *mean_us = 0;
  const json_t *ctas = json_object_get(trace, "ctas");
  double *lo = malloc(sizeof *lo * (size_t)(2 * p->n_launches + 1));
  if (!lo) return av_error_set(err, AV_ERR_NOMEM, "profile", NULL, "out of memory");
  double *hi = lo + p->n_launches;
  for (int32_t l = 0; l < p->n_launches; l++) lo[l] = 1e300, hi[l] = -1e300;
  for (size_t i = 0; i < json_array_size(ctas); i++) {
    const json_t *c = json_array_get(ctas, i);
    json_int_t item = json_integer_value(json_object_get(c, "item"));
    if (item < 0 || item >= p->n_items) continue;
    int32_t l = p->items[item].launch;
    double s = json_number_value(json_object_get(c, "start_us"));
    double e = json_number_value(json_object_get(c, "end_us"));
    if (s < lo[l]) lo[l] = s;
    if (e > hi[l]) hi[l] = e;
  }
  double sum = 0;
  int32_t pairs = 0;
  for (int32_t l = 0; l < p->n_launches; l++)
    for (int32_t m = l + 1; m < p->n_launches; m++) {
      if (p->launches[m].stream != p->launches[l].stream) continue;
      if (hi[l] > -1e300 && lo[m] < 1e300) {
        sum += lo[m] - hi[l];
        pairs++;
      }
      break; /* only the next launch of l's stream */
    }
  free(lo);
  *mean_us = pairs > 0 ? sum / pairs : 0;
  return AV_OK;
}
