/* What a planning command loads before it plans: the GPU spec, the kernel variant table, the
 * scheduler and cost model it names with their KEY=VALUE parameters, and cost-model
 * instances. The messages name the command and the option a user gave (--gpu, --scheduler,
 * -p, ...), as the `anvil` program prints them. */
#ifndef AV_PIPELINE_MODELS_H
#define AV_PIPELINE_MODELS_H

#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/variants.h"

/* Loads the GPU spec `name` for a command's --gpu option (messages name the option). */
int av_models_load_gpu(const char *cmd, const char *name, av_gpu_t *out, av_error_t *err);

/* The scheduler and cost model by name (messages name --scheduler / --cost-model) and their
 * KEY=VALUE assignments (messages name -p / -c). */
typedef struct av_model_names {
  const char *sched, *cost;
  const char *const *sp, *const *cp;
  int n_sp, n_cp;
} av_model_names_t;

/* The resolved models: ops looked up by name and their parameters with the assignments
 * applied. Nothing to free. */
typedef struct av_models {
  const av_scheduler_ops_t *sops;
  const av_costmodel_ops_t *cops;
  av_params_t sp, cp;
} av_models_t;
int av_models_load(const char *cmd, const av_model_names_t *a, av_models_t *out,
                   av_error_t *err);

/* Loads kernels/variants.json. With `optional`, a missing table (AV_ERR_IO: no CUDA build
 * and none checked in) leaves *out NULL and succeeds; any other error fails. */
int av_models_load_variants(int optional, av_variants_t **out, av_error_t *err);

/* A cost model instance for a batch with heads `h` on `gpu` (params NULL = defaults);
 * *out NULL and err filled when it cannot be made. Caller owns (av_costmodel_destroy). */
int av_models_cost_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                          const av_gpu_t *gpu, const av_heads_t *h, const av_variants_t *vs,
                          av_costmodel_t **out, av_error_t *err);

#endif
