/* Targets: a GPU spec, the kernel variant table and a cost model with its parameters, loaded
 * once and planned against many times. The cost model instance depends on the batch's heads,
 * so it is made for the first batch and remade only when the heads change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"

/* A name such as "H200-SXM", or a path to a spec file (av_gpu_load tells them apart). */
static int load_gpu(const char *gpu, av_gpu_t *out, av_error_t *e) {
  int rc = av_gpu_load(gpu, NULL, out, e);
  if (rc && !e->source[0]) snprintf(e->source, sizeof e->source, "gpu");
  return rc;
}

int av__api_load_variants(av_variants_t **out, av_error_t *e) {
  av_error_t verr;
  av_error_clear(&verr);
  *out = av_variants_load(NULL, &verr);
  if (*out || verr.code == AV_ERR_IO) return AV_OK;
  return av_error_set(e, verr.code, verr.source, verr.path, "%s", verr.message);
}

int anvil_target_create(const char *gpu, const char *cost_model, const char *const *cost_params,
                        int n_cost_params, anvil_target_t **out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  anvil_target_t *t = calloc(1, sizeof *t);
  if (!t) {
    av_error_set(&e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
    return av__api_error(err, &e, 1);
  }
  int rc = load_gpu(gpu ? gpu : "H200-SXM", &t->gpu, &e);
  if (!rc) rc = av__api_load_variants(&t->vs, &e);
  if (!rc)
    rc = av_costmodel_lookup(cost_model ? cost_model : "roofline", "target", "cost_model",
                             &t->cops, &e);
  if (!rc)
    rc = av__api_params(&t->cp, t->cops->params, cost_params, n_cost_params, "cost_params",
                        &e);
  if (rc) {
    anvil_target_destroy(t);
    return av__api_error(err, &e, rc);
  }
  *out = t;
  return AV_OK;
}

void anvil_target_destroy(anvil_target_t *t) {
  if (!t) return;
  av_costmodel_destroy(t->cost);
  av_variants_destroy(t->vs);
  free(t);
}

int anvil_target_set_launch(anvil_target_t *t, const char *model, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  if (av_launch_model_from_name(model, &t->launch) == 0) return AV_OK;
  av_error_set(&e, AV_ERR_NAME, "target", "launch", "unknown launch model '%s'; expected "
               "\"streams\", \"graph\" or \"pdl\"", model ? model : "(null)");
  return av__api_error(err, &e, AV_ERR_NAME);
}

const char *anvil_target_gpu(const anvil_target_t *t) { return t->gpu.name; }

double anvil_target_hbm_GBps(const anvil_target_t *t) { return av_gpu_hbm_bw_GBps(&t->gpu); }

int av__api_target_cost(anvil_target_t *t, const av_heads_t *h, av_costmodel_t **cost,
                        av_error_t *err) {
  if (!t->cost || memcmp(&t->cost_heads, h, sizeof *h) != 0) {
    av_costmodel_destroy(t->cost);
    t->cost_heads = *h;  /* the model keeps a pointer to its heads: the target's copy */
    av_cost_env_t env = {.gpu = &t->gpu, .heads = &t->cost_heads, .variants = t->vs};
    t->cost = av_costmodel_create(t->cops, &t->cp, &env, err);
    if (!t->cost) return err->code ? err->code : AV_ERR_INTERNAL;
  }
  *cost = t->cost;
  return AV_OK;
}
