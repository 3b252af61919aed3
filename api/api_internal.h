/* What the public handles of include/anvil/ hold, and the helpers the api/ files share. */
#ifndef AV_API_INTERNAL_H
#define AV_API_INTERNAL_H

#include "anvil/anvil.h"
#include "costmodels/costmodel.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/params.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"

/* A batch; plans hold a reference, so a workload lives as long as its last plan. */
struct anvil_workload {
  int refs;
  av_workload_t *w;
};

struct anvil_plan {
  anvil_workload_t *w;   /* a reference */
  av_plan_t *p;
  char source[256];      /* the file or text it was loaded from ("" when planned): the checker's
                            messages name it, as `anvil check PLAN.json` does */
  int hash_stale;        /* a planner grew the plan; p->workload_hash is set when next read */
};

/* The plan with its workload hash brought up to date (after a planner's reuse). */
const av_plan_t *av__api_plan_settled(const anvil_plan_t *p);

struct anvil_target {
  av_gpu_t gpu;
  av_variants_t *vs;                /* NULL when no table is installed */
  const av_costmodel_ops_t *cops;
  av_params_t cp;
  av_costmodel_t *cost;             /* for cost_heads; remade when a batch's heads differ */
  av_heads_t cost_heads;
  av_launch_model_t launch;         /* how plans made against it are issued */
};

/* Copies err into out (when given) as code + one line; returns the code (AV_ERR_INTERNAL
 * when rc failed without a recorded error). */
int av__api_error(anvil_error_t *out, const av_error_t *err, int rc);
/* The variant table when there is one (*out NULL otherwise): a build without CUDA and no
 * table installed plans with the schedulers' defaults, as `anvil plan` does. */
int av__api_load_variants(av_variants_t **out, av_error_t *e);
/* Takes ownership of w; NULL (and w destroyed) when out of memory. */
anvil_workload_t *av__api_workload_wrap(av_workload_t *w);
anvil_workload_t *av__api_workload_ref(const anvil_workload_t *w);
/* A plan handle owning p and a reference to w. */
anvil_plan_t *av__api_plan_wrap(av_plan_t *p, const anvil_workload_t *w);
/* The public heads (NULL = defaults) as the library's. */
av_heads_t av__api_heads(const anvil_heads_t *h);
/* Defaults, then each "key=value" of kv (messages name `source`). */
int av__api_params(av_params_t *p, const av_param_def_t *defs, const char *const *kv, int n,
                   const char *source, av_error_t *err);
/* t's cost model for batches with heads h (borrowed from t). */
int av__api_target_cost(anvil_target_t *t, const av_heads_t *h, av_costmodel_t **cost,
                        av_error_t *err);

/* Scratch of the block-table conversion, grown as needed and kept by its owner. */
typedef struct av__api_bt_buf {
  int32_t *counts, *last;
  int32_t *shared;       /* with want_shared: blocks each request shares with the previous */
  size_t cap_counts, cap_last, cap_shared;
  int want_shared;
} av__api_bt_buf_t;
/* The checks of the public block table's sizes (the messages of
 * anvil_workload_from_block_table). */
int av__api_bt_check(int64_t row_stride, const int32_t *kv_tokens, int32_t n_requests,
                     int block_size, av_error_t *e);
/* The public block table (anvil_workload_from_block_table): row r (row_stride entries apart)
 * holds request r's block ids, kv_tokens[r] its KV length. */
typedef struct {
  const int32_t *table;
  int64_t row_stride;
  const int32_t *kv_tokens;
  int32_t n_requests;
} av__api_bt_t;
/* The public block table as a workload. */
int av__api_block_table(const av__api_bt_t *bt, int block_size, const av_heads_t *heads,
                        av__api_bt_buf_t *buf, av_workload_t **out, av_error_t *e);
void av__api_bt_buf_free(av__api_bt_buf_t *buf);

#endif
