/* linear: FlashInfer's tile cost (Algorithm 1, line 2): cost(l_q, l_kv) = alpha·l_q +
 * beta·l_kv, plus a fixed per-CTA term. l_q is the item's query rows (queries x GQA group,
 * as FlashInfer fuses the group into the tile), l_kv its KV tokens. */
#include "costmodels/costmodel.h"
#include "costmodels/costmodel_internal.h"

static const av_param_def_t linear_params[] = {
    {.name = "alpha", .type = AV_PARAM_DOUBLE, .def = "-1", .min = -1.0, .max = 1e6,
     .help = "us per query row; -1 = the row's Q+O bytes over one CTA's HBM share"},
    {.name = "beta", .type = AV_PARAM_DOUBLE, .def = "-1", .min = -1.0, .max = 1e6,
     .help = "us per KV token; -1 = one token's K+V bytes over one CTA's HBM share"},
    {.name = "fixed_us", .type = AV_PARAM_DOUBLE, .def = "-1", .min = -1.0, .max = 1e6,
     .help = "per-CTA fixed cost in us; -1 = the GPU spec's cta_fixed_us"},
    {.name = NULL},
};

typedef struct {
  double alpha, beta, fixed_us;  /* resolved (never -1) */
} linear_state_t;

/* FlashInfer leaves alpha and beta as hyperparameters; the defaults derive them from the
 * bytes a row and a token move, so that with no tuning the model ranks items by traffic. */
static int linear_create(const av_params_t *p, const av_cost_env_t *env, void **state,
                         av_error_t *err) {
  linear_state_t *s = av__cost_alloc_state(sizeof *s, "linear", err);
  if (!s) return AV_ERR_NOMEM;
  double share = av__cost_bw_share_Bpus(env, 1.0);
  double el = av_dtype_bytes(env->heads->dtype), d = env->heads->head_dim;
  s->alpha = av_params_double(p, "alpha");
  s->beta = av_params_double(p, "beta");
  if (s->alpha < 0) s->alpha = 2.0 * d * el / share;
  if (s->beta < 0) s->beta = 2.0 * d * el / share;
  s->fixed_us = av__cost_fixed_us(p, env);
  *state = s;
  return AV_OK;
}

static void linear_estimate(const void *state, const av_cost_env_t *env,
                            const av_cost_query_t *q, av_item_cost_t *out) {
  const linear_state_t *s = state;
  av__cost_item_traffic(env->heads, q, out);
  out->time_us = s->fixed_us + s->alpha * q->rows + s->beta * (double)q->kv_tokens;
}

const av_costmodel_ops_t av_cost_linear = {
    .name = "linear",
    .description = "FlashInfer Alg. 1 tile cost: fixed + alpha*l_q + beta*l_kv",
    .params = linear_params,
    .create = linear_create,
    .destroy = av__cost_free_state,
    .estimate = linear_estimate,
};
