/* `anvil replay`: replays a measured per-CTA trace (format in sim/replay.h) of a plan through
 * the simulator's dispatch model — measured durations fixed, placement simulated — and
 * reports how far the replayed makespan is from the measured one: the dispatch model's error
 * alone, separated from the cost model's. Then it predicts the same plan with a cost model
 * and sets the predicted CTA durations beside the measured ones, launch by launch: the cost
 * model's error, located. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/plan.h"
#include "costmodels/costmodel.h"
#include "sim/replay.h"
#include "core/variants.h"
#include "pipeline/results_dir.h"

enum { OPT_PLAN = 256, OPT_TRACE, OPT_TIMELINE, OPT_COST };

static const av_cli_opt_t k_opts[] = {
    {"plan", OPT_PLAN, "PLAN.json", "the plan that was executed (required)"},
    {"trace", OPT_TRACE, "MEASURED.json", "its measured per-CTA records (required)"},
    {"gpu", 'g', "NAME", "GPU spec (default H200-SXM; must match the trace's \"gpu\")"},
    {"timeline", OPT_TIMELINE, "FILE", "write the replayed timeline (Chrome Trace JSON)"},
    {"cost-model", OPT_COST, "NAME", "cost model whose CTA durations are compared (default profile)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct replay_opts {
  const char *plan, *trace, *gpu, *timeline, *cost;
  int cost_given;  /* --cost-model named: a model that cannot be made is an error */
} replay_opts_t;

static int parse(int argc, char **argv, replay_opts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case OPT_PLAN: o->plan = v; break;
      case OPT_TRACE: o->trace = v; break;
      case 'g': o->gpu = v; break;
      case OPT_TIMELINE: o->timeline = v; break;
      case OPT_COST: o->cost = v, o->cost_given = 1; break;
      default:
        return av_error_set(err, AV_ERR_USAGE, "replay", v ? v : "",
                            "unexpected argument; see anvil replay --help");
    }
  }
  if (!o->plan) return av_error_set(err, AV_ERR_USAGE, "replay", "--plan", "missing");
  if (!o->trace) return av_error_set(err, AV_ERR_USAGE, "replay", "--trace", "missing");
  return AV_OK;
}

static void report(const replay_opts_t *o, const av_plan_t *p, const av_replay_trace_t *t,
                   const av_replay_result_t *r) {
  printf("plan: %s (%d items, %d launches, %d KV heads)\n", o->plan, p->n_items,
         p->n_launches, p->heads.hkv);
  printf("trace: %s (%d CTA records, %d merge CTAs) recorded on %s\n", o->trace, t->n,
         t->merge_records, t->gpu);
  printf("merge phase: %s\n", t->merge_records ? "measured (median merge-CTA duration)"
                                               : "modelled (no merge records)");
  for (int32_t l = 0; l < r->sim.n_launches; l++) {
    const av_sim_launch_result_t *L = &r->sim.launches[l];
    printf("  launch %d: %d CTAs, %d per SM, %.2f waves, replayed %.2f..%.2f us\n", l, L->ctas,
           L->ctas_per_sm, L->waves, L->start_us, L->end_us);
  }
  printf("SM busy %.1f%%, bubble %.1f%%\n", 100 * r->sim.sm_busy_frac,
         100 * r->sim.bubble_frac);
  printf("measured makespan: %.3f us\n", r->measured_us);
  printf("replayed makespan: %.3f us\n", r->replayed_us);
  printf("replay_rel_err=%+.4f\n", r->rel_err);
}

/* The cost model's CTA durations beside the measured ones, one row per launch. */
static void report_ctas(const replay_opts_t *o, const av_plan_t *p, const av_replay_cta_cmp_t *c,
                        int32_t n) {
  printf("CTA durations, predicted by the %s cost model and measured (us):\n", o->cost);
  printf("  %-8s %-16s %6s %10s %10s %8s %10s %10s\n", "launch", "tile", "CTAs", "predicted",
         "measured", "meas/pred", "pred_p90", "meas_p90");
  for (int32_t i = 0; i < n; i++) {
    char name[16], tile[40];
    if (c[i].launch < 0) {
      snprintf(name, sizeof name, "merge");
      snprintf(tile, sizeof tile, "-");
    } else {
      const av_tile_t *t = &p->launches[c[i].launch].tile;
      snprintf(name, sizeof name, "%d", c[i].launch);
      snprintf(tile, sizeof tile, "m%d n%d w%d", t->m_rows, t->n_tokens, t->warps);
    }
    printf("  %-8s %-16s %6d %10.2f %10.2f %8.3f %10.2f %10.2f\n", name, tile, c[i].ctas,
           c[i].pred_median_us, c[i].meas_median_us, c[i].ratio_median, c[i].pred_p90_us,
           c[i].meas_p90_us);
  }
  printf("  (items: median of each CTA's measured / predicted; merge: the medians' ratio)\n");
}

/* Predicts plan p with cost model `ops` (looked up before any work) and compares its CTAs
 * with trace t. */
static int compare_ctas(const replay_opts_t *o, const av_costmodel_ops_t *ops,
                        const av_plan_t *p, const av_workload_t *w, const av_gpu_t *gpu,
                        const av_variants_t *vs, const av_replay_trace_t *t, av_error_t *err) {
  av_costmodel_t *cost = NULL;
  av_sim_result_t sim;
  av_timeline_t tl = {0, 0, NULL};
  av_replay_cta_cmp_t *c = NULL;
  int32_t n = 0;
  memset(&sim, 0, sizeof sim);
  int rc = av_cli_cost_create(ops, NULL, gpu, &p->heads, vs, &cost, err);
  if (rc && !o->cost_given) {  /* the default model needs a profile this GPU may not have */
    printf("CTA durations: not compared (%s); name a --cost-model to compare\n", err->message);
    av_error_clear(err);
    return AV_OK;
  }
  if (!rc) {
    av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
    rc = av_sim_run(&cfg, p, w, gpu, vs, cost, &sim, &tl, err);
  }
  if (!rc) rc = av_replay_compare(t, p, &tl, &c, &n, err);
  if (!rc) {
    printf("predicted makespan (%s): %.3f us\n", o->cost, sim.makespan_us);
    report_ctas(o, p, c, n);
  }
  free(c);
  av_timeline_free(&tl);
  av_sim_result_free(&sim);
  av_costmodel_destroy(cost);
  return rc;
}

int av_cmd_replay(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  replay_opts_t o = {.gpu = "H200-SXM", .cost = "profile"};
  int rc = parse(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("replay --plan PLAN.json --trace MEASURED.json [--gpu NAME] "
                      "[--timeline FILE] [--cost-model NAME]",
                      "Replays measured per-CTA durations through the simulator's dispatch "
                      "model and reports\nthe replayed makespan against the measured one "
                      "(trace format: sim/replay.h); then\npredicts the plan with a cost "
                      "model and compares its CTA durations with the measured\nones, "
                      "launch by launch.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  av_gpu_t gpu;
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  av_variants_t *vs = NULL;
  av_replay_trace_t t;
  av_replay_result_t r;
  av_timeline_t tl = {0, 0, NULL};
  memset(&t, 0, sizeof t);
  memset(&r, 0, sizeof r);
  rc = o.timeline ? av_path_check_writable("replay", o.timeline, "--timeline", &err) : AV_OK;
  const av_costmodel_ops_t *cops = NULL;  /* a misspelt model fails before any work */
  if (!rc) rc = av_costmodel_lookup(o.cost, "replay", "--cost-model", &cops, &err);
  if (!rc) rc = av_cli_load_gpu("replay", o.gpu, &gpu, &err);
  if (!rc) rc = av_plan_load(o.plan, &p, &w, &err);
  if (!rc) rc = av_plan_check(p, w, &err);
  if (!rc) rc = av_cli_load_variants(0, &vs, &err);
  if (!rc) rc = av_replay_load(o.trace, p, &t, &err);
  if (!rc) rc = av_replay_run(&t, p, w, &gpu, vs, &r, o.timeline ? &tl : NULL, &err);
  if (!rc && o.timeline) rc = av_timeline_write_chrome(&tl, p, o.timeline, &err);
  if (!rc) {
    report(&o, p, &t, &r);
    if (o.timeline) printf("timeline: %s (%d CTAs)\n", o.timeline, tl.n);
    rc = compare_ctas(&o, cops, p, w, &gpu, vs, &t, &err);
  }
  av_timeline_free(&tl);
  av_replay_result_free(&r);
  av_replay_trace_free(&t);
  av_variants_destroy(vs);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc ? av_cli_fail(&err) : 0;
}
