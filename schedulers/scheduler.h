/* Schedulers turn a batch into a plan. Each is a static const av_scheduler_ops_t (name,
 * one-line description, parameter table, plan function) registered by name in
 * schedulers/registry.c; adding one is one C file plus one registry line. A scheduler of a
 * higher layer (`auto`, selectors/) is registered by that layer at start-up. */
#ifndef AV_SCHEDULER_H
#define AV_SCHEDULER_H

#include "costmodels/costmodel.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/params.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"

struct av_scheduler_ops;

/* The figures of one prediction of a plan (av_sim_result_t's, less the per-launch ones). */
typedef struct av_sched_prediction {
  double makespan_us, partial_us, merge_us;
  double hbm_bytes, l2_bytes, achieved_bw_GBps, bubble_frac;
} av_sched_prediction_t;

/* A prediction already made for one scheduler's plan of this very batch, GPU, variants, cost
 * model and launch model: by another row of the same experiment, or by `auto` for one of its
 * candidates. Schedulers are deterministic, so the same scheduler and parameters mean the
 * same plan and the same prediction: `auto` takes a candidate's time from here instead of
 * planning and simulating it again, and `anvil run` a row's prediction. */
typedef struct av_sched_memo_entry {
  const struct av_scheduler_ops *ops;
  char params[256];                /* av_params_format of its parameters */
  int sim_model;                   /* the av_sim_model_t it was predicted with */
  av_sched_prediction_t pred;
} av_sched_memo_entry_t;

/* The predictions made for one batch. `auto` reads them and appends those of the candidates
 * it simulates while there is room (n < cap); the caller owns the entries. */
typedef struct av_sched_memo {
  int n, cap;
  av_sched_memo_entry_t *entries;
  int chosen;                      /* out: the entry whose plan `auto` returned, or -1 */
} av_sched_memo_t;

/* The entry of `ops` with parameters `params` predicted with sim_model, or -1. */
int av_sched_memo_find(const av_sched_memo_t *m, const struct av_scheduler_ops *ops,
                       const av_params_t *params, int sim_model);

/* What a scheduler plans against. */
typedef struct av_sched_ctx {
  const av_workload_t *workload;
  const av_gpu_t *gpu;
  const av_variants_t *variants;   /* compiled tiles and their resources; may be NULL */
  const av_costmodel_t *cost;      /* the experiment's cost model */
  av_sched_memo_t *memo;           /* predictions already made for this batch; may be NULL */
  int64_t max_items;               /* plans larger than this fail (limits.plan_items); 0: none */
  av_launch_model_t launch_model;  /* how the plan's launches will be issued (its plans carry
                                      it, and `auto` predicts its candidates with it) */
  av_kv_copy_t kv_copy;            /* how the kernels copy KV (`auto` predicts with it) */
  int wide_tiles;                  /* 1: tiles that fill an SM by themselves (the m128
                                      warp-specialised tile, sm_90a) are on the menu; a
                                      scheduler's "wide" parameter sets it */
} av_sched_ctx_t;

/* What a scheduler is, besides its plan (av_scheduler_ops_t.flags). */
enum {
  /* plans by simulating the other schedulers' plans and keeping one (`auto`): it is not its
   * own candidate, and reports compare it with the scheduler it chose */
  AV_SCHED_SIMULATES_OTHERS = 1u << 0,
};

typedef struct av_scheduler_ops {
  const char *name;
  const char *description;         /* one line for `anvil list` */
  const av_param_def_t *params;    /* NULL-name terminated; may be NULL */
  /* Plans ctx->workload. On success *out is a finalized plan the caller owns. Must be
   * deterministic: the same inputs give an identical plan. */
  int (*plan)(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
              av_error_t *err);
  /* Policy alternatives `auto` simulates besides the defaults: NULL-terminated parameter
   * assignments ("cost=compute"), each applied alone to the defaults; may be NULL. */
  const char *const *alternatives;
  /* Alternatives that plan the warp-specialised m128 tile ("tiles=per_shape;wide=on": an
   * alternative may set several parameters, separated by ';'): `auto` races them only with
   * its wide=on; may be NULL. */
  const char *const *wide_alternatives;
  unsigned flags;                  /* AV_SCHED_* above */
  /* A lower bound of the plan's work items, known before planning, so an experiment that
   * asks for a plan over limits.plan_items fails at load (core/limits.h); may be NULL. */
  int64_t (*min_items)(const av_workload_t *w, const av_params_t *params);
  /* An estimate of the plan's (request, node, token range) pieces, known before planning
   * (the checker sorts them, the simulator walks them once per KV head: limits.work_units);
   * `auto` counts every candidate's. NULL: one per (request, node) pair, the fewest any exact
   * plan has. */
  int64_t (*pieces)(const av_workload_t *w, const av_params_t *params);
} av_scheduler_ops_t;

/* The registered schedulers: this folder's, then those registered since, in that order. Safe
 * to call while another thread registers (it sees the registry before or after). */
const av_scheduler_ops_t *av_scheduler_find(const char *name);
const av_scheduler_ops_t *const *av_scheduler_all(int *n);
/* Adds ops (static, never freed) after the registered schedulers, for a layer above this one
 * (selectors/selectors.h). A name already registered, or an ops table without a name or a
 * plan function, is AV_ERR_INTERNAL, and nothing is added. */
int av_scheduler_register(const av_scheduler_ops_t *ops, av_error_t *err);
int av_scheduler_lookup(const char *name, const char *source, const char *path,
                        const av_scheduler_ops_t **out, av_error_t *err);

/* The pieces estimate of ops with params (NULL: its defaults) on w: its own, never fewer than
 * the batch's (request, node) pairs; 0 if the defaults cannot be read. */
int64_t av_scheduler_pieces(const av_scheduler_ops_t *ops, const av_params_t *params,
                            const av_workload_t *w);

/* Plans with ops and params, records scheduler name and params in the plan, finalizes it. */
int av_scheduler_plan(const av_scheduler_ops_t *ops, const av_params_t *params,
                      const av_sched_ctx_t *ctx, av_plan_t **out, av_error_t *err);

#endif
