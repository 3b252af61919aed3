/* Predicted vs measured statistics (pipeline/compare.h): the numbers by which docs/validation.md
 * judges the simulator. Rank statistics matter as much as the error: a simulator that is off
 * by a constant factor still chooses plans well, which is all `auto` needs. */
#include "pipeline/compare.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "compare"

double av_cmp_ape(double predicted_us, double measured_us) {
  if (!(measured_us > 0) || !isfinite(predicted_us)) return NAN;
  return fabs(predicted_us - measured_us) / measured_us;
}

static int constant(const double *x, int32_t n) {
  for (int32_t i = 1; i < n; i++)
    if (x[i] != x[0]) return 0;
  return 1;
}

double av_cmp_spearman(const double *x, const double *y, int32_t n) {
  if (n < 2 || constant(x, n) || constant(y, n)) return NAN;
  double *work = malloc(sizeof(double) * 2 * (size_t)n);
  if (!work) return NAN;
  double r = gsl_stats_spearman(x, 1, y, 1, (size_t)n, work);
  free(work);
  return r;
}

static int sgn(double v) { return (v > 0) - (v < 0); }

double av_cmp_kendall(const double *x, const double *y, int32_t n) {
  if (n < 2 || constant(x, n) || constant(y, n)) return NAN;
  double conc = 0, disc = 0, tx = 0, ty = 0;
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = i + 1; j < n; j++) {
      int a = sgn(x[i] - x[j]), b = sgn(y[i] - y[j]);
      if (a == 0 && b == 0) continue;
      if (a == 0)
        tx += 1;
      else if (b == 0)
        ty += 1;
      else if (a == b)
        conc += 1;
      else
        disc += 1;
    }
  return (conc - disc) / sqrt((conc + disc + tx) * (conc + disc + ty));
}

static int check_pairs(const av_cmp_pair_t *p, int32_t n, int32_t n_sched, av_error_t *err) {
  char where[64];
  if (n < 1) return av_error_set(err, AV_ERR_RANGE, SRC, NULL, "no (batch, scheduler) pairs");
  for (int32_t i = 0; i < n; i++) {
    snprintf(where, sizeof where, "pairs[%d]", (int)i);
    if (!(p[i].measured_us > 0) || !isfinite(p[i].measured_us) || !(p[i].predicted_us > 0) ||
        !isfinite(p[i].predicted_us))
      return av_error_set(err, AV_ERR_RANGE, SRC, where,
                          "times must be finite and positive, got predicted %g us, measured "
                          "%g us",
                          p[i].predicted_us, p[i].measured_us);
    if (p[i].batch < 0 || p[i].sched < 0 || p[i].sched >= n_sched)
      return av_error_set(err, AV_ERR_RANGE, SRC, where,
                          "batch %d / scheduler %d out of range (schedulers 0..%d)",
                          (int)p[i].batch, (int)p[i].sched, (int)n_sched - 1);
    for (int32_t j = 0; j < i; j++)
      if (p[j].batch == p[i].batch && p[j].sched == p[i].sched)
        return av_error_set(err, AV_ERR_MISMATCH, SRC, where,
                            "batch %d, scheduler %d given twice (first as pairs[%d])",
                            (int)p[i].batch, (int)p[i].sched, (int)j);
  }
  return AV_OK;
}

/* Best plans of one batch (pairs with batch id `b`). Returns 0 when no ranked pair exists. */
static int batch_best(const av_cmp_pair_t *p, int32_t n, int32_t b, const av_cmp_opts_t *o,
                      av_cmp_batch_t *out) {
  int32_t ip = -1, im = -1, ifocus = -1;
  for (int32_t i = 0; i < n; i++) {
    if (p[i].batch != b) continue;
    if (p[i].sched == o->focus) ifocus = i;
    if (o->ranked && !o->ranked[p[i].sched]) continue;
    if (ip < 0 || p[i].predicted_us < p[ip].predicted_us) ip = i;
    if (im < 0 || p[i].measured_us < p[im].measured_us) im = i;
  }
  if (ip < 0) return 0;
  out->batch = b;
  out->pred_best = p[ip].sched;
  out->meas_best = p[im].sched;
  out->agree = ip == im;
  out->regret = p[ip].measured_us / p[im].measured_us - 1.0;
  /* The focus plan may beat every ranked one (noise, or auto finding what none of the
   * listed schedulers does): its gap is then negative, i.e. within. */
  out->focus_gap = ifocus >= 0 ? p[ifocus].measured_us / p[im].measured_us - 1.0 : NAN;
  return 1;
}

static int per_batch(const av_cmp_pair_t *p, int32_t n, const av_cmp_opts_t *o,
                     av_cmp_summary_t *s, av_cmp_batch_t **batches, av_error_t *err) {
  av_cmp_batch_t *bs = calloc((size_t)n, sizeof *bs);
  if (!bs) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int32_t i = 0; i < n; i++) {
    int seen = 0;
    for (int32_t j = 0; j < i && !seen; j++) seen = p[j].batch == p[i].batch;
    if (seen || !batch_best(p, n, p[i].batch, o, &bs[s->n_batches])) continue;
    const av_cmp_batch_t *b = &bs[s->n_batches++];
    s->agree += b->agree;
    s->regret_mean += b->regret;
    s->regret_max = fmax(s->regret_max, b->regret);
    s->regret_within += b->regret <= o->tol;
    if (!isnan(b->focus_gap)) {
      s->focus_batches++;
      s->focus_within += b->focus_gap <= o->tol;
      s->focus_gap_mean += b->focus_gap;
      s->focus_gap_max = s->focus_batches == 1 ? b->focus_gap
                                               : fmax(s->focus_gap_max, b->focus_gap);
    }
  }
  if (s->n_batches) {
    s->agree_frac = (double)s->agree / s->n_batches;
    s->regret_mean /= s->n_batches;
  }
  if (s->focus_batches) {
    s->focus_frac = (double)s->focus_within / s->focus_batches;
    s->focus_gap_mean /= s->focus_batches;
  } else {
    s->focus_frac = s->focus_gap_mean = s->focus_gap_max = NAN;
  }
  if (batches)
    *batches = bs;
  else
    free(bs);
  return AV_OK;
}

int av_cmp_summarize(const av_cmp_pair_t *pairs, int32_t n, const av_cmp_opts_t *opts,
                     av_cmp_summary_t *out, av_cmp_batch_t **batches, av_error_t *err) {
  memset(out, 0, sizeof *out);
  if (batches) *batches = NULL;
  if (!pairs && n > 0) return av_error_set(err, AV_ERR_INTERNAL, SRC, NULL, "no pairs array");
  int rc = check_pairs(pairs, n, opts->n_sched, err);
  if (rc) return rc;
  double *x = malloc(sizeof(double) * 2 * (size_t)n);
  if (!x) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  double *y = x + n;
  out->n = n;
  out->worst = 0;
  for (int32_t i = 0; i < n; i++) {
    double e = av_cmp_ape(pairs[i].predicted_us, pairs[i].measured_us);
    out->mape += e;
    if (e > out->worst_ape) {
      out->worst_ape = e;
      out->worst = i;
    }
    x[i] = pairs[i].predicted_us;
    y[i] = pairs[i].measured_us;
  }
  out->mape /= n;
  out->spearman = av_cmp_spearman(x, y, n);
  out->kendall = av_cmp_kendall(x, y, n);
  free(x);
  return per_batch(pairs, n, opts, out, batches, err);
}
