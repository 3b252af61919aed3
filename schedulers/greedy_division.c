/* greedy_division: FlashForge §5.1 task division and scheduling. Tasks are (node, queries)
 * pairs T[i] = (n_q[i], n[i]); queries are not split (b_q = 1) unless they exceed the largest
 * tile. A lower bound cost_l of the makespan comes from Eq. (4) by binary search; Eq. (5)
 * bounds each node's KV division b_k[i] <= ceil(C_est(n_q[i], n[i]) / cost_l); divisions
 * within those bounds are searched, each scored by assigning the sub-tasks longest first to
 * the least-loaded of p CTAs (Graham's LPT, FlashForge ref. [14]); the best becomes the plan.
 * Costs are the experiment's cost model: C[j] = C_est(n_q, n / b_k) (Eq. 7). With wide=on the
 * tasks of more than 64 rows are divided apart, for the warp-specialised m128 tile's grid
 * (one CTA an SM), and the others after them as before. The search is greedy_search.c. */
#include <stdlib.h>

#include "schedulers/greedy_division.h"

/* "launch", in the order of launch_choices */
enum { GD_LAUNCH_PERSISTENT, GD_LAUNCH_GRID };
static const char *const launch_choices[] = {"persistent", "grid", NULL};

static const av_param_def_t gd_params[] = {
    {.name = "ctas", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 1e7,
     .help = "thread blocks p (m in Eq. 3-4) per KV head, the grid being (p, KV heads); "
             "0 = SMs x CTAs per SM / KV heads, one wave of the GPU"},
    {.name = "ctas_per_sm", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 64,
     .help = "CTAs per SM for p; 0 = occupancy of the chosen tile (1 without variants)"},
    {.name = "max_pieces", .type = AV_PARAM_INT, .def = "256", .min = 1, .max = 65536,
     .help = "most KV pieces one node may be cut into (also at most its length)"},
    {.name = "eq5", .type = AV_PARAM_BOOL, .def = "true",
     .help = "bound divisions by Eq. 5 (false: only by max_pieces; an ablation)"},
    {.name = "max_evals", .type = AV_PARAM_INT, .def = "32", .min = 1, .max = 1 << 20,
     .help = "divisions scored in the grid search: all within the Eq. 5 bounds when that "
             "many suffice, else that many steps of a common scaling of the bounds"},
    {.name = "launch", .type = AV_PARAM_ENUM, .def = "persistent", .choices = launch_choices,
     .help = "persistent: p CTAs run the LPT queues (the assignment A of Eq. 3); grid: one "
             "CTA per sub-task, longest first, dispatched by the hardware"},
    {.name = "tile_n", .type = AV_PARAM_INT, .def = "64", .min = 1, .max = 65536,
     .help = "preferred KV tile n among the compiled tiles"},
    {.name = "wide", .type = AV_PARAM_ENUM, .def = "off", .choices = av_sched_wide_choices,
     .help = "on: tasks of more than 64 rows are divided for the warp-specialised m128 x "
             "n128 tile (sm_90a), one CTA an SM, p = one wave of it, launched as a grid first; "
             "the other tasks are divided as with off and launched after it on the same stream"},
    {.name = NULL},
};

/* Which tasks a pass divides: all, or (wide=on) those of at most / more than narrow_rows. */
typedef struct {
  enum { GD_ALL, GD_NARROW, GD_WIDE } which;
  int32_t narrow_rows; /* the largest m of the tiles that share an SM */
} gd_filter_t;

static int keeps(const gd_t *g, const gd_filter_t *f, int32_t n_q) {
  if (f->which == GD_ALL) return 1;
  return (av_sched_rows(g->ctx, n_q) > f->narrow_rows) == (f->which == GD_WIDE);
}

/* Tasks: one per (node, query group) that the filter keeps; queries split only beyond the
 * largest tile. */
static int make_tasks(gd_t *g, const av_params_t *params, int32_t per_cta, const gd_filter_t *f,
                      av_error_t *err) {
  const av_workload_t *w = g->ctx->workload;
  int64_t nt = 0;
  for (int32_t u = 0; u < w->n_nodes; u++)
    nt += av_sched_split_even(w->node_req_offsets[u + 1] - w->node_req_offsets[u], per_cta,
                              NULL);
  size_t n = (size_t)(nt ? nt : 1);
  g->t = calloc(n, sizeof *g->t);
  g->c = calloc(n, sizeof *g->c);
  g->members = malloc(n * sizeof *g->members);
  g->mstart = calloc(n + 1, sizeof *g->mstart);
  if (!g->t || !g->c || !g->members || !g->mstart)
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  int64_t max_pieces = av_params_int(params, "max_pieces");
  for (int32_t u = 0; u < w->n_nodes; u++) {
    int32_t share = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
    int32_t groups = av_sched_split_even(share, per_cta, NULL), q = 0;
    int64_t len = w->nodes[u].kv_len_tokens;
    int whole = av_sched_node_is_whole_path(w, u);
    for (int32_t k = 0; k < groups; k++) {
      int32_t nq = share / groups + (k < share % groups);
      if (!keeps(g, f, nq)) {
        q += nq;
        continue;
      }
      /* classes in order of first appearance; a linear scan over the (few) classes */
      int32_t ci = 0;
      while (ci < g->nc && !(g->c[ci].n_q == nq && g->c[ci].len == len && g->c[ci].whole == whole))
        ci++;
      if (ci == g->nc)
        g->c[g->nc++] = (gd_class_t){.n_q = nq, .len = len, .whole = whole,
                                     .bmax = (int32_t)(len < max_pieces ? len : max_pieces)};
      g->c[ci].count++;
      g->t[g->nt++] = (gd_task_t){.node = u, .q_first = q, .n_q = nq, .cls = ci};
      q += nq;
    }
  }
  for (int32_t k = 0; k < g->nc; k++) g->mstart[k + 1] = g->mstart[k] + g->c[k].count;
  int32_t *fill = calloc((size_t)g->nc + 1, sizeof *fill);
  if (!fill) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  for (int32_t j = 0; j < g->nt; j++) {
    int32_t ci = g->t[j].cls;
    g->members[g->mstart[ci] + fill[ci]++] = j;
  }
  free(fill);
  return AV_OK;
}

/* The tasks the filter keeps (queries in groups of per_cta), their tile of `kind` and p.
 * The wide pass's p is one wave of its tile; the others' follow "ctas" and "ctas_per_sm". */
static int gd_setup(gd_t *g, const av_params_t *params, av_kernel_kind_t kind, int32_t per_cta,
                    const gd_filter_t *f, av_error_t *err) {
  const av_sched_ctx_t *ctx = g->ctx;
  int rc = make_tasks(g, params, per_cta, f, err);
  if (rc) return rc;
  int32_t max_q = 1;
  for (int32_t j = 0; j < g->nt; j++)
    if (g->t[j].n_q > max_q) max_q = g->t[j].n_q;
  if ((rc = av_sched_pick_tile(ctx, kind, av_sched_rows(ctx, max_q),
                               (int)av_params_int(params, "tile_n"), &g->tile, err)))
    return rc;
  const int wide = f->which == GD_WIDE;
  int64_t p = wide ? 0 : av_params_int(params, "ctas");
  int64_t per_sm = wide ? 0 : av_params_int(params, "ctas_per_sm");
  /* Each queue (and each grid-launch sub-task) runs once per KV head, so the p blocks of
   * Eq. 3-4 that run at once are the GPU's concurrent CTAs over the KV heads. */
  const int64_t hkv = ctx->workload->heads.hkv > 0 ? ctx->workload->heads.hkv : 1;
  if (p <= 0) p = per_sm > 0 ? per_sm * ctx->gpu->sm_count / hkv
                             : av_sched_concurrent_queues(ctx, &g->tile, 1);
  g->p = (int32_t)(p > 0 ? p : 1);
  for (int32_t k = 0; k < g->nc; k++) g->c[k].c1 = av__gd_class_cost(g, &g->c[k], 1);
  size_t nc = (size_t)(g->nc ? g->nc : 1);
  g->cand = malloc(sizeof *g->cand * nc);
  g->fruns = malloc(sizeof *g->fruns * nc);
  g->cruns = malloc(sizeof *g->cruns * nc);
  g->runs = malloc(sizeof *g->runs * 2 * nc);
  g->heap = malloc(sizeof *g->heap * (size_t)g->p);
  g->qlen = malloc(sizeof *g->qlen * (size_t)g->p);
  if (!g->cand || !g->fruns || !g->cruns || !g->runs || !g->heap || !g->qlen)
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning greedy_division");
  return AV_OK;
}

/* One pass: divides the tasks the filter keeps and appends their launch (stream 0, after any
 * launch already there). A wide or narrow pass with no tasks adds nothing. */
static int plan_pass(const av_sched_ctx_t *ctx, const av_params_t *params, av_kernel_kind_t kind,
                     int32_t per_cta, const gd_filter_t *f, av_plan_t *p, av_error_t *err) {
  gd_t g = {.ctx = ctx};
  av_sched_piece_t *pieces = NULL;
  int32_t n = 0;
  int rc = gd_setup(&g, params, kind, per_cta, f, err);
  if (!rc && (g.nt > 0 || f->which == GD_ALL)) {
    rc = av__gd_divide(&g, params, &pieces, &n, err);
    const int persistent = kind == AV_KERNEL_PERSISTENT;
    const int32_t ctas = g.p < n ? g.p : n;
    if (!persistent)
      for (int32_t i = 0; i < n; i++) pieces[i].cta = pieces[i].order = -1;
    if (!rc)
      rc = av_sched_emit_pieces(
          ctx, p, pieces, n,
          (av_sched_emit_t){kind, AV_SCHED_TILES_SINGLE, (int)av_params_int(params, "tile_n"),
                            persistent ? ctas : 0},
          err);
  }
  free(pieces);
  av__gd_free(&g);
  return rc;
}

static int gd_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                   av_error_t *err) {
  if (!ctx->cost)
    return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                        "greedy_division needs a cost model (C_est of FlashForge Eq. 6)");
  const av_kernel_kind_t kind = av_params_choice(params, "launch") == GD_LAUNCH_PERSISTENT
                                    ? AV_KERNEL_PERSISTENT
                                    : AV_KERNEL_PARTIAL;
  av_sched_ctx_t wide = *ctx;
  wide.wide_tiles = av_params_choice(params, "wide") == 1;
  int32_t per_cta;
  gd_filter_t f = {.which = GD_ALL};
  /* wide=on: queries grouped for the m128 tile; groups of more rows than the narrow tiles'
   * largest m go to it */
  int rc = av_sched_max_queries(wide.wide_tiles ? &wide : ctx,
                                 wide.wide_tiles ? AV_KERNEL_PARTIAL : kind, &per_cta, err);
  if (rc) return rc;
  if (wide.wide_tiles && (f.narrow_rows = av_sched_max_rows(ctx, AV_KERNEL_PARTIAL, err)) <= 0)
    return err && err->code ? err->code : AV_ERR_UNSUPPORTED;
  av_plan_t *p = av_plan_create(ctx->workload, "greedy_division");
  if (!p) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning greedy_division");
  if (wide.wide_tiles) {
    f.which = GD_WIDE;
    rc = plan_pass(&wide, params, AV_KERNEL_PARTIAL, per_cta, &f, p, err);
    f.which = GD_NARROW;
  }
  if (!rc) rc = plan_pass(ctx, params, kind, per_cta, &f, p, err);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  *out = p;
  return AV_OK;
}

static const char *const gd_wide_alternatives[] = {"wide=on", NULL};

const av_scheduler_ops_t av_sched_greedy_division = {
    .name = "greedy_division",
    .description = "FlashForge 5.1: Eq. 4 lower bound, Eq. 5 division bounds, grid search, "
                   "longest-first to least-loaded of p CTAs",
    .params = gd_params,
    .plan = gd_plan,
    .wide_alternatives = gd_wide_alternatives,
};
