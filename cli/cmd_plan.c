/* `anvil plan`: one batch, one scheduler -> a plan file (the plan plus its workload, so
 * `anvil check` and the GPU executor need nothing else). The plan is checked before it is
 * written: a scheduler bug never produces a plan file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/escape.h"
#include "core/json_util.h"
#include "core/limits.h"
#include "pipeline/results_dir.h"

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
  av_heads_t heads;
  int no_limits;
  av_launch_model_t launch;
} plan_opts_t;

static int parse_args(int argc, char **argv, plan_opts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  int64_t d;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 0:
      case OPT_WORKLOAD:
        if (o->spec)
          return av_error_set(err, AV_ERR_USAGE, "plan", v, "unexpected second workload");
        o->spec = v;
        break;
      case OPT_LEVELS: o->levels = v; break;
      case 's': o->models.sched = v; break;
      case 'g': o->gpu = v; break;
      case OPT_COST: o->models.cost = v; break;
      case 'o': o->out = v; break;
      case OPT_NO_LIMITS: o->no_limits = 1; break;
      case OPT_LAUNCH:
        if (av_launch_model_from_name(v, &o->launch))
          return av_error_set(err, AV_ERR_USAGE, "plan", "--launch",
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
        if (av_cli_parse_int("plan", "--head-dim", v, 1, 4096, &d, err)) return err->code;
        o->heads.head_dim = (int)d;
        break;
    }
  }
  if (!o->models.sched)
    return av_error_set(err, AV_ERR_USAGE, "plan", "--scheduler",
                        "missing; name the scheduler (anvil list shows them)");
  if (!o->out)
    return av_error_set(err, AV_ERR_USAGE, "plan", "--output",
                        "missing; give -o PLAN.json");
  return av_path_check_writable("plan", o->out, "--output", err);
}

int av_cmd_plan(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  plan_opts_t o = {.gpu = "H200-SXM", .models = {.cost = "roofline"},
                   .heads = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16}};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("plan (SPEC.json | --levels \"B=1,4 L=128,32\") --scheduler NAME "
                      "[-p k=v]... [--gpu NAME] -o PLAN.json",
                      "Plans one batch with one scheduler, proves the plan exact with the "
                      "checker and\nwrites it (with its workload) as JSON.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);

  av_cli_models_t m;
  av_gpu_t gpu;
  av_workload_t *w = NULL;
  av_costmodel_t *cost = NULL;
  av_variants_t *vs = NULL;
  av_plan_t *plan = NULL;
  json_t *doc = NULL;
  rc = av_cli_models_load("plan", &o.models, &m, &err);
  if (!rc) rc = av_cli_load_gpu("plan", o.gpu, &gpu, &err);
  if (!rc) rc = av_cli_load_workload("plan", o.spec, o.levels, &o.heads, &w, &err);
  if (!rc) rc = av_cli_load_variants(1, &vs, &err);
  if (!rc) rc = av_cli_cost_create(m.cops, &m.cp, &gpu, &w->heads, vs, &cost, &err);
  av_limits_t lim;
  av_limits_default(&lim);
  /* The work estimate before any planning; a plan over limits.plan_items is left to the
   * scheduler, which refuses it before allocating and names the parameter to change. */
  if (!rc && !o.no_limits &&
      (!m.sops->min_items || m.sops->min_items(w, &m.sp) <= lim.plan_items)) {
    const int64_t units = av_limits_work_units(w, av_scheduler_pieces(m.sops, &m.sp, w));
    char what[160];
    snprintf(what, sizeof what, "batch '%s'", w->name);
    rc = av_limits_check_work(&lim, units, m.sops->name, what, o.spec ? o.spec : "--levels",
                              NULL, "run with --no-limits if you mean it", &err);
  }
  if (!rc) {
    av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs, .cost = cost,
                          .max_items = o.no_limits ? 0 : lim.plan_items,
                          .launch_model = o.launch};
    rc = av_scheduler_plan(m.sops, &m.sp, &ctx, &plan, &err);
  }
  if (!rc) rc = av_plan_check(plan, w, &err);
  if (!rc) {
    doc = av_plan_to_json(plan, w);
    rc = doc ? av_json_dump_file(doc, o.out, &err)
             : av_error_set(&err, AV_ERR_NOMEM, o.out, NULL, "cannot serialise the plan");
  }
  if (!rc) {
    av_plan_stats_t ps;
    av_plan_stats(plan, &ps);
    char name[AV_ESCAPE_NAME_SIZE], out[4096];
    printf("plan: %s (%s) for %s on %s: %d items, %d launches, %d streams, %d partial slots; "
           "checked exact -> %s\n",
           plan->scheduler, plan->params[0] ? plan->params : "defaults",
           av_escape_text(w->name, name, sizeof name), gpu.name, ps.items, ps.launches,
           ps.streams, ps.partial_slots, av_escape_text(o.out, out, sizeof out));
  }
  json_decref(doc);
  av_plan_destroy(plan);
  av_costmodel_destroy(cost);
  av_variants_destroy(vs);
  av_workload_destroy(w);
  return rc ? av_cli_fail(&err) : 0;
}
