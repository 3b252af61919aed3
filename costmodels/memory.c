/* memory: PAT-style cost (PAT §5.1 profit model) — the bytes an item makes HBM move: its KV
 * loads, its query rows, its output, and for a partial output both the state write and the
 * merge kernel's later read of it (PAT counts both as packing overhead), over one CTA's share
 * of HBM bandwidth, plus a fixed per-CTA cost. */
#include "costmodels/costmodel.h"
#include "costmodels/costmodel_internal.h"

static const av_param_def_t memory_params[] = {
    {.name = "bw_scale", .type = AV_PARAM_DOUBLE, .def = "1.0", .min = 0.01, .max = 100.0,
     .help = "multiplies the GPU's effective HBM bandwidth"},
    {.name = "merge_read", .type = AV_PARAM_BOOL, .def = "true",
     .help = "charge the merge kernel's read of a partial state to the item that wrote it"},
    {.name = "fixed_us", .type = AV_PARAM_DOUBLE, .def = "-1", .min = -1.0, .max = 1e6,
     .help = "per-CTA fixed cost in us; -1 = the GPU spec's cta_fixed_us"},
    {.name = NULL},
};

typedef struct {
  double bw_scale, fixed_us;
  int merge_read;
} memory_state_t;

static int memory_create(const av_params_t *p, const av_cost_env_t *env, void **state,
                         av_error_t *err) {
  memory_state_t *s = av__cost_alloc_state(sizeof *s, "memory", err);
  if (!s) return AV_ERR_NOMEM;
  s->bw_scale = av_params_double(p, "bw_scale");
  s->merge_read = av_params_bool(p, "merge_read");
  s->fixed_us = av__cost_fixed_us(p, env);
  *state = s;
  return AV_OK;
}

static void memory_estimate(const void *state, const av_cost_env_t *env,
                            const av_cost_query_t *q, av_item_cost_t *out) {
  const memory_state_t *s = state;
  av__cost_item_traffic(env->heads, q, out);
  /* hbm_bytes stays what the item itself moves (all models agree); the time also charges
   * the merge's read of the item's partial state. */
  double bytes = out->hbm_bytes;
  if (q->output == AV_OUT_PARTIAL && s->merge_read)
    bytes += (double)q->rows * (env->heads->head_dim + 1.0) * 4.0;  /* O + lse, fp32 */
  out->time_us = s->fixed_us + bytes / av__cost_bw_share_Bpus(env, s->bw_scale);
}

const av_costmodel_ops_t av_cost_memory = {
    .name = "memory",
    .description = "PAT-style: KV + Q + output + partial write/merge-read bytes over HBM share",
    .params = memory_params,
    .create = memory_create,
    .destroy = av__cost_free_state,
    .estimate = memory_estimate,
};
