/* The cost-model instance (ops + params + env + state) and the byte/FLOP accounting every
 * model shares, so that "a byte" and "a FLOP" mean the same thing in all of them. */
#include "costmodels/costmodel.h"
#include "costmodels/costmodel_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct av_costmodel {
  const av_costmodel_ops_t *ops;
  av_params_t params;
  av_cost_env_t env;   /* borrowed pointers: gpu, heads and variants outlive the model */
  av_heads_t heads;    /* copied so env.heads stays valid even if the caller's goes away */
  av_gpu_t gpu;        /* likewise */
  void *state;
};

/* Caller owns the result (av_costmodel_destroy). env->gpu and env->heads are copied;
 * env->variants is borrowed and must outlive the model. */
av_costmodel_t *av_costmodel_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                                    const av_cost_env_t *env, av_error_t *err) {
  if (!ops || !env || !env->gpu || !env->heads) {
    av_error_set(err, AV_ERR_INTERNAL, NULL, NULL,
                 "cost model needs ops, a GPU spec and the batch's heads");
    return NULL;
  }
  av_costmodel_t *m = calloc(1, sizeof *m);
  if (!m) {
    av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory creating cost model '%s'",
                 ops->name);
    return NULL;
  }
  m->ops = ops;
  if (params) {
    m->params = *params;
  } else if (av_params_init(&m->params, ops->params, err)) {
    free(m);
    return NULL;
  }
  m->gpu = *env->gpu;
  m->heads = *env->heads;
  m->env = *env;
  m->env.gpu = &m->gpu;
  m->env.heads = &m->heads;
  if (m->env.concurrent_ctas <= 0) m->env.concurrent_ctas = m->gpu.sm_count;
  if (ops->create && ops->create(&m->params, &m->env, &m->state, err)) {
    free(m);
    return NULL;
  }
  return m;
}

void av_costmodel_destroy(av_costmodel_t *m) {
  if (!m) return;
  if (m->ops->destroy) m->ops->destroy(m->state);
  free(m);
}

void av_costmodel_estimate(const av_costmodel_t *m, const av_cost_query_t *q,
                           av_item_cost_t *out) {
  memset(out, 0, sizeof *out);
  m->ops->estimate(m->state, &m->env, q, out);
}

const av_costmodel_ops_t *av_costmodel_ops(const av_costmodel_t *m) { return m->ops; }
const av_cost_env_t *av_costmodel_env(const av_costmodel_t *m) { return &m->env; }

/* One KV head: K and V rows of the segment (dtype), the item's query rows (dtype), and its
 * output: the final O in dtype, or a partial state O (fp32) + lse (fp32) per row. */
double av_cost_item_bytes(const av_heads_t *h, int32_t rows, int64_t kv_tokens,
                          av_output_t output) {
  double el = av_dtype_bytes(h->dtype), d = h->head_dim;
  double kv = 2.0 * (double)kv_tokens * d * el;
  double q = (double)rows * d * el;
  double o = output == AV_OUT_PARTIAL ? (double)rows * (d + 1.0) * 4.0 : (double)rows * d * el;
  return kv + q + o;
}

/* QK^T (2·rows·kv·d) plus PV (2·rows·kv·d). */
double av_cost_item_flops(const av_heads_t *h, int32_t rows, int64_t kv_tokens) {
  return 4.0 * (double)rows * (double)kv_tokens * (double)h->head_dim;
}

void *av__cost_alloc_state(size_t size, const char *model, av_error_t *err) {
  void *s = calloc(1, size);
  if (!s) av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory creating cost model '%s'",
                       model);
  return s;
}

void av__cost_free_state(void *state) { free(state); }

double av__cost_bw_share_Bpus(const av_cost_env_t *env, double scale) {
  int conc = env->concurrent_ctas > 0 ? env->concurrent_ctas : env->gpu->sm_count;
  if (conc < 1) conc = 1;
  /* GB/s = 1e9 B/s = 1e3 B/us */
  return av_gpu_hbm_bw_GBps(env->gpu) * 1e3 * scale / conc;
}

double av__cost_sm_tensor_flops_per_us(const av_cost_env_t *env, double scale) {
  int sms = env->gpu->sm_count > 0 ? env->gpu->sm_count : 1;
  /* TFLOP/s = 1e12 FLOP/s = 1e6 FLOP/us */
  return env->gpu->fp16_tensor_tflops * 1e6 * scale / sms;
}

static double round_up(double x, int unit) { return unit > 0 ? ceil(x / unit) * unit : x; }

double av__cost_padded_flops(const av_heads_t *h, const av_cost_query_t *q) {
  double rows = round_up((double)q->rows, q->tile.m_rows);
  double kv = round_up((double)q->kv_tokens, q->tile.n_tokens);
  return 4.0 * rows * kv * (double)h->head_dim;
}

void av__cost_item_traffic(const av_heads_t *h, const av_cost_query_t *q, av_item_cost_t *out) {
  out->hbm_bytes = av_cost_item_bytes(h, q->rows, q->kv_tokens, q->output);
  out->flops = av__cost_padded_flops(h, q);
}

double av__cost_fixed_us(const av_params_t *p, const av_cost_env_t *env) {
  double fixed = av_params_double(p, "fixed_us");
  return fixed < 0 ? env->gpu->cta_fixed_us : fixed;
}
