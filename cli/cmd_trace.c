/* `anvil trace`: runs a JSONL decode trace (one batch per step, requests joining and
 * leaving) through one scheduler and the simulator, printing each step's predicted time. A
 * step whose batch tree keeps its structure, its leaves growing only within their requests'
 * last KV block, reuses the previous plan grown to the new lengths instead of planning again:
 * PAT's lazy update (PAT §5.1, api/plan_reuse.h, the rule the public planner applies too),
 * which is what makes per-step planning affordable in a serving loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/plan_reuse.h"
#include "proofs/proofs.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "sim/sim.h"
#include "core/limits.h"
#include "core/variants.h"

enum { OPT_COST = 256, OPT_SIM, OPT_HEADS, OPT_NO_LIMITS };

static const av_cli_opt_t k_opts[] = {
    {"scheduler", 's', "NAME", "scheduler (required; anvil list shows them)"},
    {"param", 'p', "KEY=VALUE", "a scheduler parameter (repeatable)"},
    {"gpu", 'g', "NAME", "GPU spec (default H200-SXM)"},
    {"cost-model", OPT_COST, "NAME", "cost model (default roofline)"},
    {"cost-param", 'c', "KEY=VALUE", "a cost model parameter (repeatable)"},
    {"sim", OPT_SIM, "MODEL", "simulator model: engine (default) or waves"},
    {"heads", OPT_HEADS, "Q,KV", "heads for steps that name none (default 32,8)"},
    {"no-limits", OPT_NO_LIMITS, NULL, "plan and simulate steps over the limits "
     "(docs/reliability.md#limits)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct trace_opts {
  const char *path, *gpu, *sim;
  av_cli_model_args_t models;
  av_heads_t heads;
  int no_limits;
} trace_opts_t;

static int parse(int argc, char **argv, trace_opts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 0:
        if (o->path) return av_error_set(err, AV_ERR_USAGE, "trace", v, "unexpected second trace");
        o->path = v;
        break;
      case 's': o->models.sched = v; break;
      case 'g': o->gpu = v; break;
      case OPT_COST: o->models.cost = v; break;
      case OPT_SIM: o->sim = v; break;
      case OPT_NO_LIMITS: o->no_limits = 1; break;
      case OPT_HEADS:
        if (av_cli_parse_heads("trace", v, &o->heads, err)) return err->code;
        break;
      case 'p':
      case 'c':
        if (av_cli_add_assign("trace", k, v, &o->models, err)) return err->code;
        break;
      default:
        return av_error_set(err, AV_ERR_USAGE, "trace", v ? v : "",
                            "unexpected argument; see anvil trace --help");
    }
  }
  if (!o->path)
    return av_error_set(err, AV_ERR_USAGE, "trace", "TRACE.jsonl", "missing; name the trace");
  if (!o->models.sched)
    return av_error_set(err, AV_ERR_USAGE, "trace", "--scheduler",
                        "missing; name the scheduler (anvil list shows them)");
  return AV_OK;
}

typedef struct trace_run {
  av_cli_models_t m;
  av_sim_config_t cfg;
  av_gpu_t gpu;
  av_variants_t *vs;
  av_costmodel_t *cost;
  av_heads_t cost_heads;
  av_plan_t *plan;
  const av_workload_t *planned;   /* the step the current plan was made for */
  int32_t plans, reused;
  double total_us;
  int64_t max_items;              /* limits.plan_items; 0 with --no-limits */
} trace_run_t;

/* Every step within the default limits (core/limits.h) before any is planned, its work
 * estimated for the trace's scheduler (every step is simulated, reused plan or not), and
 * the steps' work in all held to the same limit; plans are held to limits.plan_items. */
static int check_limits(const av_trace_t *tr, const char *path, trace_run_t *s,
                        av_error_t *err) {
  static const char raise[] = "run with --no-limits if you mean it";
  av_limits_t l;
  av_limits_default(&l);
  s->max_items = l.plan_items;
  int64_t total = 0;
  for (int32_t i = 0; i < av_trace_steps(tr); i++) {
    const av_workload_t *w = av_trace_step(tr, i);
    char name[32];
    snprintf(name, sizeof name, "step %d", i);
    int rc = av_limits_check_workload(&l, w, name, path, NULL, raise, err);
    const int64_t units =
        av_limits_work_units(w, av_scheduler_pieces(s->m.sops, &s->m.sp, w));
    char what[48];
    snprintf(what, sizeof what, "batch '%s'", name);
    if (!rc) rc = av_limits_check_work(&l, units, s->m.sops->name, what, path, NULL, raise, err);
    if (rc) return rc;
    total = units > INT64_MAX - total ? INT64_MAX : total + units;
  }
  char all[48];
  snprintf(all, sizeof all, "all %d steps", av_trace_steps(tr));
  return av_limits_check_work(&l, total, s->m.sops->name, all, path, NULL, raise, err);
}

/* One step: plan (or reuse the previous plan) and simulate. */
static int run_step(trace_run_t *s, int32_t i, const av_workload_t *w, av_error_t *err) {
  int reuse = s->plan && av_plan_reusable(s->planned, w);
  int rc = AV_OK;
  if (!reuse) {
    if (!s->cost || memcmp(&s->cost_heads, &w->heads, sizeof w->heads) != 0) {
      av_costmodel_destroy(s->cost);
      rc = av_cli_cost_create(s->m.cops, &s->m.cp, &s->gpu, &w->heads, s->vs, &s->cost, err);
      if (rc) return rc;
      s->cost_heads = w->heads;
    }
    av_plan_destroy(s->plan);
    s->plan = NULL;
    av_sched_ctx_t ctx = {.workload = w, .gpu = &s->gpu, .variants = s->vs, .cost = s->cost,
                          .max_items = s->max_items};
    rc = av_scheduler_plan(s->m.sops, &s->m.sp, &ctx, &s->plan, err);
    if (!rc) rc = av_plan_check(s->plan, w, err);
    if (rc) return rc;
    s->planned = w;
    s->plans++;
  } else {
    av_plan_regrow(s->plan, s->planned, w);
    s->plan->workload_hash = av_workload_hash(w);
    s->planned = w;
    s->reused++;
  }
  av_sim_result_t r;
  rc = av_sim_run(&s->cfg, s->plan, w, &s->gpu, s->vs, s->cost, &r, NULL, err);
  if (rc) return rc;
  av_workload_stats_t ws;
  av_workload_stats(w, &ws);
  printf("%6d %9d %7d %9d %-8s %14.3f %9.1f %8.1f\n", i, ws.requests, ws.nodes,
         s->plan->n_items, reuse ? "reused" : "planned", r.makespan_us, r.hbm_bytes / 1e6,
         100 * r.bubble_frac);
  s->total_us += r.makespan_us;
  av_sim_result_free(&r);
  return AV_OK;
}

int av_cmd_trace(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  trace_opts_t o = {.gpu = "H200-SXM", .models = {.cost = "roofline"}, .sim = "engine",
                    .heads = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16}};
  int rc = parse(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("trace TRACE.jsonl --scheduler NAME [-p k=v]... [--gpu NAME] "
                      "[--cost-model NAME] [--sim engine|waves]",
                      "Plans and simulates every step of a JSONL decode trace; a step whose "
                      "batch tree keeps\nits structure, its requests growing within their last KV "
                      "block, reuses the\nprevious plan (PAT's lazy update).",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  trace_run_t s;
  memset(&s, 0, sizeof s);
  av_trace_t *tr = NULL;
  rc = av_cli_models_load("trace", &o.models, &s.m, &err);
  if (!rc) rc = av_sim_model_lookup(o.sim, "trace", "--sim", &s.cfg.model, &err);
  if (!rc) rc = av_cli_load_gpu("trace", o.gpu, &s.gpu, &err);
  if (!rc) rc = av_cli_load_variants(0, &s.vs, &err);
  if (!rc) {
    tr = av_trace_load(o.path, &o.heads, &err);
    if (!tr) rc = err.code ? err.code : AV_ERR_INTERNAL;
  }
  if (!rc && !o.no_limits) rc = check_limits(tr, o.path, &s, &err);
  if (!rc) {
    printf("# trace %s: %d steps, scheduler %s, cost model %s, sim %s, gpu %s\n", o.path,
           av_trace_steps(tr), s.m.sops->name, s.m.cops->name, o.sim, s.gpu.name);
    printf("%6s %9s %7s %9s %-8s %14s %9s %8s\n", "step", "requests", "nodes", "items", "plan",
           "predicted_us", "hbm_MB", "bubble%");
  }
  for (int32_t i = 0; !rc && i < av_trace_steps(tr); i++)
    rc = run_step(&s, i, av_trace_step(tr, i), &err);
  if (!rc)
    printf("steps=%d planned=%d reused=%d total_predicted_us=%.3f\n", av_trace_steps(tr),
           s.plans, s.reused, s.total_us);
  av_plan_destroy(s.plan);
  av_costmodel_destroy(s.cost);
  av_trace_destroy(tr);
  av_variants_destroy(s.vs);
  return rc ? av_cli_fail(&err) : 0;
}
