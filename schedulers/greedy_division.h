/* greedy_division's division search (FlashForge §5.1), shared by its two passes: the tasks
 * of one tile, the Eq. 4 lower bound, the Eq. 5 division bounds, the grid search over
 * divisions scored by LPT over p CTAs, and the chosen division's pieces. Internal to the
 * scheduler (schedulers/greedy_division.c plans with it, greedy_search.c implements it). */
#ifndef AV_GREEDY_DIVISION_H
#define AV_GREEDY_DIVISION_H

#include <stdint.h>

#include "schedulers/sched_util.h"

typedef struct {
  int32_t node, q_first, n_q;
  int32_t cls;       /* its class: tasks of equal (n_q, n, whole) cost the same */
} gd_task_t;

/* Identical tasks (siblings of a levels tree, say) have identical costs and bounds and get
 * the same division: the search runs over classes, not tasks. */
typedef struct {
  int32_t n_q;
  int64_t len;
  int whole;         /* b = 1 covers its queries' whole paths: FINAL output */
  int32_t count;     /* tasks in the class */
  int32_t bmax;      /* min(max_pieces, len) */
  int32_t bound;     /* Eq. 5 */
  double c1;         /* C_est(n_q, n): undivided */
} gd_class_t;

typedef struct {
  double cost;
  int32_t task, piece, b;
} gd_job_t;

/* A run of equal-cost jobs: LPT's makespan depends only on the job costs in order, so the
 * search scores a division from these runs without building its jobs. */
typedef struct {
  double cost;
  int64_t count;
} gd_run_t;

typedef struct {
  double cost;
  int32_t cls;
} gd_pick_t;

/* A CTA in the least-loaded heap, its load kept beside its id (one cache line read per
 * comparison). */
typedef struct {
  double load;
  int32_t cta;
} gd_slot_t;

typedef struct {
  const av_sched_ctx_t *ctx;
  av_tile_t tile;
  int32_t p;
  gd_task_t *t;
  int32_t nt;
  gd_class_t *c;
  int32_t nc;
  int32_t *members;             /* task ids grouped by class; class k's start at mstart[k] */
  int32_t *mstart;
  int32_t *cand, n_cand;        /* classes with bound > 1 */
  gd_job_t *jobs;               /* the chosen division's jobs (built once) */
  gd_pick_t *picks;             /* scratch of build_jobs: each class's job cost */
  int32_t *bs;                  /* scratch of build_jobs: each candidate class's division */
  gd_run_t *fruns;              /* the other tasks' jobs as runs, longest first */
  int32_t n_fruns;
  gd_run_t *cruns, *runs;       /* scratch: candidate runs, all runs of one division */
  gd_slot_t *heap;              /* scratch: min-heap of CTAs by (load, id) */
  int32_t *qlen;
  int32_t *cta_of, *best_cta;   /* CTA of each job: division being scored, best so far */
  int have_best;
} gd_t;

/* C[j] of a class cut in b pieces (Eq. 7): the longest piece, ceil(n / b) tokens. */
double av__gd_class_cost(const gd_t *g, const gd_class_t *c, int32_t b);

/* Sets each class's bound: Eq. 5 from the Eq. 4 lower bound cost_l (found by bisection over
 * the sub-task cost cap), or bmax without eq5. Returns cost_l. */
double av__gd_bound_divisions(gd_t *g, int eq5);

/* The division of g's tasks (set up with their classes, tile, p and c1): Eq. 5 bounds from
 * the Eq. 4 lower bound ("eq5", "max_evals" of params), the grid search, and the best
 * division's pieces with the CTA and order its LPT gave them. *out (the caller frees it)
 * receives *n pieces. */
int av__gd_divide(gd_t *g, const av_params_t *params, av_sched_piece_t **out, int32_t *n,
                  av_error_t *err);

/* Frees what g holds (not g). */
void av__gd_free(gd_t *g);

#endif
