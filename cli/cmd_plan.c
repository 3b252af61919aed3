/* `anvil plan`: one batch, one scheduler -> a plan file (the plan plus its workload, so
 * `anvil check` and the GPU executor need nothing else). The plan is checked before it is
 * written: a scheduler bug never produces a plan file. */
#include <stdio.h>

#include "anvil/plan_file.h"
#include "cli/args.h"
#include "cli/commands.h"

enum { OPT_LEVELS = 256, OPT_HEADS, OPT_HEAD_DIM, OPT_COST, OPT_WORKLOAD, OPT_NO_LIMITS, OPT_LAUNCH };

static const av_cli_opt_t k_opts[] = {
    {"workload", OPT_WORKLOAD, "SPEC.json", "the batch as a workload spec file"},
    {"levels", OPT_LEVELS, "\"B=.. L=..\"", "the batch in B/L notation, e.g. \"B=1,4 L=128,32\""},
    {"scheduler", 's', "NAME", "scheduler (anvil list shows them)"},
    {"param", 'p', "KEY=VALUE", "a scheduler parameter (repeatable)"},
    {"gpu", 'g', "NAME", "GPU spec to plan for (default H200-SXM)"},
    {"cost-model", OPT_COST, "NAME", "cost model the scheduler uses (default roofline)"},
    {"cost-param", 'c', "KEY=VALUE", "a cost model parameter (repeatable)"},
    {"heads", OPT_HEADS, "Q,KV", "query and KV heads when the spec has none (default 32,8)"},
    {"head-dim", OPT_HEAD_DIM, "D", "head dim when the spec has none (default 128)"},
    {"output", 'o', "PLAN.json", "where to write the plan (required)"},
    {"no-limits", OPT_NO_LIMITS, NULL, "make plans over limits.plan_items (docs/reliability.md)"},
    {"launch", OPT_LAUNCH, "MODEL",
     "how the executor issues the plan: streams (default), graph or pdl (docs/kernels.md)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct plan_opts {
  const char *spec, *levels, *gpu, *out;
  av_cli_model_args_t models;
  av_cli_heads_t heads;
  int no_limits;
  int launch;                /* ANVIL_LAUNCH_* */
} plan_opts_t;

static int parse_args(int argc, char **argv, plan_opts_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  int64_t d;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 0:
      case OPT_WORKLOAD:
        if (o->spec)
          return av_cli_error(err, ANVIL_ERR_USAGE, "plan", v, "unexpected second workload");
        o->spec = v;
        break;
      case OPT_LEVELS: o->levels = v; break;
      case 's': o->models.sched = v; break;
      case 'g': o->gpu = v; break;
      case OPT_COST: o->models.cost = v; break;
      case 'o': o->out = v; break;
      case OPT_NO_LIMITS: o->no_limits = 1; break;
      case OPT_LAUNCH:
        if ((o->launch = anvil_launch_from_name(v)) < 0)
          return av_cli_error(err, ANVIL_ERR_USAGE, "plan", "--launch",
                              "'%s' is not a launch model; expected streams, graph or pdl", v);
        break;
      case 'p':
      case 'c':
        if (av_cli_add_assign("plan", k, v, &o->models, err)) return err->code;
        break;
      case OPT_HEADS:
        if (av_cli_parse_heads("plan", v, &o->heads, err)) return err->code;
        break;
      case OPT_HEAD_DIM:
        if (av_cli_int_arg("plan", "--head-dim", v, 1, 4096, &d, err)) return err->code;
        o->heads.head_dim = (int)d;
        break;
    }
  }
  return ANVIL_OK;  /* what is missing, and the output's path, are anvil_plan_file's to check */
}

int av_cmd_plan(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  plan_opts_t o = {.gpu = "H200-SXM", .models = {.cost = "roofline"},
                   .heads = {.hq = 32, .hkv = 8, .head_dim = 128}};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("plan (SPEC.json | --levels \"B=1,4 L=128,32\") --scheduler NAME "
                      "[-p k=v]... [--gpu NAME] -o PLAN.json",
                      "Plans one batch with one scheduler, proves the plan exact with the "
                      "checker and\nwrites it (with its workload) as JSON.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail_public(&err);

  anvil_plan_file_options_t p = {
      .spec = o.spec, .levels = o.levels, .scheduler = o.models.sched, .params = o.models.sp,
      .n_params = o.models.n_sp, .cost_model = o.models.cost, .cost_params = o.models.cp,
      .n_cost_params = o.models.n_cp, .gpu = o.gpu, .q_heads = o.heads.hq,
      .kv_heads = o.heads.hkv, .head_dim = o.heads.head_dim, .no_limits = o.no_limits,
      .launch = o.launch, .out = o.out};
  anvil_plan_file_result_t r;
  anvil_error_t e;
  if (anvil_plan_file(&p, &r, &e)) return av_cli_fail_public(&e);
  char name[512], out[4096];
  printf("plan: %s (%s) for %s on %s: %d items, %d launches, %d streams, %d partial slots; "
         "checked exact -> %s\n",
         r.scheduler, r.params[0] ? r.params : "defaults",
         anvil_escape_text(r.workload, name, sizeof name), r.gpu, r.items, r.launches,
         r.streams, r.partial_slots, anvil_escape_text(o.out, out, sizeof out));
  return 0;
}
