/* `anvil trace`: runs a JSONL decode trace (one batch per step, requests joining and
 * leaving) through one scheduler and the simulator, printing each step's predicted time. A
 * step whose batch tree is unchanged from the previous step (same av_workload_hash and
 * structurally equal) reuses the previous plan instead of planning again: PAT's lazy update
 * (PAT §5.1), which is what makes per-step planning affordable in a serving loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "sim/sim.h"
#include "sim/variants.h"

enum { OPT_COST = 256, OPT_SIM, OPT_HEADS };
#define MAX_ASSIGN 32

static const av_cli_opt_t k_opts[] = {
    {"scheduler", 's', "NAME", "scheduler (required; anvil list shows them)"},
    {"param", 'p', "KEY=VALUE", "a scheduler parameter (repeatable)"},
    {"gpu", 'g', "NAME", "GPU spec (default H200-SXM)"},
    {"cost-model", OPT_COST, "NAME", "cost model (default roofline)"},
    {"cost-param", 'c', "KEY=VALUE", "a cost model parameter (repeatable)"},
    {"sim", OPT_SIM, "MODEL", "simulator model: engine (default) or waves"},
    {"heads", OPT_HEADS, "Q,KV", "heads for steps that name none (default 32,8)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct trace_opts {
  const char *path, *sched, *gpu, *cost, *sim;
  const char *sp[MAX_ASSIGN], *cp[MAX_ASSIGN];
  int n_sp, n_cp;
  av_heads_t heads;
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
      case 's': o->sched = v; break;
      case 'g': o->gpu = v; break;
      case OPT_COST: o->cost = v; break;
      case OPT_SIM: o->sim = v; break;
      case OPT_HEADS:
        if (av_cli_parse_heads("trace", v, &o->heads, err)) return err->code;
        break;
      case 'p':
      case 'c': {
        int *n = k == 'p' ? &o->n_sp : &o->n_cp;
        if (*n == MAX_ASSIGN)
          return av_error_set(err, AV_ERR_USAGE, "trace", k == 'p' ? "-p" : "-c",
                              "at most %d parameters", MAX_ASSIGN);
        (k == 'p' ? o->sp : o->cp)[(*n)++] = v;
        break;
      }
      default:
        return av_error_set(err, AV_ERR_USAGE, "trace", v ? v : "",
                            "unexpected argument; see anvil trace --help");
    }
  }
  if (!o->path)
    return av_error_set(err, AV_ERR_USAGE, "trace", "TRACE.jsonl", "missing; name the trace");
  if (!o->sched)
    return av_error_set(err, AV_ERR_USAGE, "trace", "--scheduler",
                        "missing; name the scheduler (anvil list shows them)");
  return AV_OK;
}

static int apply_params(av_params_t *p, const av_param_def_t *defs, const char *const *as,
                        int n, const char *source, av_error_t *err) {
  int rc = av_params_init(p, defs, err);
  for (int i = 0; !rc && i < n; i++) rc = av_params_set_text(p, as[i], source, err);
  return rc;
}

typedef struct trace_run {
  const av_scheduler_ops_t *sops;
  const av_costmodel_ops_t *cops;
  av_params_t sp, cp;
  av_sim_config_t cfg;
  av_gpu_t gpu;
  av_variants_t *vs;
  av_costmodel_t *cost;
  av_heads_t cost_heads;
  av_plan_t *plan;
  const av_workload_t *planned;   /* the step the current plan was made for */
  int32_t plans, reused;
  double total_us;
} trace_run_t;

/* One step: plan (or reuse the previous plan) and simulate. */
static int run_step(trace_run_t *s, int32_t i, const av_workload_t *w, av_error_t *err) {
  int reuse = s->plan && av_workload_hash(w) == s->plan->workload_hash &&
              av_workload_equal(w, s->planned);
  int rc = AV_OK;
  if (!reuse) {
    if (!s->cost || memcmp(&s->cost_heads, &w->heads, sizeof w->heads) != 0) {
      av_costmodel_destroy(s->cost);
      av_cost_env_t env = {.gpu = &s->gpu, .heads = &w->heads, .variants = s->vs};
      s->cost = av_costmodel_create(s->cops, &s->cp, &env, err);
      if (!s->cost) return err->code ? err->code : AV_ERR_INTERNAL;
      s->cost_heads = w->heads;
    }
    av_plan_destroy(s->plan);
    s->plan = NULL;
    av_sched_ctx_t ctx = {.workload = w, .gpu = &s->gpu, .variants = s->vs, .cost = s->cost};
    rc = av_scheduler_plan(s->sops, &s->sp, &ctx, &s->plan, err);
    if (!rc) rc = av_plan_check(s->plan, w, err);
    if (rc) return rc;
    s->planned = w;
    s->plans++;
  } else {
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
  trace_opts_t o = {.gpu = "H200-SXM", .cost = "roofline", .sim = "engine",
                    .heads = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16}};
  int rc = parse(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("trace TRACE.jsonl --scheduler NAME [-p k=v]... [--gpu NAME] "
                      "[--cost-model NAME] [--sim engine|waves]",
                      "Plans and simulates every step of a JSONL decode trace; a step whose "
                      "batch tree is\nunchanged reuses the previous plan (PAT's lazy update).",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  trace_run_t s;
  memset(&s, 0, sizeof s);
  av_trace_t *tr = NULL;
  rc = av_scheduler_lookup(o.sched, "trace", "--scheduler", &s.sops, &err);
  if (!rc) rc = apply_params(&s.sp, s.sops->params, o.sp, o.n_sp, "-p", &err);
  if (!rc) rc = av_costmodel_lookup(o.cost, "trace", "--cost-model", &s.cops, &err);
  if (!rc) rc = apply_params(&s.cp, s.cops->params, o.cp, o.n_cp, "-c", &err);
  if (!rc) rc = av_sim_model_lookup(o.sim, "trace", "--sim", &s.cfg.model, &err);
  if (!rc) rc = av_cli_load_gpu("trace", o.gpu, &s.gpu, &err);
  if (!rc) {
    s.vs = av_variants_load(NULL, &err);
    if (!s.vs) rc = err.code ? err.code : AV_ERR_INTERNAL;
  }
  if (!rc) {
    tr = av_trace_load(o.path, &o.heads, &err);
    if (!tr) rc = err.code ? err.code : AV_ERR_INTERNAL;
  }
  if (!rc) {
    printf("# trace %s: %d steps, scheduler %s, cost model %s, sim %s, gpu %s\n", o.path,
           av_trace_steps(tr), s.sops->name, s.cops->name, o.sim, s.gpu.name);
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
