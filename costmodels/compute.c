/* compute: FastTree-style cost — the FLOPs of the tile the item actually runs (rows padded to
 * the tile's m, KV tokens to its n) over one SM's tensor rate, plus a fixed per-CTA cost.
 * It ignores memory traffic on purpose: PAT's "PAT-compute" ablation packs with it. */
#include "costmodels/costmodel.h"
#include "costmodels/costmodel_internal.h"

static const av_param_def_t compute_params[] = {
    {.name = "tensor_scale", .type = AV_PARAM_DOUBLE, .def = "1.0", .min = 0.01, .max = 100.0,
     .help = "multiplies the GPU's dense fp16 tensor rate"},
    {.name = "fixed_us", .type = AV_PARAM_DOUBLE, .def = "-1", .min = -1.0, .max = 1e6,
     .help = "per-CTA fixed cost in us; -1 = the GPU spec's cta_fixed_us"},
    {.name = NULL},
};

typedef struct {
  double tensor_scale, fixed_us;
} compute_state_t;

static int compute_create(const av_params_t *p, const av_cost_env_t *env, void **state,
                          av_error_t *err) {
  compute_state_t *s = av__cost_alloc_state(sizeof *s, "compute", err);
  if (!s) return AV_ERR_NOMEM;
  s->tensor_scale = av_params_double(p, "tensor_scale");
  s->fixed_us = av__cost_fixed_us(p, env);
  *state = s;
  return AV_OK;
}

/* time = fixed + ceil(rows/m)·m · ceil(kv/n)·n · d · 4 / (tensor rate / SMs). */
static void compute_estimate(const void *state, const av_cost_env_t *env,
                             const av_cost_query_t *q, av_item_cost_t *out) {
  const compute_state_t *s = state;
  av__cost_item_traffic(env->heads, q, out);
  out->time_us = s->fixed_us + out->flops / av__cost_sm_tensor_flops_per_us(env, s->tensor_scale);
}

const av_costmodel_ops_t av_cost_compute = {
    .name = "compute",
    .description = "FastTree-style: tile-padded FLOPs over one SM's tensor rate + fixed cost",
    .params = compute_params,
    .create = compute_create,
    .destroy = av__cost_free_state,
    .estimate = compute_estimate,
};
