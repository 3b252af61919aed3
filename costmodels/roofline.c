/* roofline: an item's time is a fixed per-CTA cost plus the slower of its memory time (bytes
 * over its share of HBM bandwidth) and its compute time (tile-padded FLOPs over one SM's
 * tensor rate) — the roofline model (Williams et al., cited by FlashForge §5.2) applied to
 * one CTA that shares the GPU with `concurrent_ctas` others. */
#include <math.h>

#include "costmodels/costmodel.h"
#include "costmodels/costmodel_internal.h"

static const av_param_def_t roofline_params[] = {
    {.name = "bw_scale", .type = AV_PARAM_DOUBLE, .def = "1.0", .min = 0.01, .max = 100.0,
     .help = "multiplies the GPU's effective HBM bandwidth (measured, else 0.9 x datasheet)"},
    {.name = "tensor_scale", .type = AV_PARAM_DOUBLE, .def = "1.0", .min = 0.01, .max = 100.0,
     .help = "multiplies the GPU's dense fp16 tensor rate"},
    {.name = "fixed_us", .type = AV_PARAM_DOUBLE, .def = "-1", .min = -1.0, .max = 1e6,
     .help = "per-CTA fixed cost in us; -1 = the GPU spec's cta_fixed_us"},
    {.name = NULL},
};

typedef struct {
  double bw_scale, tensor_scale, fixed_us;
} roofline_state_t;

static int roofline_create(const av_params_t *p, const av_cost_env_t *env, void **state,
                           av_error_t *err) {
  roofline_state_t *s = av__cost_alloc_state(sizeof *s, "roofline", err);
  if (!s) return AV_ERR_NOMEM;
  s->bw_scale = av_params_double(p, "bw_scale");
  s->tensor_scale = av_params_double(p, "tensor_scale");
  s->fixed_us = av__cost_fixed_us(p, env);
  *state = s;
  return AV_OK;
}

/* time = fixed + max(bytes / (BW / concurrent), padded_flops / (tensor rate / SMs)).
 * Bandwidth is shared evenly by the CTAs expected to run at once (processor sharing);
 * tensor throughput is per SM, and the tile pads rows to m and tokens to n. */
static void roofline_estimate(const void *state, const av_cost_env_t *env,
                              const av_cost_query_t *q, av_item_cost_t *out) {
  const roofline_state_t *s = state;
  av__cost_item_traffic(env->heads, q, out);
  double mem_us = out->hbm_bytes / av__cost_bw_share_Bpus(env, s->bw_scale);
  double cmp_us = out->flops / av__cost_sm_tensor_flops_per_us(env, s->tensor_scale);
  out->time_us = s->fixed_us + fmax(mem_us, cmp_us);
}

const av_costmodel_ops_t av_cost_roofline = {
    .name = "roofline",
    .description = "fixed per-CTA cost + max(bytes / HBM share, padded FLOPs / SM tensor rate)",
    .params = roofline_params,
    .create = roofline_create,
    .destroy = av__cost_free_state,
    .estimate = roofline_estimate,
};
