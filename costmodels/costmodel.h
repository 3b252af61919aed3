/* Cost models estimate one work item's time on a GPU (and expose its bytes and FLOPs). Each
 * is a static const av_costmodel_ops_t registered by name (costmodels/registry.c);
 * schedulers take one as a parameter, so "PAT packing with a compute cost model" is a
 * configuration. */
#ifndef AV_COSTMODEL_H
#define AV_COSTMODEL_H

#include "core/error.h"
#include "core/gpu.h"
#include "core/params.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"

/* An abstract work item: schedulers ask about items before building them. */
typedef struct av_cost_query {
  int32_t n_q;            /* queries (requests) in the CTA */
  int32_t rows;           /* n_q x GQA group (query rows) */
  int64_t kv_tokens;      /* KV tokens the CTA reads (one KV head) */
  av_tile_t tile;
  av_output_t output;     /* PARTIAL adds the partial-state write (and its later merge read) */
  int32_t coresident;     /* memory-active CTAs on the item's SM, itself included, for the
                             slowdown below (0 = not asked) */
  double cold_frac;       /* merge queries: the fraction of the partial states that has left
                             L2 before the merge reads them (0 = all still in L2) */
  int32_t starting;       /* CTAs starting together with the item's CTA (a launch's first
                             wave), itself included, for start_us below (0 = not asked) */
} av_cost_query_t;

typedef struct av_item_cost {
  double time_us;         /* the item alone on one SM with its fair bandwidth share */
  double hbm_bytes;       /* bytes the item moves (KV, Q, outputs/partials) for one KV head */
  double flops;           /* FLOPs the item executes (padded to its tile where it applies) */
  double slowdown;        /* factor on the item's streaming time when q.coresident CTAs share
                             its SM (a measured co-residency curve, docs/simulator.md#co-residency);
                             0 = the model has no such figure (the engine then uses 1) */
  double start_us;        /* extra time of a CTA that starts together with q.starting CTAs
                             (their prologues queue in the memory system; a measured first-
                             wave cost, docs/simulator.md#a-launchs-first-wave); 0 = none */
} av_item_cost_t;

/* Everything a cost model may look at besides the query. */
typedef struct av_cost_env {
  const av_gpu_t *gpu;
  const av_heads_t *heads;
  const av_variants_t *variants;  /* may be NULL */
  int concurrent_ctas;            /* CTAs expected to share HBM (0 = sm_count) */
} av_cost_env_t;

typedef struct av_costmodel av_costmodel_t;

/* What a cost model provides beyond time, bytes and FLOPs (av_costmodel_ops_t.flags); the
 * simulator asks only for what the model declares. */
enum {
  /* time_us is a measured lone CTA's time (FlashForge §5.2's C(n_q, n)): the engine derives
   * each CTA's own fixed cost and rate bound from it and streams whole KV boxes */
  AV_COST_MEASURED_CTAS = 1u << 0,
  AV_COST_CORESIDENCY = 1u << 1,  /* answers q.coresident with a slowdown */
  AV_COST_START = 1u << 2,        /* answers q.starting with start_us */
  /* answers merge CTA queries (tile kind merge, n_q = states per row) and empty persistent
   * CTA queries (n_q = 0, kv_tokens = 0) with measured times */
  AV_COST_MERGE = 1u << 3,
};

typedef struct av_costmodel_ops {
  const char *name;
  const char *description;        /* one line for `anvil list` */
  const av_param_def_t *params;   /* NULL-name terminated; may be NULL */
  /* Builds the model's state from params (e.g. loads a profile). *state is owned by the
   * model and released by destroy. */
  int (*create)(const av_params_t *params, const av_cost_env_t *env, void **state,
                av_error_t *err);
  void (*destroy)(void *state);
  /* Fills *out for q. Must be pure (same inputs, same output) and allocation-free. */
  void (*estimate)(const void *state, const av_cost_env_t *env, const av_cost_query_t *q,
                   av_item_cost_t *out);
  unsigned flags;                 /* AV_COST_* above */
  /* The file the model reads its figures from for gpu under params (provenance records it by
   * path and hash), written to path[0..n); NULL for models that read no file. */
  void (*data_file)(const av_params_t *params, const av_gpu_t *gpu, char *path, size_t n);
} av_costmodel_ops_t;

/* Registry. */
const av_costmodel_ops_t *av_costmodel_find(const char *name);
/* All registered models, in registration order; *n receives the count. */
const av_costmodel_ops_t *const *av_costmodel_all(int *n);
/* AV_ERR_NAME with the list of valid names when unknown. */
int av_costmodel_lookup(const char *name, const char *source, const char *path,
                        const av_costmodel_ops_t **out, av_error_t *err);

/* An instance: ops + params + env + state. Caller owns; av_costmodel_destroy. */
av_costmodel_t *av_costmodel_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                                    const av_cost_env_t *env, av_error_t *err);
void av_costmodel_destroy(av_costmodel_t *m);
void av_costmodel_estimate(const av_costmodel_t *m, const av_cost_query_t *q,
                           av_item_cost_t *out);
const av_costmodel_ops_t *av_costmodel_ops(const av_costmodel_t *m);
const av_cost_env_t *av_costmodel_env(const av_costmodel_t *m);

/* Bytes an item of `rows` queries over kv_tokens moves for one KV head: K and V tiles, the
 * query rows, and its output (final: O in dtype; partial: O + lse in fp32). Shared by the
 * models so they agree on what a byte is. */
double av_cost_item_bytes(const av_heads_t *h, int32_t rows, int64_t kv_tokens,
                          av_output_t output);
/* FLOPs of QK^T and PV for `rows` x kv_tokens (unpadded). */
double av_cost_item_flops(const av_heads_t *h, int32_t rows, int64_t kv_tokens);

#endif
