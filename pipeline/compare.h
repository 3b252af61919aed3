/* Predicted vs measured: the statistics `anvil validate` reports (docs/validation.md). Per (batch,
 * scheduler) pair the absolute percentage error; over a set of pairs MAPE, the worst error,
 * Spearman's rho (GSL) and Kendall's tau-b between predicted and measured times; per batch
 * whether the simulator's fastest plan is the GPU's fastest (best-plan agreement) and the
 * regret of trusting it. Pure host code: no device, no I/O. */
#ifndef AV_COMPARE_H
#define AV_COMPARE_H

#include <stdint.h>

#include "core/error.h"

/* One (batch, scheduler) of an experiment. */
typedef struct av_cmp_pair {
  int32_t batch, sched;      /* indices into the experiment (any non-negative ids) */
  double predicted_us, measured_us;
} av_cmp_pair_t;

/* |predicted - measured| / measured; NaN when measured is not positive. */
double av_cmp_ape(double predicted_us, double measured_us);

/* Spearman's rank correlation (GSL gsl_stats_spearman: Pearson over average ranks, so ties
 * are handled). n >= 2 and both series non-constant, else NaN. */
double av_cmp_spearman(const double *x, const double *y, int32_t n);
/* Kendall's tau-b: (C - D) / sqrt((C + D + Tx) (C + D + Ty)) over all pairs, pairs tied in
 * both series counted in neither (Kendall 1945). O(n^2): n is the pairs of one experiment.
 * NaN when n < 2 or either series is constant. */
double av_cmp_kendall(const double *x, const double *y, int32_t n);

/* One batch: which plan each side thinks fastest. Only the schedulers `ranked` marks take part
 * (auto is left out: its plan is one of the candidates, so it would tie with that one). */
typedef struct av_cmp_batch {
  int32_t batch;
  int32_t pred_best, meas_best;  /* scheduler ids (first one on ties) */
  int agree;                     /* pred_best == meas_best */
  double regret;                 /* measured(pred_best) / measured(meas_best) - 1, >= 0 */
  double focus_gap;              /* measured(focus) / measured(meas_best) - 1; NaN when the
                                    focus scheduler has no pair in this batch */
} av_cmp_batch_t;

typedef struct av_cmp_summary {
  int32_t n;                     /* pairs */
  double mape;                   /* mean APE, as a fraction (0.1 = 10 %) */
  double worst_ape;
  int32_t worst;                 /* index of the worst pair */
  double spearman, kendall;
  /* Per batch (batches where at least one ranked scheduler has a pair). */
  int32_t n_batches, agree;
  double agree_frac, regret_mean, regret_max;
  int32_t regret_within;         /* batches with regret <= tol */
  /* The focus scheduler (auto): batches where it is within tol of the measured best. */
  int32_t focus_batches, focus_within;
  double focus_frac, focus_gap_mean, focus_gap_max;
} av_cmp_summary_t;

typedef struct av_cmp_opts {
  const uint8_t *ranked;         /* per scheduler id: 1 = candidate for best plan; NULL = all */
  int32_t n_sched;               /* length of `ranked` (scheduler ids are < n_sched) */
  int32_t focus;                 /* scheduler id judged against the measured best; -1 none */
  double tol;                    /* "within" threshold, as a fraction (docs/validation.md: 0.05) */
} av_cmp_opts_t;

/* Summarises pairs[0..n). Every time must be finite and positive, scheduler ids in
 * [0, n_sched) and no (batch, scheduler) pair given twice (AV_ERR_RANGE / AV_ERR_MISMATCH
 * naming pairs[i]). *batches (optional) receives out->n_batches records in order of first
 * appearance; caller frees it. */
int av_cmp_summarize(const av_cmp_pair_t *pairs, int32_t n, const av_cmp_opts_t *opts,
                     av_cmp_summary_t *out, av_cmp_batch_t **batches, av_error_t *err);

#endif
