/* greedy_division's division search (FlashForge §5.1): the Eq. 4 lower bound cost_l by
 * binary search, the Eq. 5 bounds b_k[i] <= ceil(C_est(n_q[i], n[i]) / cost_l), and the grid
 * search over divisions within them, each scored by assigning the sub-tasks longest first to
 * the least-loaded of p CTAs (Graham's LPT, FlashForge ref. [14]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/greedy_division.h"

double av__gd_class_cost(const gd_t *g, const gd_class_t *c, int32_t b) {
  av_output_t o = b == 1 && c->whole ? AV_OUT_FINAL : AV_OUT_PARTIAL;
  return av_sched_cost_us(g->ctx, c->n_q, (c->len + b - 1) / b, &g->tile, o);
}

/* Smallest division whose sub-task cost is at most c (cost falls as b grows); bmax when
 * even that is too slow. */
static int32_t smallest_b(const gd_t *g, const gd_class_t *k, double c) {
  if (k->c1 <= c) return 1;
  int32_t lo = 2, hi = k->bmax;
  if (hi < 2 || av__gd_class_cost(g, k, hi) > c) return k->bmax;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (av__gd_class_cost(g, k, mid) <= c) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Eq. (4): the average block load when every task is cut just finely enough for its
 * sub-tasks to cost at most c. Finer division only adds overhead (§5.1's monotonicity), so
 * this is a lower bound on the makespan of any schedule whose sub-tasks cost at most c. */
static double avg_load(const gd_t *g, double c) {
  double sum = 0;
  for (int32_t k = 0; k < g->nc; k++) {
    const gd_class_t *cl = &g->c[k];
    int32_t b = smallest_b(g, cl, c);
    sum += cl->count * (b == 1 ? cl->c1 : b * av__gd_class_cost(g, cl, b));
  }
  return sum / g->p;
}

/* cost_l = min over c of max(c, avg_load(c)): avg_load falls as c grows, so the crossing is
 * found by bisection (§5.1 "binary search"). */
static double lower_bound(const gd_t *g) {
  double lo = 0, hi = 0;
  for (int32_t k = 0; k < g->nc; k++) {
    double fin = av__gd_class_cost(g, &g->c[k], g->c[k].bmax);
    if (fin > lo) lo = fin;
    if (g->c[k].c1 > hi) hi = g->c[k].c1;
  }
  if (hi <= lo || avg_load(g, hi) >= hi) return fmax(hi, avg_load(g, hi));
  if (avg_load(g, lo) <= lo) return lo;
  for (int it = 0; it < 60 && hi - lo > 1e-3 * hi; it++) {
    double mid = 0.5 * (lo + hi);
    if (avg_load(g, mid) > mid) lo = mid;
    else hi = mid;
  }
  return hi;
}

double av__gd_bound_divisions(gd_t *g, int eq5) {
  /* Eq. (5): b_k[i] <= ceil(C_est(n_q[i], n[i]) / cost_l) */
  double cost_l = lower_bound(g);
  for (int32_t k = 0; k < g->nc; k++) {
    gd_class_t *c = &g->c[k];
    double bound = eq5 ? ceil(c->c1 / cost_l) : c->bmax;
    c->bound = bound < c->bmax ? (int32_t)fmax(bound, 1) : c->bmax;
  }
  return cost_l;
}

static int job_cmp(const void *a, const void *b) {
  const gd_job_t *x = a, *y = b;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  if (x->task != y->task) return x->task < y->task ? -1 : 1;
  return (x->piece > y->piece) - (x->piece < y->piece);
}

/* min-heap of CTAs keyed by (load, id) */
static int slot_less(const gd_slot_t *a, const gd_slot_t *b) {
  return a->load < b->load || (a->load == b->load && a->cta < b->cta);
}

static void heap_down(gd_slot_t *h, int32_t n, int32_t i) {
  gd_slot_t x = h[i];
  for (;;) {
    int32_t l = 2 * i + 1, m = l;
    if (l >= n) break;
    if (l + 1 < n && slot_less(&h[l + 1], &h[l])) m = l + 1;
    if (!slot_less(&h[m], &x)) break;
    h[i] = h[m];
    i = m;
  }
  h[i] = x;
}

static int run_cmp(const void *a, const void *b) {
  const gd_run_t *x = a, *y = b;
  return (x->cost < y->cost) - (x->cost > y->cost);
}

static int pick_cmp(const void *a, const void *b) {
  const gd_pick_t *x = a, *y = b;
  return (x->cost < y->cost) - (x->cost > y->cost);
}

/* Builds the jobs of division b (candidate classes' divisions; other tasks undivided) into
 * g->jobs, in job_cmp order (longest first, then task, then piece); returns their count.
 * A class's jobs share one cost and come in task then piece order already, so only the
 * classes are sorted, and only jobs of classes that tie in cost are sorted among
 * themselves. */
static int32_t build_jobs(gd_t *g, const int32_t *b) {
  for (int32_t k = 0; k < g->nc; k++)
    g->picks[k] = (gd_pick_t){.cost = g->c[k].c1, .cls = k};
  for (int32_t k = 0; k < g->n_cand; k++) {
    const gd_class_t *cl = &g->c[g->cand[k]];
    g->picks[g->cand[k]].cost = b[k] == 1 ? cl->c1 : av__gd_class_cost(g, cl, b[k]);
    g->bs[g->cand[k]] = b[k];
  }
  qsort(g->picks, (size_t)g->nc, sizeof *g->picks, pick_cmp);
  int32_t n = 0;
  for (int32_t k = 0; k < g->nc;) {
    int32_t first = n, e = k;
    for (; e < g->nc && g->picks[e].cost == g->picks[k].cost; e++) {
      int32_t ci = g->picks[e].cls, bk = g->c[ci].bound > 1 ? g->bs[ci] : 1;
      for (int32_t m = g->mstart[ci]; m < g->mstart[ci + 1]; m++)
        for (int32_t i = 0; i < bk; i++)
          g->jobs[n++] = (gd_job_t){.cost = g->picks[e].cost, .task = g->members[m],
                                    .piece = i, .b = bk};
    }
    if (e - k > 1) qsort(g->jobs + first, (size_t)(n - first), sizeof *g->jobs, job_cmp);
    k = e;
  }
  return n;
}

/* Longest-first to the least-loaded CTA over the n_runs runs (n jobs in all): returns the
 * makespan, or INFINITY as soon as it reaches `cutoff` (the search's best so far: loads only
 * grow). cta_of[j] receives the CTA of the j-th job. */
static double lpt(gd_t *g, const gd_run_t *runs, int32_t n_runs, int64_t n, double cutoff,
                  int32_t *cta_of) {
  int32_t p = g->p < n ? g->p : (int32_t)n;
  /* Eq. (4) again: no assignment beats max(longest job, average load); summed job by job */
  double total = 0;
  for (int32_t r = 0; r < n_runs; r++)
    for (int64_t i = 0; i < runs[r].count; i++) total += runs[r].cost;
  if (n > 0 && fmax(runs[0].cost, total / g->p) >= cutoff) return INFINITY;
  double makespan = 0;
  gd_slot_t *h = g->heap;
  int64_t j = 0;
  for (int32_t r = 0; r < n_runs; r++) {
    double c = runs[r].cost;
    /* The first p jobs open the p CTAs in order (all loads are 0). Run costs strictly fall,
     * so putting each run's CTAs, in id order, below the previous run's sorts the array by
     * (load, id): a sorted array is a heap, no heapify needed. */
    int64_t end = j + runs[r].count < p ? j + runs[r].count : p, below = p - end - j;
    for (int64_t i = 0; i < runs[r].count; i++, j++) {
      int32_t cta;
      if (j < p) {
        cta = (int32_t)j;
        h[below + j] = (gd_slot_t){.load = c, .cta = cta};
        if (c > makespan) makespan = c;
      } else {
        cta = h[0].cta;
        h[0].load += c;
        if (h[0].load > makespan) makespan = h[0].load;
        heap_down(h, p, 0);
      }
      if (makespan >= cutoff) return INFINITY;
      cta_of[j] = cta;
    }
  }
  return makespan;
}

/* The runs of division b: the candidates' (cost of b pieces, count x b) merged, longest
 * first, with the other tasks' runs. Writes g->runs, returns their count; *n gets the job
 * count. */
static int32_t division_runs(gd_t *g, const int32_t *b, int64_t *n) {
  for (int32_t k = 0; k < g->n_cand; k++) {
    const gd_class_t *cl = &g->c[g->cand[k]];
    g->cruns[k] = (gd_run_t){.cost = b[k] == 1 ? cl->c1 : av__gd_class_cost(g, cl, b[k]),
                             .count = (int64_t)cl->count * b[k]};
  }
  qsort(g->cruns, (size_t)g->n_cand, sizeof *g->cruns, run_cmp);
  int32_t i = 0, k = 0, nr = 0;
  *n = 0;
  while (i < g->n_fruns || k < g->n_cand) {
    gd_run_t r = k >= g->n_cand || (i < g->n_fruns && g->fruns[i].cost > g->cruns[k].cost)
                     ? g->fruns[i++]
                     : g->cruns[k++];
    *n += r.count;
    if (nr > 0 && g->runs[nr - 1].cost == r.cost) g->runs[nr - 1].count += r.count;
    else if (r.count > 0) g->runs[nr++] = r;  /* runs of lpt() have distinct costs */
  }
  return nr;
}

/* Scores division b: its LPT makespan, or INFINITY when not below cutoff. A division that
 * scores below the cutoff becomes the best: its assignment is kept in g->best_cta. */
static double score(gd_t *g, const int32_t *b, double cutoff) {
  int64_t n;
  int32_t nr = division_runs(g, b, &n);
  double ms = lpt(g, g->runs, nr, n, cutoff, g->cta_of);
  if (ms < cutoff) {
    int32_t *t = g->best_cta;
    g->best_cta = g->cta_of;
    g->cta_of = t;
    g->have_best = 1;
  }
  return ms;
}

/* The pieces of the chosen division's jobs with the CTAs its LPT gave them, each queue in
 * job order. */
static void place_pieces(gd_t *g, int32_t n, av_sched_piece_t *pieces) {
  int32_t p = g->p < n ? g->p : n;
  memset(g->qlen, 0, sizeof *g->qlen * (size_t)(p > 0 ? p : 1));
  for (int32_t j = 0; j < n; j++) {
    const gd_job_t *jb = &g->jobs[j];
    const gd_task_t *t = &g->t[jb->task];
    int64_t len = g->c[t->cls].len;
    int32_t cta = g->best_cta[j];
    pieces[j] = (av_sched_piece_t){
        .node = t->node, .begin = jb->piece * len / jb->b,
        .end = (jb->piece + 1) * len / jb->b, .q_first = t->q_first, .n_q = t->n_q,
        .cost_us = jb->cost, .cta = cta, .order = g->qlen[cta]++};
  }
}

/* Grid search over divisions within the Eq. 5 bounds (§5.1 "we grid search the division
 * number of each KV cache node"): every combination when at most max_evals exist, else
 * max_evals steps of one scaling s/max_evals of all bounds. Keeps the first best (coarser
 * divisions are tried first, so ties favour fewer merges). Writes the best into best_b. */
static void search(gd_t *g, int64_t max_evals, int32_t *b, int32_t *best_b) {
  double combos = 1;
  for (int32_t k = 0; k < g->n_cand; k++) combos *= g->c[g->cand[k]].bound;
  double best = INFINITY;
  if (combos <= (double)max_evals) {
    for (int32_t k = 0; k < g->n_cand; k++) b[k] = 1;
    for (;;) {
      double ms = score(g, b, best * (1 - 1e-12));
      if (ms < best) {
        best = ms;
        memcpy(best_b, b, sizeof *b * (size_t)g->n_cand);
      }
      int32_t k = 0;  /* next combination, mixed radix */
      while (k < g->n_cand && ++b[k] > g->c[g->cand[k]].bound) b[k++] = 1;
      if (k == g->n_cand) break;
    }
    return;
  }
  for (int64_t step = 0; step <= max_evals; step++) {
    int changed = step == 0;
    for (int32_t k = 0; k < g->n_cand; k++) {
      int64_t bound = g->c[g->cand[k]].bound;
      int32_t bk = (int32_t)(1 + (bound - 1) * step / max_evals);
      changed |= bk != b[k];
      b[k] = bk;
    }
    /* small bounds repeat a division over several steps: scoring it again cannot win */
    if (!changed) continue;
    double ms = score(g, b, best * (1 - 1e-12));
    if (ms < best) {
      best = ms;
      memcpy(best_b, b, sizeof *b * (size_t)g->n_cand);
    }
  }
}

#define GD_NOMEM "out of memory planning greedy_division"

/* Job buffers sized for the largest division the search may try: count x bound per class. */
static int alloc_jobs(gd_t *g, av_error_t *err) {
  int64_t jobs_max = 0;
  for (int32_t k = 0; k < g->nc; k++) jobs_max += (int64_t)g->c[k].bound * g->c[k].count;
  size_t nj = (size_t)(jobs_max ? jobs_max : 1);
  size_t nc = (size_t)(g->nc ? g->nc : 1);
  g->jobs = malloc(sizeof *g->jobs * nj);
  g->cta_of = malloc(sizeof *g->cta_of * nj);
  g->best_cta = malloc(sizeof *g->best_cta * nj);
  g->picks = malloc(sizeof *g->picks * nc);
  g->bs = malloc(sizeof *g->bs * nc);
  if (!g->jobs || !g->picks || !g->bs || !g->cta_of || !g->best_cta)
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, GD_NOMEM);
  return AV_OK;
}

void av__gd_free(gd_t *g) {
  free(g->t);
  free(g->c);
  free(g->members);
  free(g->mstart);
  free(g->cand);
  free(g->jobs);
  free(g->cta_of);
  free(g->best_cta);
  free(g->picks);
  free(g->bs);
  free(g->fruns);
  free(g->cruns);
  free(g->runs);
  free(g->heap);
  free(g->qlen);
}

int av__gd_divide(gd_t *g, const av_params_t *params, av_sched_piece_t **out, int32_t *n_out,
                  av_error_t *err) {
  int32_t *b = NULL, *best_b = NULL;
  av_sched_piece_t *pieces = NULL;
  *out = NULL;
  *n_out = 0;
  av__gd_bound_divisions(g, av_params_bool(params, "eq5"));
  int rc = alloc_jobs(g, err);
  if (rc) return rc;
  for (int32_t k = 0; k < g->nc; k++) {
    const gd_class_t *c = &g->c[k];
    if (c->bound > 1) {
      g->cand[g->n_cand++] = k;
      continue;
    }
    g->fruns[g->n_fruns++] = (gd_run_t){.cost = c->c1, .count = c->count};
  }
  qsort(g->fruns, (size_t)g->n_fruns, sizeof *g->fruns, run_cmp);
  b = malloc(sizeof *b * (size_t)(g->n_cand + 1));
  best_b = malloc(sizeof *best_b * (size_t)(g->n_cand + 1));
  if (!b || !best_b) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, GD_NOMEM);
    goto done;
  }
  for (int32_t k = 0; k < g->n_cand; k++) best_b[k] = 1; /* kept if no score is finite */
  search(g, av_params_int(params, "max_evals"), b, best_b);

  int32_t n = build_jobs(g, best_b);
  pieces = malloc(sizeof *pieces * (size_t)(n ? n : 1));
  if (!pieces) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, GD_NOMEM);
    goto done;
  }
  if (!g->have_best) { /* every score was cut (non-finite costs): assign without a cutoff */
    int64_t n_jobs;
    int32_t n_runs = division_runs(g, best_b, &n_jobs); /* the costs of g->jobs, in order */
    lpt(g, g->runs, n_runs, n_jobs, INFINITY, g->best_cta);
  }
  place_pieces(g, n, pieces);
  *out = pieces;
  *n_out = n;
  pieces = NULL;
done:
  free(b);
  free(best_b);
  free(pieces);
  return rc;
}
