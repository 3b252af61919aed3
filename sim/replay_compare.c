/* Predicted against measured CTA durations, launch by launch (sim/replay.h,
 * av_replay_compare): where the replay says the dispatch is right, this says which CTAs the
 * cost model gets wrong (docs/validation.md#known-errors). Quantiles by GSL. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay.h"

/* Median and 90th percentile of x[0..n) (sorted in place); 0 for none. */
static void quantiles(double *x, size_t n, double *median, double *p90) {
  *median = *p90 = 0;
  if (n == 0) return;
  gsl_sort(x, 1, n);
  *median = gsl_stats_median_from_sorted_data(x, 1, n);
  *p90 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.9);
}

/* Row of launch l (-1: merge) from the predicted and measured durations gathered for it. */
static void summarise(av_replay_cta_cmp_t *row, int32_t l, double *pd, size_t np, double *md,
                      size_t nm, double *ratio, size_t nr) {
  double r90;
  row->launch = l;
  row->ctas = (int32_t)(l < 0 ? nm : nr);
  quantiles(pd, np, &row->pred_median_us, &row->pred_p90_us);
  quantiles(md, nm, &row->meas_median_us, &row->meas_p90_us);
  if (l >= 0) {
    quantiles(ratio, nr, &row->ratio_median, &r90);
  } else {
    row->ratio_median = row->pred_median_us > 0 ? row->meas_median_us / row->pred_median_us : 0;
  }
}

int av_replay_compare(const av_replay_trace_t *t, const av_plan_t *p, const av_timeline_t *pred,
                      av_replay_cta_cmp_t **out, int32_t *n, av_error_t *err) {
  const int64_t hkv = p->heads.hkv, cells = (int64_t)p->n_items * hkv;
  const size_t cap = (size_t)(pred->n > t->n ? pred->n : t->n) + 1;
  int has_merge = t->merge_records > 0;
  for (int32_t i = 0; i < pred->n && !has_merge; i++) has_merge = pred->ev[i].item < 0;
  const int32_t rows = p->n_launches + has_merge;
  double *pd = malloc(cap * sizeof *pd), *md = malloc(cap * sizeof *md);
  double *ratio = malloc(cap * sizeof *ratio);
  double *pc = calloc((size_t)cells + 1, sizeof *pc);  /* predicted duration per (item, head) */
  *out = calloc((size_t)rows + 1, sizeof **out);
  *n = 0;
  if (!pd || !md || !ratio || !pc || !*out) {
    free(pd), free(md), free(ratio), free(pc), free(*out);
    *out = NULL;
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory comparing CTA durations");
  }
  for (int32_t i = 0; i < pred->n; i++) {
    const av_cta_event_t *e = &pred->ev[i];
    if (e->item >= 0 && e->item < p->n_items && e->head >= 0 && e->head < hkv)
      pc[(int64_t)e->item * hkv + e->head] = e->end_us - e->start_us;
  }
  for (int32_t l = 0; l < p->n_launches; l++) {
    size_t k = 0;
    for (int32_t it = 0; it < p->n_items; it++) {
      if (p->items[it].launch != l) continue;
      for (int64_t h = 0; h < hkv; h++) {
        const double a = pc[it * hkv + h], b = t->durations_us[it * hkv + h];
        pd[k] = a, md[k] = b, ratio[k] = a > 0 ? b / a : 0;
        k++;
      }
    }
    summarise(&(*out)[l], l, pd, k, md, k, ratio, k);
  }
  if (has_merge) {
    size_t np = 0;
    for (int32_t i = 0; i < pred->n; i++)
      if (pred->ev[i].item < 0) pd[np++] = pred->ev[i].end_us - pred->ev[i].start_us;
    memcpy(md, t->merge_us, (size_t)t->merge_records * sizeof *md);
    summarise(&(*out)[p->n_launches], -1, pd, np, md, (size_t)t->merge_records, ratio, 0);
  }
  *n = rows;
  free(pd), free(md), free(ratio), free(pc);
  return AV_OK;
}
