/* node_naive: the plain KV-centric plan (FlashForge Algorithm 4 lines 4-6, Fig. 4): one CTA
 * per tree node with all the queries below it, no balancing. A node's queries are split into
 * several CTAs only when their rows exceed the largest compiled tile. Its imbalance on uneven
 * trees is what FlashForge §5 and PAT §6 set out to remove. */
#include <stdlib.h>

#include "schedulers/sched_util.h"

static const char *const tile_choices[] = {"single", "per_shape", NULL};

static const av_param_def_t nn_params[] = {
    {.name = "tiles", .type = AV_PARAM_ENUM, .def = "single", .choices = tile_choices,
     .help = "single: one kernel whose tile fits the largest node (one-size-fits-all, PAT "
             "§3.3); per_shape: smallest tile per node, one stream per shape"},
    {.name = "tile_n", .type = AV_PARAM_INT, .def = "64", .min = 1, .max = 65536,
     .help = "preferred KV tile n among the compiled tiles"},
    AV_SCHED_LAUNCH_PARAM,
    AV_SCHED_WIDE_PARAM,
    {.name = NULL},
};

/* Pieces per node: k each, or (beside) k only for the nodes whose query groups take the
 * largest partial tile m (the grid's) and 1 for the others, since their persistent queues
 * balance them (LPT) and every cut adds a partial state to merge (whole leaves: 142.4 us on
 * the H200's prefix16k against 160.9 us cut in 4, docs/kernels.md). */
static void node_cuts(const av_sched_ctx_t *ctx, int64_t k, int beside, int32_t per_cta,
                      int prefer_n, int64_t *cuts) {
  const av_workload_t *w = ctx->workload;
  int64_t big_m = 0;
  for (int32_t u = 0; u < w->n_nodes; u++) {
    cuts[u] = k;
    const int32_t share = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
    if (!beside || share <= 0) continue;
    const int32_t groups = av_sched_split_even(share, per_cta, NULL);
    av_tile_t t;
    av_error_t scratch;
    av_error_clear(&scratch);
    const int32_t rows = av_sched_rows(ctx, (share + groups - 1) / groups);
    cuts[u] = av_sched_pick_tile(ctx, AV_KERNEL_PARTIAL, rows, prefer_n, &t, &scratch)
                  ? 0
                  : t.m_rows; /* the tile's m, for now */
    if (cuts[u] > big_m) big_m = cuts[u];
  }
  for (int32_t u = 0; beside && u < w->n_nodes; u++) cuts[u] = cuts[u] < big_m ? 1 : k;
}

int av__sched_plan_divided(const av_sched_ctx_t *ctx0, const av_params_t *params, int64_t k,
                           const char *name, av_plan_t **out, av_error_t *err) {
  av_sched_ctx_t wide = *ctx0;
  wide.wide_tiles = av_params_choice(params, "wide") == 1;
  const av_sched_ctx_t *ctx = &wide;
  const av_workload_t *w = ctx->workload;
  int32_t per_cta;
  const int launch = av_params_choice(params, "launch");
  const av_kernel_kind_t kind =
      launch == AV_SCHED_LAUNCH_PERSISTENT ? AV_KERNEL_PERSISTENT : AV_KERNEL_PARTIAL;
  /* beside places the largest tile's grid and the smaller tiles beside it: per shape by
   * construction, whatever "tiles" says */
  const int beside = launch == AV_SCHED_LAUNCH_BESIDE;
  const int single = !beside && av_params_choice(params, "tiles") == AV_SCHED_TILES_SINGLE;
  int rc = av_sched_max_queries(ctx, kind, &per_cta, err);
  if (rc) return rc;
  const int prefer_n = (int)av_params_int(params, "tile_n");
  int64_t *cuts = malloc(sizeof *cuts * (size_t)(w->n_nodes > 0 ? w->n_nodes : 1));
  if (!cuts) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning %s", name);
  node_cuts(ctx, k, beside, per_cta, prefer_n, cuts);
  /* pieces: per node ceil(share / per_cta) groups x min(cuts, len) */
  int64_t total = 0;
  for (int32_t u = 0; u < w->n_nodes; u++) {
    int32_t share = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
    int64_t len = w->nodes[u].kv_len_tokens;
    total += (int64_t)av_sched_split_even(share, per_cta, NULL) * (cuts[u] < len ? cuts[u] : len);
  }
  const int64_t most = ctx->max_items > 0 && ctx->max_items < INT32_MAX / 2 ? ctx->max_items
                                                                            : INT32_MAX / 2;
  if (total > most) {
    free(cuts);
    return av_error_set(err, AV_ERR_RANGE, NULL, "k",
                        "%s would make %lld CTAs, over the limit of %lld (limits.plan_items); "
                        "use a smaller k",
                        name, (long long)total, (long long)most);
  }
  av_sched_piece_t *pieces = malloc(sizeof *pieces * (size_t)(total ? total : 1));
  av_plan_t *p = av_plan_create(w, name);
  if (!pieces || !p) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning %s", name);
  } else {
    int32_t n = 0;
    for (int32_t u = 0; u < w->n_nodes; u++)
      if (w->node_req_offsets[u + 1] > w->node_req_offsets[u])
        n += av_sched_node_pieces(w, u, cuts[u], per_cta, pieces + n);
    av_sched_tile_mode_t mode = single   ? AV_SCHED_TILES_SINGLE
                                : beside ? AV_SCHED_TILES_BESIDE
                                         : AV_SCHED_TILES_PER_SHAPE;
    rc = av_sched_emit_pieces(ctx, p, pieces, n, (av_sched_emit_t){kind, mode, prefer_n, 0}, err);
  }
  free(pieces);
  free(cuts);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  *out = p;
  return AV_OK;
}

static int nn_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                   av_error_t *err) {
  return av__sched_plan_divided(ctx, params, 1, "node_naive", out, err);
}

const av_scheduler_ops_t av_sched_node_naive = {
    .name = "node_naive",
    .description = "KV-centric: one CTA per tree node with all its queries, no balancing",
    .params = nn_params,
    .plan = nn_plan,
    .wide_alternatives = av_sched_wide_alternatives,
};
