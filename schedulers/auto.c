/* auto: plans the batch with every other registered scheduler (its default parameters, then
 * each policy alternative it declares in av_scheduler_ops_t.alternatives), predicts each
 * plan's time with the simulator, and keeps the predicted fastest — the reason anvil has a
 * simulator. The plan records which candidate won ("chose=profit_pack[cost=compute]") and
 * by how much. A candidate whose prediction the caller already holds (ctx->memo: another row
 * of the same batch with the same scheduler and parameters) is not planned or simulated
 * again; only the winner's plan is made, once. A candidate that cannot run on this GPU is
 * skipped, and the verdict lists it with the reason ("skipped=node_naive: ..."). */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "proofs/proofs.h"
#include "schedulers/auto.h"
#include "schedulers/sched_util.h"
#include "sim/sim.h"

static const char *const model_choices[] = {"engine", "waves", NULL};
static const char *const wide_choices[] = {"off", "on", NULL};

static const av_param_def_t auto_params[] = {
    {.name = "model", .type = AV_PARAM_ENUM, .def = "engine", .choices = model_choices,
     .help = "simulator model that ranks the candidates (engine falls back to waves when "
             "it cannot simulate a plan)"},
    {.name = "wide", .type = AV_PARAM_ENUM, .def = "off", .choices = wide_choices,
     .help = "on: also race the plans that put pieces of more than 64 rows on the "
             "warp-specialised m128 tile (fixed_division, node_naive and greedy_division with "
             "wide=on; sm_90a)"},
    {.name = NULL},
};

extern const av_scheduler_ops_t av_sched_auto;

/* Applies an alternative to a scheduler's defaults: one assignment ("cost=compute") or
 * several separated by ';' ("tiles=per_shape;wide=on"). */
static int set_alternative(av_params_t *params, const char *alt, const char *name,
                           av_error_t *err) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", alt);
  int rc = AV_OK;
  for (char *save = NULL, *a = strtok_r(buf, ";", &save); a && rc == AV_OK;
       a = strtok_r(NULL, ";", &save))
    rc = av_params_set_text(params, a, name, err);
  return rc;
}

/* Predicted makespan of a checked plan. The engine may decline a plan (AV_ERR_UNSUPPORTED);
 * then the closed-form wave model ranks it, so every candidate gets a number. */
static int auto_predict(const av_sched_ctx_t *ctx, const av_costmodel_t *cost,
                        av_sim_model_t model, const av_plan_t *p, double *time_us,
                        av_error_t *err) {
  av_sim_config_t cfg = {.model = model, .record_timeline = 0};
  av_sim_result_t res;
  memset(&res, 0, sizeof res);
  av_error_t e;
  av_error_clear(&e);
  int rc = av_sim_run(&cfg, p, ctx->workload, ctx->gpu, ctx->variants, cost, &res, NULL, &e);
  if (rc == AV_ERR_UNSUPPORTED && model == AV_SIM_ENGINE) {
    av_sim_result_free(&res);
    memset(&res, 0, sizeof res);
    av_error_clear(&e);
    cfg.model = AV_SIM_WAVES;
    rc = av_sim_run(&cfg, p, ctx->workload, ctx->gpu, ctx->variants, cost, &res, NULL, &e);
  }
  *time_us = res.makespan_us;
  av_sim_result_free(&res);
  if (rc) av_error_set(err, e.code, e.source, e.path, "%s", e.message);
  return rc;
}

/* The memo entry of (ops, params) under model (its time in *time_us), or -1. */
static int memo_find(const av_sched_ctx_t *ctx, const av_scheduler_ops_t *ops,
                     const av_params_t *params, av_sim_model_t model, double *time_us) {
  if (!ctx->memo || !ctx->memo->n) return -1;
  char text[256];
  av_params_format(params, text, sizeof text);
  for (int i = 0; i < ctx->memo->n; i++) {
    const av_sched_memo_entry_t *m = &ctx->memo->entries[i];
    if (m->ops == ops && m->sim_model == (int)model && strcmp(m->params, text) == 0) {
      *time_us = m->time_us;
      return i;
    }
  }
  return -1;
}

/* One candidate: plan with the defaults (alt NULL) or the defaults with one policy
 * alternative of the scheduler ("cost=compute"), prove it exact, predict. A candidate that
 * does not support this batch or GPU (AV_ERR_UNSUPPORTED) is skipped: *ok stays 0 and
 * `why` says why. A candidate found in the memo gets its time without a plan (*plan NULL,
 * *ok 1). */
static int auto_candidate(const av_sched_ctx_t *ctx, const av_costmodel_t *cost,
                          av_sim_model_t model, const av_scheduler_ops_t *ops, const char *alt,
                          av_plan_t **plan, int *ok, int *memo, double *time_us, char *why,
                          size_t why_n, av_error_t *err) {
  *plan = NULL;
  *ok = 0;
  *memo = -1;
  av_error_t e;
  av_error_clear(&e);
  av_params_t params;
  int rc = av_params_init(&params, ops->params, &e);
  if (rc == AV_OK && alt) rc = set_alternative(&params, alt, ops->name, &e);
  if (rc == AV_OK && (*memo = memo_find(ctx, ops, &params, model, time_us)) >= 0) {
    *ok = 1;
    return AV_OK;
  }
  if (rc == AV_OK) rc = av_scheduler_plan(ops, &params, ctx, plan, &e);
  if (rc == AV_OK) rc = av_plan_check(*plan, ctx->workload, &e);
  if (rc == AV_OK) rc = auto_predict(ctx, cost, model, *plan, time_us, &e);
  if (rc == AV_ERR_UNSUPPORTED) {
    /* cannot plan this batch, or its plan cannot run on this GPU: skipped, reason kept */
    snprintf(why, why_n, "%.159s", e.message);
    av_plan_destroy(*plan);
    *plan = NULL;
    return AV_OK;
  }
  if (rc) {
    av_plan_destroy(*plan);
    *plan = NULL;
    return av_error_set(err, rc, e.source, e.path, "auto: candidate '%s%s%s%s': %s", ops->name,
                        alt ? "[" : "", alt ? alt : "", alt ? "]" : "", e.message);
  }
  *ok = 1;
  return AV_OK;
}

/* The winner's plan when its time came from the memo: planned once more (deterministic). */
static int auto_replan(const av_sched_ctx_t *ctx, const av_scheduler_ops_t *ops,
                       const char *alt, av_plan_t **out, av_error_t *err) {
  av_params_t params;
  int rc = av_params_init(&params, ops->params, err);
  if (rc == AV_OK && alt) rc = set_alternative(&params, alt, ops->name, err);
  if (rc == AV_OK) rc = av_scheduler_plan(ops, &params, ctx, out, err);
  return rc;
}

/* The race: the fastest candidate so far and the runner-up. */
typedef struct race {
  av_plan_t *best;                 /* NULL when the best came from the memo */
  const av_scheduler_ops_t *best_ops;
  const char *best_alt;
  int best_memo;                   /* the memo entry of the best, or -1 */
  double best_us, second_us;
  int have_best, have_second;
  char best_name[96], second_name[96];
  char skipped[200];               /* candidates that cannot plan or run here, and why */
  av_auto_candidate_t *list;       /* av_auto_rank: every candidate that ran, or NULL */
  int n_list, cap_list;
} race_t;

static void candidate_name(char *name, size_t n, const av_scheduler_ops_t *ops,
                           const char *alt) {
  snprintf(name, n, "%.40s%s%.40s%s", ops->name, alt ? "[" : "", alt ? alt : "",
           alt ? "]" : "");
}

static void race_list(race_t *r, const av_scheduler_ops_t *ops, const char *alt, double t) {
  if (!r->list || r->n_list == r->cap_list) return;
  av_auto_candidate_t *c = &r->list[r->n_list++];
  c->ops = ops;
  c->alt = alt;
  c->predicted_us = t;
  candidate_name(c->name, sizeof c->name, ops, alt);
}

static void race_enter(race_t *r, const av_scheduler_ops_t *ops, const char *alt,
                       av_plan_t *cand, int memo, double t) {
  char name[96];
  candidate_name(name, sizeof name, ops, alt);
  race_list(r, ops, alt, t);
  /* strictly faster replaces: ties keep the earlier candidate (registry order, defaults
   * before alternatives) */
  if (!r->have_best || t < r->best_us) {
    if (r->have_best) {
      r->second_us = r->best_us, r->have_second = 1;
      memcpy(r->second_name, r->best_name, sizeof r->second_name);
      av_plan_destroy(r->best);
    }
    r->best = cand, r->best_us = t, r->best_ops = ops, r->best_alt = alt, r->have_best = 1;
    r->best_memo = memo;
    memcpy(r->best_name, name, sizeof r->best_name);
    return;
  }
  if (!r->have_second || t < r->second_us) {
    r->second_us = t;
    memcpy(r->second_name, name, sizeof r->second_name);
  }
  r->have_second = 1;
  av_plan_destroy(cand);
}

static void race_skip(race_t *r, const av_scheduler_ops_t *ops, const char *alt,
                      const char *why) {
  size_t used = strlen(r->skipped);
  snprintf(r->skipped + used, sizeof r->skipped - used, "%s%s%s%s%s (%.60s)", used ? "; " : "",
           ops->name, alt ? "[" : "", alt ? alt : "", alt ? "]" : "", why);
}

/* One candidate into the race: entered with its prediction, or skipped with the reason. */
static int race_one(const av_sched_ctx_t *ctx, const av_costmodel_t *cost, av_sim_model_t model,
                    const av_scheduler_ops_t *ops, const char *alt, race_t *r, av_error_t *err) {
  av_plan_t *cand = NULL;
  double t = 0.0;
  int ok = 0, memo = -1;
  char why[160] = "";
  int rc = auto_candidate(ctx, cost, model, ops, alt, &cand, &ok, &memo, &t, why, sizeof why, err);
  if (rc == AV_OK && ok) race_enter(r, ops, alt, cand, memo, t);
  if (rc == AV_OK && !ok) race_skip(r, ops, alt, why);
  return rc;
}

/* Every other scheduler: its defaults, then each policy alternative it declares (PAT's
 * compute cost model, serial streams, ...: measured best on some batches,
 * docs/validation.md#results), then with wide its m128 alternatives. */
static int auto_race(const av_sched_ctx_t *ctx, const av_costmodel_t *cost, av_sim_model_t model,
                     int wide, race_t *r, av_error_t *err) {
  int n_ops = 0, rc = AV_OK;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  for (int i = 0; i < n_ops && rc == AV_OK; i++) {
    if (all[i]->flags & AV_SCHED_SIMULATES_OTHERS) continue;
    rc = race_one(ctx, cost, model, all[i], NULL, r, err);
    const char *const *alts = all[i]->alternatives;
    for (int a = 0; rc == AV_OK && alts && alts[a]; a++)
      rc = race_one(ctx, cost, model, all[i], alts[a], r, err);
    alts = wide ? all[i]->wide_alternatives : NULL;
    for (int a = 0; rc == AV_OK && alts && alts[a]; a++)
      rc = race_one(ctx, cost, model, all[i], alts[a], r, err);
  }
  return rc;
}

/* The race over every candidate, ranked with the experiment's cost model (the roofline
 * model stands in for the per-item fixed costs when there is none). */
static int run_race(const av_sched_ctx_t *ctx, const av_params_t *params, race_t *r,
                    av_error_t *err) {
  av_sim_model_t model = AV_SIM_ENGINE;
  int rc = av_sim_model_lookup(av_params_enum(params, "model"), NULL, "model", &model, err);
  if (rc) return rc;
  av_costmodel_t *own = NULL;
  const av_costmodel_t *cost = ctx->cost;
  if (!cost) {
    const av_costmodel_ops_t *ops = av_costmodel_find("roofline");
    av_cost_env_t env = {.gpu = ctx->gpu, .heads = &ctx->workload->heads,
                         .variants = ctx->variants, .concurrent_ctas = 0};
    if (!ops)
      return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "auto: no 'roofline' cost model");
    if (!(own = av_costmodel_create(ops, NULL, &env, err))) return err ? err->code : 1;
    cost = own;
  }
  if (ctx->memo) ctx->memo->chosen = -1;
  rc = auto_race(ctx, cost, model, av_params_choice(params, "wide") == 1, r, err);
  av_costmodel_destroy(own);
  if (rc == AV_OK && !r->have_best)
    rc = av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                      "auto: no candidate scheduler can plan this batch on %s: %s",
                      ctx->gpu->name, r->skipped);
  return rc;
}

static int auto_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                     av_error_t *err) {
  *out = NULL;
  race_t r;
  memset(&r, 0, sizeof r);
  r.best_memo = -1;
  int rc = run_race(ctx, params, &r, err);
  if (rc == AV_OK && !r.best) rc = auto_replan(ctx, r.best_ops, r.best_alt, &r.best, err);
  if (rc) {
    av_plan_destroy(r.best);
    return rc;
  }
  /* margin: how much slower the runner-up is predicted to be, relative to the winner */
  double margin = r.have_second && r.best_us > 0.0 ? (r.second_us - r.best_us) / r.best_us : 0.0;
  /* The parameters (model=...) are recorded by av_scheduler_plan; this is the verdict. */
  char verdict[512];  /* cut to the plan's params field as written */
  snprintf(verdict, sizeof verdict, "chose=%s,margin=%.4f,runner_up=%s%s%s", r.best_name,
           margin, r.have_second ? r.second_name : "none", r.skipped[0] ? ",skipped=" : "",
           r.skipped);
  snprintf(r.best->params, sizeof r.best->params, "%.255s", verdict);
  snprintf(r.best->scheduler, sizeof r.best->scheduler, "auto");
  if (ctx->memo) ctx->memo->chosen = r.best_memo;
  *out = r.best;
  return AV_OK;
}

int av_auto_rank(const av_sched_ctx_t *ctx, const av_params_t *params, av_auto_candidate_t *out,
                 int cap, int *n, av_error_t *err) {
  *n = 0;
  av_params_t defaults;
  if (!params) {
    int rc = av_params_init(&defaults, auto_params, err);
    if (rc) return rc;
    params = &defaults;
  }
  av_auto_candidate_t all[AV_AUTO_MAX_CANDIDATES];
  race_t r;
  memset(&r, 0, sizeof r);
  r.best_memo = -1;
  r.list = all;
  r.cap_list = AV_AUTO_MAX_CANDIDATES;
  int rc = run_race(ctx, params, &r, err);
  av_plan_destroy(r.best);
  if (rc) return rc;
  /* predicted fastest first; a stable insertion sort keeps ties in registry order, as the
   * race does */
  for (int i = 1; i < r.n_list; i++) {
    av_auto_candidate_t c = all[i];
    int j = i;
    for (; j > 0 && all[j - 1].predicted_us > c.predicted_us; j--) all[j] = all[j - 1];
    all[j] = c;
  }
  *n = r.n_list < cap ? r.n_list : cap;
  memcpy(out, all, (size_t)*n * sizeof *out);
  return AV_OK;
}

int av_auto_plan_candidate(const av_sched_ctx_t *ctx, const av_auto_candidate_t *c,
                           const char *verdict, av_plan_t **out, av_error_t *err) {
  *out = NULL;
  int rc = auto_replan(ctx, c->ops, c->alt, out, err);
  if (rc) return rc;
  snprintf((*out)->params, sizeof (*out)->params, "%s", verdict);
  snprintf((*out)->scheduler, sizeof (*out)->scheduler, "auto");
  return AV_OK;
}

const av_scheduler_ops_t av_sched_auto = {
    .name = "auto",
    .description = "simulates every other scheduler's plan (defaults and declared policy "
                   "alternatives) and keeps the predicted fastest",
    .params = auto_params,
    .plan = auto_plan,
    .flags = AV_SCHED_SIMULATES_OTHERS,
};
