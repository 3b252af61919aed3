/* Loading what a planning command names: GPU spec, kernel variants, scheduler and cost model
 * with their parameters (pipeline/models.h). */
#include "pipeline/models.h"

#include <stdio.h>

int av_models_load_gpu(const char *cmd, const char *name, av_gpu_t *out, av_error_t *err) {
  int rc = av_gpu_load(name, NULL, out, err);
  if (rc && err && !err->source[0]) {
    snprintf(err->source, sizeof err->source, "%s", cmd);
    if (!err->path[0]) snprintf(err->path, sizeof err->path, "--gpu");
  }
  return rc;
}

static int apply_params(av_params_t *p, const av_param_def_t *defs, const char *const *as,
                        int n, const char *source, av_error_t *err) {
  int rc = av_params_init(p, defs, err);
  for (int i = 0; !rc && i < n; i++) rc = av_params_set_text(p, as[i], source, err);
  return rc;
}

int av_models_load(const char *cmd, const av_model_names_t *a, av_models_t *out,
                   av_error_t *err) {
  int rc = av_scheduler_lookup(a->sched, cmd, "--scheduler", &out->sops, err);
  if (!rc) rc = apply_params(&out->sp, out->sops->params, a->sp, a->n_sp, "-p", err);
  if (!rc) rc = av_costmodel_lookup(a->cost, cmd, "--cost-model", &out->cops, err);
  if (!rc) rc = apply_params(&out->cp, out->cops->params, a->cp, a->n_cp, "-c", err);
  return rc;
}

int av_models_load_variants(int optional, av_variants_t **out, av_error_t *err) {
  if (!optional) {
    *out = av_variants_load(NULL, err);
    return *out ? AV_OK : err->code ? err->code : AV_ERR_INTERNAL;
  }
  av_error_t verr;
  av_error_clear(&verr);
  *out = av_variants_load(NULL, &verr);
  if (*out || verr.code == AV_ERR_IO) return AV_OK;
  return av_error_set(err, verr.code, verr.source, verr.path, "%s", verr.message);
}

int av_models_cost_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                          const av_gpu_t *gpu, const av_heads_t *h, const av_variants_t *vs,
                          av_costmodel_t **out, av_error_t *err) {
  av_cost_env_t env = {.gpu = gpu, .heads = h, .variants = vs};
  *out = av_costmodel_create(ops, params, &env, err);
  return *out ? AV_OK : err->code ? err->code : AV_ERR_INTERNAL;
}
