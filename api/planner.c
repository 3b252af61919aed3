/* Per-step planning for a serving loop (docs/schedulers.md#per-step-planning). A step reads
 * the block table against the planner's index of its batch: requests that grew (by tokens or
 * new blocks), arrived or finished patch the forest and the plan in place (plan_patch.h),
 * and the drift rule compares the patched plan's estimated time with the fresh plan's, as
 * measured when it was made, carried with the batch's unique KV: past the bound, the kept
 * forest is planned anew. A change patching does not handle builds the forest from the table
 * and plans anew. A batch of another shape keeps PAT §5.1's lazy update (av_plan_grow_to).
 * All buffers live from step to step. */
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "api/plan_choice.h"
#include "api/plan_patch.h"
#include "pipeline/plan_reuse.h"
#include "schedulers/scheduler.h"

int av__api_scheduler(const char *scheduler, const char *const *params, int n_params,
                      const av_scheduler_ops_t **ops, av_params_t *p, av_error_t *e);

struct anvil_planner {
  anvil_target_t *t;
  const av_scheduler_ops_t *ops;
  av_params_t sp;
  int block_size;
  av_heads_t heads;
  av__api_bt_buf_t buf;
  /* The block table of the current plan, token counts and, per request, the blocks it
   * shares with the previous one (same) and the ids of its other blocks, row after row:
   * the shared ones are the previous row's, so they need no copy. */
  int32_t *ids, *tokens, *same;
  size_t cap_ids, cap_tokens;
  int64_t *grow;         /* per node of the current batch: av_plan_grow_to's scratch */
  size_t cap_grow;
  int32_t n_requests;
  anvil_workload_t *w;   /* the current batch (the plan holds a reference too) */
  anvil_plan_t *plan;
  av__delta_t d;         /* the index patching reads the table against */
  av__plan_buf_t pbuf;   /* the plan's second set of arrays */
  av__est_t est;
  av__choice_t choice;   /* auto's last choice */
  double drift;          /* the bound on both ratios below, relative to the fresh plan's */
  double per_read;       /* the fresh plan's estimate per KV token it reads (balance) */
  double per_unique;     /* the fresh plan's KV tokens read per unique KV token (re-reads) */
  anvil_planner_stats_t stats;
};

int anvil_planner_create(anvil_target_t *t, const char *scheduler, const char *const *params,
                         int n_params, int block_size, const anvil_heads_t *heads,
                         anvil_planner_t **out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  anvil_planner_t *pl = calloc(1, sizeof *pl);
  if (!pl) return av__api_error(err, &e, av_error_set(&e, AV_ERR_NOMEM, NULL, NULL, "out of memory"));
  pl->t = t;
  pl->block_size = block_size;
  pl->heads = av__api_heads(heads);
  pl->buf.want_shared = 1;
  pl->drift = ANVIL_PLANNER_DRIFT;
  int rc = av__api_scheduler(scheduler, params, n_params, &pl->ops, &pl->sp, &e);
  if (rc) {
    anvil_planner_destroy(pl);
    return av__api_error(err, &e, rc);
  }
  *out = pl;
  return AV_OK;
}

void anvil_planner_destroy(anvil_planner_t *pl) {
  if (!pl) return;
  anvil_plan_destroy(pl->plan);
  anvil_workload_destroy(pl->w);
  av__api_bt_buf_free(&pl->buf);
  free(pl->ids);
  free(pl->tokens);
  free(pl->same);
  free(pl->grow);
  av__delta_free(&pl->d);
  av__plan_buf_free(&pl->pbuf);
  av__est_free(&pl->est);
  av__choice_free(&pl->choice);
  free(pl);
}

static int64_t blocks_of(int32_t tokens, int bs) { return ((int64_t)tokens + bs - 1) / bs; }

/* Is the table the current plan's with tokens grown inside each request's last block? Row
 * r equals the kept one when its first same[r] ids are the (already checked) previous row's
 * and the rest the kept ids: each row is read once, the previous one is still in cache. */
static int same_blocks(const anvil_planner_t *pl, const int32_t *table, int64_t stride,
                       const int32_t *tokens, int32_t n, int *grew) {
  if (!pl->plan || n != pl->n_requests) return 0;
  const int32_t *ids = pl->ids;
  *grew = 0;
  for (int32_t r = 0; r < n; r++) {
    int64_t nb = blocks_of(pl->tokens[r], pl->block_size), sh = pl->same[r];
    const int32_t *row = table + (int64_t)r * stride;
    if (tokens[r] < pl->tokens[r] || blocks_of(tokens[r], pl->block_size) != nb ||
        (sh && memcmp(row, row - stride, (size_t)sh * sizeof *row) != 0) ||
        memcmp(ids, row + sh, (size_t)(nb - sh) * sizeof *ids) != 0)
      return 0;
    *grew |= tokens[r] != pl->tokens[r];
    ids += nb - sh;
  }
  return 1;
}

/* Remembers the table the new plan was made for (pl->buf holds its block counts and the
 * blocks each request shares with the previous one). */
static int keep_table(anvil_planner_t *pl, const int32_t *table, int64_t stride,
                      const int32_t *tokens, int32_t n, av_error_t *e) {
  const int32_t *nb = pl->buf.counts, *same = pl->buf.shared;
  size_t total = 0;
  for (int32_t r = 0; r < n; r++) total += (size_t)(nb[r] - same[r]);
  if (total > pl->cap_ids || !pl->ids) {
    int32_t *p = realloc(pl->ids, (total ? total : 1) * sizeof *p);
    if (!p) return av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
    pl->ids = p;
    pl->cap_ids = total;
  }
  if ((size_t)n > pl->cap_tokens || !pl->tokens || !pl->same) {
    int32_t *p = realloc(pl->tokens, (size_t)n * sizeof *p);
    if (p) pl->tokens = p;
    int32_t *q = p ? realloc(pl->same, (size_t)n * sizeof *q) : NULL;
    if (q) pl->same = q;
    if (!p || !q) return av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
    pl->cap_tokens = (size_t)n;
  }
  int32_t *ids = pl->ids;
  for (int32_t r = 0; r < n; r++) {
    memcpy(ids, table + (int64_t)r * stride + same[r], (size_t)(nb[r] - same[r]) * sizeof *ids);
    ids += nb[r] - same[r];
  }
  memcpy(pl->tokens, tokens, (size_t)n * sizeof *tokens);
  memcpy(pl->same, same, (size_t)n * sizeof *same);
  pl->n_requests = n;
  return AV_OK;
}

/* The step's requests grew inside their last blocks: the batch (whose handle the plan
 * shares) and the plan grow in place when the lazy-update rule allows it. */
static int grow_leaves(anvil_planner_t *pl, const int32_t *tokens) {
  av_workload_t *w = pl->w->w;
  if ((size_t)w->n_nodes > pl->cap_grow || !pl->grow) {
    int64_t *g = realloc(pl->grow, (size_t)w->n_nodes * sizeof *g);
    if (!g) return 0; /* plan anew, which reports the shortage */
    pl->grow = g;
    pl->cap_grow = (size_t)w->n_nodes;
  }
  if (!av_plan_grow_to(pl->plan->p, w, tokens, pl->grow)) return 0;
  pl->plan->hash_stale = 1;
  memcpy(pl->tokens, tokens, (size_t)w->n_requests * sizeof *tokens);
  return 1;
}

/* How estimate() brings the items' fits up to date. */
enum { FIT_KEEP, FIT_ALL, FIT_CARRY };

/* The plan's estimate (us), the KV tokens it reads and the forest's unique KV tokens; the
 * items' fits kept (only leaves grew), all made anew, or carried through a patch. */
static int estimate(anvil_planner_t *pl, int fit, double *time_us, double *read,
                    double *unique) {
  const av_plan_t *p = pl->plan->p;
  const av_workload_t *w = pl->w->w;
  av_costmodel_t *cost;
  av_error_t e;
  if (fit != FIT_KEEP &&
      (av__api_target_cost(pl->t, &w->heads, &cost, &e) ||
       (fit == FIT_ALL ? av__est_fit(&pl->est, p, cost)
                       : av__est_carry(&pl->est, p, pl->pbuf.src, cost))))
    return -1;
  int64_t u = 0;
  for (int32_t k = 0; k < w->n_nodes; k++) u += w->nodes[k].kv_len_tokens;
  *unique = (double)u;
  return av__est_time(&pl->est, p, pl->t->gpu.sm_count, time_us, read);
}

/* A fresh plan is the drift rule's reference: its estimate per KV token read, and its KV
 * tokens read per unique one. */
static void fresh_reference(anvil_planner_t *pl) {
  double t, r, u;
  if (av__plan_buf_adopt(&pl->pbuf, pl->plan->p)) pl->d.ok = 0; /* patch no more */
  int bad = estimate(pl, FIT_ALL, &t, &r, &u) || r <= 0 || u <= 0;
  pl->per_read = bad ? 0 : t / r;
  pl->per_unique = bad ? 0 : r / u;
}

/* The drift rule: has the patched plan become slower per KV token it reads, or does it
 * read more per unique token, by more than the bound, than the fresh plan it came from? */
static int drifted(const anvil_planner_t *pl, double t, double r, double u) {
  return t > (1 + pl->drift) * pl->per_read * r || r > (1 + pl->drift) * pl->per_unique * u;
}

static int plan_anew(anvil_planner_t *pl, const int32_t *table, int64_t stride,
                     const int32_t *tokens, int32_t n, av_error_t *e) {
  av_workload_t *w = NULL;
  av_plan_t *p = NULL;
  int rc = av__api_block_table(&(av__api_bt_t){table, stride, tokens, n}, pl->block_size,
                               &pl->heads, &pl->buf, &w, e);
  if (!rc) rc = av__choice_plan(&pl->choice, pl->t, w, pl->ops, &pl->sp, 1, &p, e);
  anvil_workload_t *wh = rc ? NULL : av__api_workload_wrap(w);
  anvil_plan_t *ph = wh ? av__api_plan_wrap(p, wh) : NULL;
  if (!rc && !ph) rc = av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  if (!rc && av__delta_index(&pl->d, w, table, stride, tokens))
    rc = av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  if (!rc && !pl->d.ok) rc = keep_table(pl, table, stride, tokens, n, e);
  if (rc) {
    if (!wh) av_workload_destroy(w);
    if (!ph) av_plan_destroy(p);
    anvil_plan_destroy(ph);
    anvil_workload_destroy(wh);
    pl->n_requests = 0;
    pl->d.ok = 0;
    return rc;
  }
  if (pl->plan) av__plan_buf_reclaim(&pl->pbuf, pl->plan->p);
  anvil_plan_destroy(pl->plan);
  anvil_workload_destroy(pl->w);
  pl->plan = ph;
  pl->w = wh;
  pl->n_requests = n;
  pl->stats.planned++;
  fresh_reference(pl);
  return AV_OK;
}

/* The drift rule's fresh plan: the kept forest (already the step's) planned anew. */
static int replan_forest(anvil_planner_t *pl, av_error_t *e) {
  av_plan_t *p = NULL;
  int rc = av__choice_plan(&pl->choice, pl->t, pl->w->w, pl->ops, &pl->sp, 0, &p, e);
  if (rc) return rc;
  av__plan_buf_reclaim(&pl->pbuf, pl->plan->p);
  av_plan_destroy(pl->plan->p);
  pl->plan->p = p;
  pl->plan->hash_stale = 1;
  pl->stats.replanned++;
  fresh_reference(pl);
  return AV_OK;
}

/* Patches the forest and the plan into the step's; 0 when patched (or planned anew by the
 * drift rule), 1 when the change needs a build from the table, else an error. */
static int patch(anvil_planner_t *pl, const int32_t *table, int64_t stride,
                 const int32_t *tokens, int32_t n, av_error_t *e) {
  av__delta_t *d = &pl->d;
  av_workload_t *w = pl->w->w;
  av_plan_t *p = pl->plan->p;
  if (av__delta_match(d, w, table, stride, tokens, n)) return 1;
  const av__changes_t *ch = &d->ch;
  int events = ch->n_fin + ch->n_arr > 0;
  if (av__delta_claim(d, w, table, stride, tokens) || av__delta_maps(d, w, tokens)) return 1;
  if (events ? av__plan_patch(p, w, ch, &pl->est, &pl->pbuf)
             : (av__plan_grow(p, ch->old_len, ch->new_len), 0))
    return 1;
  if (av__delta_apply(d, w, table, stride, tokens)) return 1;
  pl->plan->hash_stale = 1;
  pl->n_requests = n;
  double t, r, u;
  if (estimate(pl, events ? FIT_CARRY : FIT_KEEP, &t, &r, &u)) return 1;
  pl->stats.last_estimate_us = t;
  if (drifted(pl, t, r, u)) {
    pl->stats.last = ANVIL_STEP_REPLANNED;
    return replan_forest(pl, e);
  }
  if (events || ch->n_newblocks) {
    pl->stats.patched++;
    pl->stats.last = ANVIL_STEP_PATCHED;
  } else {
    pl->stats.reused++;
    pl->stats.last = ANVIL_STEP_REUSED;
  }
  return AV_OK;
}

int anvil_planner_step(anvil_planner_t *pl, const int32_t *table, int64_t row_stride,
                       const int32_t *kv_tokens, int32_t n_requests, int *reused,
                       anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int grew = 0, rc;
  if (reused) *reused = 0;
  if ((rc = av__api_bt_check(row_stride, kv_tokens, n_requests, pl->block_size, &e)))
    return av__api_error(err, &e, rc);
  if (pl->plan && pl->d.ok) {
    rc = patch(pl, table, row_stride, kv_tokens, n_requests, &e);
    if (rc != 1) {
      if (reused) *reused = !rc && pl->stats.last != ANVIL_STEP_REPLANNED;
      return av__api_error(err, &e, rc);
    }
  } else if (same_blocks(pl, table, row_stride, kv_tokens, n_requests, &grew) &&
             (!grew || grow_leaves(pl, kv_tokens))) {
    pl->stats.reused++;
    pl->stats.last = ANVIL_STEP_REUSED;
    if (reused) *reused = 1;
    return AV_OK;
  }
  rc = plan_anew(pl, table, row_stride, kv_tokens, n_requests, &e);
  pl->stats.last = ANVIL_STEP_PLANNED;
  return av__api_error(err, &e, rc);
}

const anvil_plan_t *anvil_planner_plan(const anvil_planner_t *pl) { return pl->plan; }

void anvil_planner_counts(const anvil_planner_t *pl, int64_t *planned, int64_t *reused) {
  if (planned) *planned = pl->stats.planned + pl->stats.replanned;
  if (reused) *reused = pl->stats.reused + pl->stats.patched;
}

void anvil_planner_stats(const anvil_planner_t *pl, anvil_planner_stats_t *out) {
  *out = pl->stats;
  out->races = pl->choice.races;
}

int anvil_planner_set_drift(anvil_planner_t *pl, double bound, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  if (!(bound >= 0 && bound <= 1e6))
    return av__api_error(err, &e, av_error_set(&e, AV_ERR_RANGE, NULL, "drift",
                                               "drift bound %g is out of range; expected a "
                                               "number in [0, 1e6]", bound));
  pl->drift = bound;
  return AV_OK;
}

double anvil_planner_estimate_us(anvil_planner_t *pl) {
  double t, r, u;
  if (!pl->plan || estimate(pl, FIT_ALL, &t, &r, &u)) return -1;
  return t;
}
