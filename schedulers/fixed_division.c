/* fixed_division: FlashForge Fig. 9's naive division — every node's KV cut into k equal
 * pieces regardless of its length or sharing, one CTA per piece. It balances long nodes at the
 * price of splitting short ones (more partial states and merges): the trade-off §5.1's greedy
 * division resolves per node. */
#include "schedulers/sched_util.h"

static const char *const tile_choices[] = {"single", "per_shape", NULL};

static const av_param_def_t fd_params[] = {
    {.name = "k", .type = AV_PARAM_INT, .def = "4", .min = 1, .max = 1 << 20,
     .help = "pieces per node (a node shorter than k tokens gets one piece per token)"},
    {.name = "tiles", .type = AV_PARAM_ENUM, .def = "single", .choices = tile_choices,
     .help = "single: one kernel, one tile; per_shape: smallest tile per node, one stream "
             "per shape"},
    {.name = "tile_n", .type = AV_PARAM_INT, .def = "64", .min = 1, .max = 65536,
     .help = "preferred KV tile n among the compiled tiles"},
    AV_SCHED_LAUNCH_PARAM,
    AV_SCHED_WIDE_PARAM,
    {.name = NULL},
};

static int fd_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                   av_error_t *err) {
  return av__sched_plan_divided(ctx, params, av_params_int(params, "k"), "fixed_division", out,
                                err);
}

/* At least min(k, length) pieces per node with queries (beside: on one node at least), one
 * group of queries each: the bound the experiment's plan-size limit is checked against. */
static int64_t fd_min_items(const av_workload_t *w, const av_params_t *params) {
  const int64_t k = av_params_int(params, "k");
  const int beside = av_params_choice(params, "launch") == AV_SCHED_LAUNCH_BESIDE;
  int64_t sum = 0, most = 0;
  for (int32_t u = 0; u < w->n_nodes; u++) {
    if (w->node_req_offsets[u + 1] <= w->node_req_offsets[u]) continue;
    const int64_t len = w->nodes[u].kv_len_tokens, n = k < len ? k : len;
    sum += n;
    if (n > most) most = n;
  }
  return beside ? most : sum;
}

/* Every node with queries cut into min(k, length) pieces, each read by all of the node's
 * queries (beside keeps the long nodes whole, so its plan has fewer: the estimate is then
 * high, never low). */
static int64_t fd_pieces(const av_workload_t *w, const av_params_t *params) {
  const int64_t k = av_params_int(params, "k");
  int64_t sum = 0;
  for (int32_t u = 0; u < w->n_nodes; u++) {
    const int64_t share = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
    const int64_t len = w->nodes[u].kv_len_tokens;
    sum += share * (k < len ? k : len);  /* < 2^28 pairs x 2^20 */
  }
  return sum;
}

const av_scheduler_ops_t av_sched_fixed_division = {
    .name = "fixed_division",
    .description = "FlashForge Fig. 9 naive division: every node cut into k equal KV pieces",
    .params = fd_params,
    .plan = fd_plan,
    .wide_alternatives = av_sched_wide_alternatives,
    .min_items = fd_min_items,
    .pieces = fd_pieces,
};
