/* `anvil trace`: runs a JSONL decode trace (one batch per step, requests joining and
 * leaving) through one scheduler and the simulator (anvil_trace, include/anvil/trace.h),
 * printing each step's predicted time. A step whose batch tree keeps its structure reuses
 * the previous plan grown to the new lengths: PAT's lazy update (PAT §5.1,
 * pipeline/plan_reuse.h), which is what makes per-step planning affordable in a serving
 * loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/trace.h"
#include "cli/args.h"
#include "cli/commands.h"

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
  av_cli_heads_t heads;
  int no_limits;
} trace_opts_t;

static int parse(int argc, char **argv, trace_opts_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 0:
        if (o->path) return av_cli_error(err, ANVIL_ERR_USAGE, "trace", v, "unexpected second trace");
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
        return av_cli_error(err, ANVIL_ERR_USAGE, "trace", v ? v : "",
                            "unexpected argument; see anvil trace --help");
    }
  }
  return ANVIL_OK;  /* what is missing is anvil_trace's to say */
}

static void print_header(const anvil_trace_start_t *s, void *user) {
  printf("# trace %s: %d steps, scheduler %s, cost model %s, sim %s, gpu %s\n",
         (const char *)user, s->steps, s->scheduler, s->cost_model, s->sim, s->gpu);
  printf("%6s %9s %7s %9s %-8s %14s %9s %8s\n", "step", "requests", "nodes", "items", "plan",
         "predicted_us", "hbm_MB", "bubble%");
}

static int print_row(const anvil_trace_row_t *r, void *user) {
  (void)user;
  printf("%6d %9d %7d %9d %-8s %14.3f %9.1f %8.1f\n", r->step, r->requests, r->nodes,
         r->items, r->reused ? "reused" : "planned", r->predicted_us, r->hbm_bytes / 1e6,
         100 * r->bubble_frac);
  return 0;
}

int av_cmd_trace(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  trace_opts_t o = {.gpu = "H200-SXM", .models = {.cost = "roofline"}, .sim = "engine",
                    .heads = {.hq = 32, .hkv = 8, .head_dim = 128}};
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
  if (rc) return av_cli_fail_public(&err);
  anvil_trace_options_t t;
  anvil_trace_options_default(&t);
  t.path = o.path;
  t.scheduler = o.models.sched;
  t.scheduler_params = o.models.sp;
  t.n_scheduler_params = o.models.n_sp;
  t.cost_model = o.models.cost;
  t.cost_params = o.models.cp;
  t.n_cost_params = o.models.n_cp;
  t.gpu = o.gpu;
  t.sim = o.sim;
  t.heads.q_heads = o.heads.hq;
  t.heads.kv_heads = o.heads.hkv;
  t.no_limits = o.no_limits;
  t.on_start = print_header;
  anvil_trace_summary_t sum;
  anvil_error_t e;
  if (anvil_trace(&t, print_row, (void *)o.path, &sum, &e)) return av_cli_fail_public(&e);
  printf("steps=%d planned=%d reused=%d total_predicted_us=%.3f\n", sum.steps, sum.plans,
         sum.reused, sum.total_us);
  return 0;
}
