/* auto: plans the batch with every other registered scheduler (its default parameters, then
 * each policy alternative it declares in av_scheduler_ops_t.alternatives), predicts each
 * plan's time with the simulator, and keeps the predicted fastest — the reason anvil has a
 * simulator. The plan records which candidate won ("chose=profit_pack[cost=compute]"), the
 * runner-up and by how much. A candidate whose prediction the caller already holds
 * (ctx->memo: another row of the same batch, or another `auto`) is not planned or simulated
 * again, and the predictions auto makes go into the memo. The engine runs only for
 * candidates whose lower bound (selectors/auto_bound.c) says they may still place first or
 * second, in order of increasing bound, so the verdict is the one a full race gives. A
 * candidate that cannot run on this GPU is skipped, and the verdict lists it with the reason
 * ("skipped=node_naive: ..."). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "proofs/proofs.h"
#include "selectors/auto.h"
#include "selectors/auto_internal.h"
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

/* What auto knows of one candidate. */
enum { CAND_SKIPPED, CAND_KNOWN, CAND_PENDING, CAND_PRUNED, CAND_RAN };

typedef struct cand {
  const av_scheduler_ops_t *ops;
  const char *alt;                 /* its policy alternative, or NULL for the defaults */
  char params[256];                /* av_params_format of its parameters */
  int state;
  av_plan_t *plan;                 /* PENDING, RAN: its plan (auto's until handed out) */
  double bound_us, time_us;        /* lower bound (PENDING, 0 = none); prediction */
  av_sched_prediction_t pred;      /* RAN: its prediction */
  int exact;                       /* RAN: by the model asked for (not the waves fallback) */
  int memo;                        /* its memo entry, or -1 */
  char why[160];                   /* SKIPPED: why */
} cand_t;

/* The race: every candidate in registry order (defaults before alternatives), the fastest
 * and the runner-up. */
typedef struct race {
  cand_t c[AV_AUTO_MAX_CANDIDATES];
  int n, best, second;
  int prune;                       /* skip the engine where the bound allows */
  int share;                       /* the memo's predictions are of this cost model */
  av_sim_model_t model;
  const av_costmodel_t *cost;
} race_t;

static void cand_name(char *name, size_t n, const cand_t *c) {
  snprintf(name, n, "%.40s%s%.40s%s", c->ops->name, c->alt ? "[" : "", c->alt ? c->alt : "",
           c->alt ? "]" : "");
}

static int cand_error(const cand_t *c, int rc, const av_error_t *e, av_error_t *err) {
  return av_error_set(err, rc, e->source, e->path, "auto: candidate '%s%s%s%s': %s",
                      c->ops->name, c->alt ? "[" : "", c->alt ? c->alt : "",
                      c->alt ? "]" : "", e->message);
}

/* A candidate that cannot plan this batch, or whose plan cannot run on this GPU
 * (AV_ERR_UNSUPPORTED): skipped, the reason kept. */
static void cand_skip(cand_t *c, const av_error_t *e) {
  snprintf(c->why, sizeof c->why, "%.159s", e->message);
  av_plan_destroy(c->plan);
  c->plan = NULL;
  c->state = CAND_SKIPPED;
}

/* Plans candidate c with the defaults, or the defaults and its alternative, unless the memo
 * has its prediction; proves the plan exact and bounds its engine time. */
static int cand_prepare(const av_sched_ctx_t *ctx, race_t *r, cand_t *c, av_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_params_t params;
  int rc = av_params_init(&params, c->ops->params, &e);
  if (rc == AV_OK && c->alt) rc = set_alternative(&params, c->alt, c->ops->name, &e);
  if (rc == AV_OK) av_params_format(&params, c->params, sizeof c->params);
  c->memo = rc ? -1 : av_sched_memo_find(ctx->memo, c->ops, &params, (int)r->model);
  if (c->memo >= 0) {
    c->time_us = ctx->memo->entries[c->memo].pred.makespan_us;
    c->state = CAND_KNOWN;
    return AV_OK;
  }
  if (rc == AV_OK) rc = av_scheduler_plan(c->ops, &params, ctx, &c->plan, &e);
  if (rc == AV_OK) rc = av_plan_check(c->plan, ctx->workload, &e);
  /* the bound is of the engine's time: with the waves model ranking, nothing is pruned */
  if (rc == AV_OK && r->prune && r->model == AV_SIM_ENGINE)
    rc = av__auto_bound(ctx, r->cost, c->plan, &c->bound_us, &e);
  c->state = CAND_PENDING;
  if (rc == AV_ERR_UNSUPPORTED) cand_skip(c, &e);
  else if (rc) return cand_error(c, rc, &e, err);
  return AV_OK;
}

/* Predicts a plan: the engine may decline a plan (AV_ERR_UNSUPPORTED), and then the
 * closed-form wave model ranks it (*exact 0), so every candidate gets a number. */
static int predict(const av_sched_ctx_t *ctx, const race_t *r, const av_plan_t *p,
                   av_sched_prediction_t *pred, int *exact, av_error_t *e) {
  av_sim_config_t cfg = {.model = r->model, .kv_copy = ctx->kv_copy};
  av_sim_result_t res;
  int rc = av_sim_run(&cfg, &(av_sim_input_t){p, ctx->workload, ctx->gpu, ctx->variants, r->cost},
                      &res, NULL, e);
  *exact = rc != AV_ERR_UNSUPPORTED || r->model != AV_SIM_ENGINE;
  if (!*exact) {
    av_error_clear(e);
    cfg.model = AV_SIM_WAVES;
    rc = av_sim_run(&cfg, &(av_sim_input_t){p, ctx->workload, ctx->gpu, ctx->variants, r->cost},
                    &res, NULL, e);
  }
  if (rc) return rc;
  *pred = (av_sched_prediction_t){
      .makespan_us = res.makespan_us, .partial_us = res.partial_us, .merge_us = res.merge_us,
      .hbm_bytes = res.hbm_bytes, .l2_bytes = res.l2_bytes,
      .achieved_bw_GBps = res.achieved_bw_GBps, .bubble_frac = res.bubble_frac};
  av_sim_result_free(&res);
  return AV_OK;
}

/* Predicts a pending candidate. Policy alternatives often make the very plan of another
 * candidate on a batch (nothing to split, one tile shape): a plan with the same work as one
 * already predicted takes its prediction, the simulator being deterministic. Only the
 * model's own predictions go into the memo. */
static int cand_run(const av_sched_ctx_t *ctx, race_t *r, cand_t *c, av_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int rc = AV_OK, exact = 1, twin = -1;
  for (int k = 0; k < r->n && twin < 0; k++)
    if (r->c[k].state == CAND_RAN && r->c[k].plan && av_plan_same_work(r->c[k].plan, c->plan))
      twin = k;
  if (twin >= 0) {
    c->pred = r->c[twin].pred;
    exact = r->c[twin].exact;
  } else {
    rc = predict(ctx, r, c->plan, &c->pred, &exact, &e);
  }
  if (rc == AV_ERR_UNSUPPORTED) cand_skip(c, &e);
  if (rc == AV_ERR_UNSUPPORTED) return AV_OK;
  if (rc) return cand_error(c, rc, &e, err);
  c->state = CAND_RAN;
  c->exact = exact;
  c->time_us = c->pred.makespan_us;
  av_sched_memo_t *m = ctx->memo;
  if (exact && r->share && m && m->n < m->cap) {
    av_sched_memo_entry_t *me = &m->entries[m->n];
    me->ops = c->ops;
    snprintf(me->params, sizeof me->params, "%s", c->params);
    me->sim_model = (int)r->model;
    me->pred = c->pred;
    c->memo = m->n++;
  }
  return AV_OK;
}

/* Candidate a ranks before b: faster, or as fast and earlier in registry order. */
static int ranks_before(const race_t *r, int a, int b) {
  return r->c[a].time_us < r->c[b].time_us || (r->c[a].time_us == r->c[b].time_us && a < b);
}

static void race_enter(race_t *r, int k) {
  if (r->best < 0 || ranks_before(r, k, r->best)) {
    r->second = r->best;
    r->best = k;
  } else if (r->second < 0 || ranks_before(r, k, r->second)) {
    r->second = k;
  }
}

static void race_add(race_t *r, const av_scheduler_ops_t *ops, const char *alt) {
  if (r->n == AV_AUTO_MAX_CANDIDATES) return;
  cand_t *c = &r->c[r->n++];
  memset(c, 0, sizeof *c);
  c->ops = ops;
  c->alt = alt;
  c->memo = -1;
}

/* Every other scheduler: its defaults, then each policy alternative it declares (PAT's
 * compute cost model, serial streams, ...: measured best on some batches,
 * docs/validation.md#results), then with wide its m128 alternatives; each planned, proved
 * exact and bounded, in that order. */
static int race_collect(const av_sched_ctx_t *ctx, race_t *r, int wide, av_error_t *err) {
  int n_ops = 0, rc = AV_OK;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  for (int i = 0; i < n_ops; i++) {
    if (all[i]->flags & AV_SCHED_SIMULATES_OTHERS) continue;
    race_add(r, all[i], NULL);
    for (const char *const *a = all[i]->alternatives; a && *a; a++) race_add(r, all[i], *a);
    for (const char *const *a = wide ? all[i]->wide_alternatives : NULL; a && *a; a++)
      race_add(r, all[i], *a);
  }
  for (int k = 0; k < r->n && rc == AV_OK; k++) rc = cand_prepare(ctx, r, &r->c[k], err);
  return rc;
}

/* The known predictions enter first; then the planned candidates in order of increasing
 * bound (registry order among equal ones). Once the bound of the next exceeds the
 * runner-up's time, neither it nor any after it can place first or second: their engine
 * runs are skipped. */
static int race_run(const av_sched_ctx_t *ctx, race_t *r, av_error_t *err) {
  int order[AV_AUTO_MAX_CANDIDATES], n = 0, rc = AV_OK;
  for (int k = 0; k < r->n; k++) {
    if (r->c[k].state == CAND_KNOWN) race_enter(r, k);
    if (r->c[k].state != CAND_PENDING) continue;
    int j = n++;
    for (; j > 0 && r->c[order[j - 1]].bound_us > r->c[k].bound_us; j--) order[j] = order[j - 1];
    order[j] = k;
  }
  for (int j = 0; j < n && rc == AV_OK; j++) {
    cand_t *c = &r->c[order[j]];
    if (r->prune && r->second >= 0 && c->bound_us > r->c[r->second].time_us) {
      av_plan_destroy(c->plan);
      c->plan = NULL;
      c->state = CAND_PRUNED;
      continue;
    }
    rc = cand_run(ctx, r, c, err);
    if (rc == AV_OK && c->state == CAND_RAN) race_enter(r, order[j]);
  }
  return rc;
}

/* "name (reason); ..." of the skipped candidates, in registry order, cut at n - 1. */
static void skipped_text(const race_t *r, char *out, size_t n) {
  out[0] = '\0';
  for (int k = 0; k < r->n; k++) {
    const cand_t *c = &r->c[k];
    if (c->state != CAND_SKIPPED) continue;
    size_t used = strlen(out);
    snprintf(out + used, n - used, "%s%s%s%s%s (%.60s)", used ? "; " : "", c->ops->name,
             c->alt ? "[" : "", c->alt ? c->alt : "", c->alt ? "]" : "", c->why);
  }
}

static void race_free(race_t *r) {
  if (!r) return;
  for (int k = 0; k < r->n; k++) av_plan_destroy(r->c[k].plan);
  free(r);
}

/* The race over every candidate, ranked with the experiment's cost model (the roofline
 * model stands in for the per-item fixed costs when there is none; its predictions are then
 * not the caller's, so they stay out of the memo). *out is the caller's (race_free). */
static int run_race(const av_sched_ctx_t *ctx, const av_params_t *params, int prune,
                    race_t **out, av_error_t *err) {
  race_t *r = *out = calloc(1, sizeof *r);
  if (!r) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory in auto");
  r->best = r->second = -1;
  r->prune = prune;
  int rc = av_sim_model_lookup(av_params_enum(params, "model"), NULL, "model", &r->model, err);
  if (rc) return rc;
  av_costmodel_t *own = NULL;
  r->cost = ctx->cost;
  r->share = ctx->cost != NULL;
  if (!r->cost) {
    const av_costmodel_ops_t *ops = av_costmodel_find("roofline");
    av_cost_env_t env = {.gpu = ctx->gpu, .heads = &ctx->workload->heads,
                         .variants = ctx->variants, .concurrent_ctas = 0};
    if (!ops)
      return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "auto: no 'roofline' cost model");
    if (!(own = av_costmodel_create(ops, NULL, &env, err))) return err ? err->code : 1;
    r->cost = own;
  }
  if (ctx->memo) ctx->memo->chosen = -1;
  rc = race_collect(ctx, r, av_params_choice(params, "wide") == 1, err);
  if (rc == AV_OK) rc = race_run(ctx, r, err);
  av_costmodel_destroy(own);
  r->cost = NULL;
  if (rc == AV_OK && r->best < 0) {
    char skipped[200];
    skipped_text(r, skipped, sizeof skipped);
    rc = av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                      "auto: no candidate scheduler can plan this batch on %s: %s",
                      ctx->gpu->name, skipped);
  }
  return rc;
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

static int auto_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                     av_error_t *err) {
  *out = NULL;
  race_t *r = NULL;
  int rc = run_race(ctx, params, 1, &r, err);
  cand_t *best = rc ? NULL : &r->c[r->best];
  av_plan_t *plan = best ? best->plan : NULL;
  if (best) best->plan = NULL;
  if (best && !plan) rc = auto_replan(ctx, best->ops, best->alt, &plan, err);
  if (rc) {
    race_free(r);
    return rc;
  }
  const cand_t *second = r->second >= 0 ? &r->c[r->second] : NULL;
  /* margin: how much slower the runner-up is predicted to be, relative to the winner */
  double margin = second && best->time_us > 0
                      ? (second->time_us - best->time_us) / best->time_us : 0.0;
  char best_name[96], second_name[96] = "none", skipped[200];
  cand_name(best_name, sizeof best_name, best);
  if (second) cand_name(second_name, sizeof second_name, second);
  skipped_text(r, skipped, sizeof skipped);
  /* The parameters (model=...) are recorded by av_scheduler_plan; this is the verdict. */
  char verdict[512];  /* cut to the plan's params field as written */
  snprintf(verdict, sizeof verdict, "chose=%s,margin=%.4f,runner_up=%s%s%s", best_name,
           margin, second_name, skipped[0] ? ",skipped=" : "", skipped);
  snprintf(plan->params, sizeof plan->params, "%.255s", verdict);
  snprintf(plan->scheduler, sizeof plan->scheduler, "auto");
  if (ctx->memo) ctx->memo->chosen = best->memo;
  race_free(r);
  *out = plan;
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
  race_t *r = NULL;
  int rc = run_race(ctx, params, 0, &r, err);
  av_auto_candidate_t all[AV_AUTO_MAX_CANDIDATES];
  int m = 0;
  for (int k = 0; rc == AV_OK && k < r->n; k++) {
    const cand_t *c = &r->c[k];
    if (c->state != CAND_RAN && c->state != CAND_KNOWN) continue;
    /* predicted fastest first; a stable insertion keeps ties in registry order, as the race
     * does */
    int j = m++;
    for (; j > 0 && all[j - 1].predicted_us > c->time_us; j--) all[j] = all[j - 1];
    all[j] = (av_auto_candidate_t){.ops = c->ops, .alt = c->alt, .predicted_us = c->time_us};
    cand_name(all[j].name, sizeof all[j].name, c);
  }
  race_free(r);
  if (rc) return rc;
  *n = m < cap ? m : cap;
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

/* Every candidate race_collect would plan, each with its own estimate: auto plans, checks and
 * may simulate them all (the bound prunes simulations, not plans), so their pieces add up. */
static int64_t auto_pieces(const av_workload_t *w, const av_params_t *params) {
  const int wide = av_params_choice(params, "wide") == 1;
  int n_ops = 0;
  int64_t sum = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  for (int i = 0; i < n_ops; i++) {
    if (all[i]->flags & AV_SCHED_SIMULATES_OTHERS) continue;
    sum += av_scheduler_pieces(all[i], NULL, w);
    for (int pass = 0; pass < 1 + wide; pass++)
      for (const char *const *a = pass ? all[i]->wide_alternatives : all[i]->alternatives;
           a && *a; a++) {
        av_params_t p;
        if (av_params_init(&p, all[i]->params, NULL) || set_alternative(&p, *a, "", NULL))
          continue;
        sum += av_scheduler_pieces(all[i], &p, w);
      }
  }
  return sum;
}

/* The value of key "k=" in a comma-separated list whose values may hold commas inside
 * brackets; its length in *len. NULL when absent. */
static const char *verdict_field(const char *params, const char *key, size_t *len) {
  const size_t k = strlen(key);
  for (const char *p = params; p && *p;) {
    const int match = strncmp(p, key, k) == 0;
    const char *v = p + (match ? k : 0);
    int depth = 0;
    const char *q = v;
    for (; *q && (*q != ',' || depth > 0); q++) depth += (*q == '[') - (*q == ']');
    if (match) {
      *len = (size_t)(q - v);
      return v;
    }
    p = *q ? q + 1 : q;
  }
  return NULL;
}

int av_auto_verdict_parse(const char *params, char *chose, size_t n, double *margin) {
  size_t len = 0;
  const char *c = verdict_field(params, "chose=", &len);
  if (n) snprintf(chose, n, "%.*s", c ? (int)len : 0, c ? c : "");
  *margin = NAN;
  const char *m = c ? verdict_field(params, "margin=", &len) : NULL;
  char *end = NULL;
  double v = m ? strtod(m, &end) : NAN;
  if (m && end == m + len && len) *margin = v;
  return c != NULL;
}

void av_auto_verdict_text(const char *label, const char *params, char *out, size_t n) {
  char chose[128];
  double margin;
  if (!av_auto_verdict_parse(params, chose, sizeof chose, &margin))
    snprintf(out, n, "%s", label);
  else if (isnan(margin))
    snprintf(out, n, "%s\u2192%s", label, chose);
  else
    snprintf(out, n, "%s\u2192%s (%+.1f %%)", label, chose, 100 * margin);
}

const av_scheduler_ops_t av_sched_auto = {
    .name = "auto",
    .description = "simulates every other scheduler's plan (defaults and declared policy "
                   "alternatives) and keeps the predicted fastest",
    .params = auto_params,
    .plan = auto_plan,
    .flags = AV_SCHED_SIMULATES_OTHERS,
    .pieces = auto_pieces,
};
