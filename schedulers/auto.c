/* auto: plans the batch with every other registered scheduler (its default parameters, then
 * each policy alternative it declares in av_scheduler_ops_t.alternatives), predicts each
 * plan's time with the simulator, and keeps the predicted fastest — the reason anvil has a
 * simulator. The plan records which candidate won ("chose=profit_pack[cost=compute]") and
 * by how much. */
#include <stdio.h>
#include <string.h>

#include "proofs/proofs.h"
#include "schedulers/sched_util.h"
#include "sim/sim.h"

static const char *const model_choices[] = {"engine", "waves", NULL};

static const av_param_def_t auto_params[] = {
    {.name = "model", .type = AV_PARAM_ENUM, .def = "engine", .choices = model_choices,
     .help = "simulator model that ranks the candidates (engine falls back to waves when "
             "it cannot simulate a plan)"},
    {.name = NULL},
};

extern const av_scheduler_ops_t av_sched_auto;

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

/* One candidate: plan with the defaults (alt NULL) or the defaults with one policy
 * alternative of the scheduler ("cost=compute"), prove it exact, predict. A candidate that
 * does not support this batch or GPU (AV_ERR_UNSUPPORTED) is skipped: *plan stays NULL. */
static int auto_candidate(const av_sched_ctx_t *ctx, const av_costmodel_t *cost,
                          av_sim_model_t model, const av_scheduler_ops_t *ops, const char *alt,
                          av_plan_t **plan, double *time_us, av_error_t *err) {
  *plan = NULL;
  av_error_t e;
  av_error_clear(&e);
  av_params_t params;
  int rc = av_params_init(&params, ops->params, &e);
  if (rc == AV_OK && alt) rc = av_params_set_text(&params, alt, ops->name, &e);
  if (rc == AV_OK) rc = av_scheduler_plan(ops, &params, ctx, plan, &e);
  if (rc == AV_ERR_UNSUPPORTED) return AV_OK;
  if (rc == AV_OK) rc = av_plan_check(*plan, ctx->workload, &e);
  if (rc == AV_OK) rc = auto_predict(ctx, cost, model, *plan, time_us, &e);
  if (rc) {
    av_plan_destroy(*plan);
    *plan = NULL;
    return av_error_set(err, rc, e.source, e.path, "auto: candidate '%s%s%s%s': %s", ops->name,
                        alt ? "[" : "", alt ? alt : "", alt ? "]" : "", e.message);
  }
  return AV_OK;
}

static int auto_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                     av_error_t *err) {
  *out = NULL;
  av_sim_model_t model = AV_SIM_ENGINE;
  int rc = av_sim_model_lookup(av_params_enum(params, "model"), NULL, "model", &model, err);
  if (rc) return rc;
  /* The simulator needs a cost model for per-item fixed costs; without one from the
   * experiment, the roofline model stands in. */
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
  int n_ops = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  av_plan_t *best = NULL;
  double best_us = 0.0, second_us = 0.0;
  int have_second = 0;
  char best_name[96] = "", second_name[96] = "";
  for (int i = 0; i < n_ops && rc == AV_OK; i++) {
    if (all[i]->flags & AV_SCHED_SIMULATES_OTHERS) continue;
    /* the defaults, then each policy alternative the scheduler declares (PAT's compute cost
     * model, serial streams, ...: measured best on some batches, docs/validation.md) */
    const char *const *alts = all[i]->alternatives;
    for (int a = -1; rc == AV_OK && (a < 0 || (alts && alts[a])); a++) {
      const char *alt = a < 0 ? NULL : alts[a];
      av_plan_t *cand = NULL;
      double t = 0.0;
      rc = auto_candidate(ctx, cost, model, all[i], alt, &cand, &t, err);
      if (rc || !cand) continue;
      char name[96];
      snprintf(name, sizeof name, "%.40s%s%.40s%s", all[i]->name, alt ? "[" : "", alt ? alt : "",
               alt ? "]" : "");
      /* strictly faster replaces: ties keep the earlier candidate (registry order, defaults
       * before alternatives) */
      if (!best || t < best_us) {
        if (best) {
          second_us = best_us, have_second = 1;
          memcpy(second_name, best_name, sizeof second_name);
          av_plan_destroy(best);
        }
        best = cand, best_us = t;
        memcpy(best_name, name, sizeof best_name);
      } else {
        if (!have_second || t < second_us) {
          second_us = t;
          memcpy(second_name, name, sizeof second_name);
        }
        have_second = 1;
        av_plan_destroy(cand);
      }
    }
  }
  av_costmodel_destroy(own);
  if (rc == AV_OK && !best)
    rc = av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                      "auto: no candidate scheduler can plan this batch on %s",
                      ctx->gpu->name);
  if (rc) {
    av_plan_destroy(best);
    return rc;
  }
  /* margin: how much slower the runner-up is predicted to be, relative to the winner */
  double margin = have_second && best_us > 0.0 ? (second_us - best_us) / best_us : 0.0;
  /* The parameters (model=...) are recorded by av_scheduler_plan; this is the verdict. */
  snprintf(best->params, sizeof best->params, "chose=%s,margin=%.4f,runner_up=%s", best_name,
           margin, have_second ? second_name : "none");
  snprintf(best->scheduler, sizeof best->scheduler, "auto");
  *out = best;
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
