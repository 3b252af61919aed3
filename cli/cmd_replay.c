/* `anvil replay`: replays a measured per-CTA trace (format in sim/replay.h) of a plan through
 * the simulator's dispatch model — measured durations fixed, placement simulated — and
 * reports how far the replayed makespan is from the measured one: the dispatch model's error
 * alone, separated from the cost model's. Then it predicts the same plan with a cost model
 * and sets the predicted CTA durations beside the measured ones, launch by launch: the cost
 * model's error, located. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/replay.h"
#include "cli/args.h"
#include "cli/commands.h"

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

static int parse(int argc, char **argv, replay_opts_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case OPT_PLAN: o->plan = v; break;
      case OPT_TRACE: o->trace = v; break;
      case 'g': o->gpu = v; break;
      case OPT_TIMELINE: o->timeline = v; break;
      case OPT_COST: o->cost = v, o->cost_given = 1; break;
      default:
        return av_cli_error(err, ANVIL_ERR_USAGE, "replay", v ? v : "",
                            "unexpected argument; see anvil replay --help");
    }
  }
  return ANVIL_OK;  /* what is missing is anvil_replay's to say */
}

typedef struct replay_print {
  const replay_opts_t *o;
  int rows;
} replay_print_t;

static void print_report(const anvil_replay_report_t *r, void *user) {
  const replay_opts_t *o = ((const replay_print_t *)user)->o;
  printf("plan: %s (%d items, %d launches, %d KV heads)\n", o->plan, r->plan_items,
         r->plan_launches, r->kv_heads);
  printf("trace: %s (%d CTA records, %d merge CTAs) recorded on %s\n", o->trace,
         r->cta_records, r->merge_records, r->trace_gpu);
  printf("merge phase: %s\n", r->merge_records ? "measured (median merge-CTA duration)"
                                               : "modelled (no merge records)");
  for (int32_t l = 0; l < r->n_launches; l++) {
    const anvil_replay_launch_t *L = &r->launches[l];
    printf("  launch %d: %d CTAs, %d per SM, %.2f waves, replayed %.2f..%.2f us\n", l, L->ctas,
           L->ctas_per_sm, L->waves, L->start_us, L->end_us);
  }
  printf("SM busy %.1f%%, bubble %.1f%%\n", 100 * r->sm_busy_frac, 100 * r->bubble_frac);
  printf("measured makespan: %.3f us\n", r->measured_us);
  printf("replayed makespan: %.3f us\n", r->replayed_us);
  printf("replay_rel_err=%+.4f\n", r->rel_err);
  if (o->timeline) printf("timeline: %s (%d CTAs)\n", o->timeline, r->timeline_ctas);
}

static void print_cta_header(const replay_opts_t *o, double predicted_us) {
  printf("predicted makespan (%s): %.3f us\n", o->cost, predicted_us);
  printf("CTA durations, predicted by the %s cost model and measured (us):\n", o->cost);
  printf("  %-8s %-16s %6s %10s %10s %8s %10s %10s\n", "launch", "tile", "CTAs", "predicted",
         "measured", "meas/pred", "pred_p90", "meas_p90");
}

/* The cost model's CTA durations beside the measured ones, one row per launch. */
static int print_cta_row(const anvil_replay_row_t *c, void *user) {
  replay_print_t *rp = user;
  if (!rp->rows) print_cta_header(rp->o, c->predicted_makespan_us);
  char name[16], tile[40];
  if (c->launch < 0) {
    snprintf(name, sizeof name, "merge");
    snprintf(tile, sizeof tile, "-");
  } else {
    snprintf(name, sizeof name, "%d", c->launch);
    snprintf(tile, sizeof tile, "m%d n%d w%d", c->m_rows, c->n_tokens, c->warps);
  }
  rp->rows++;
  printf("  %-8s %-16s %6d %10.2f %10.2f %8.3f %10.2f %10.2f\n", name, tile, c->ctas,
         c->pred_median_us, c->meas_median_us, c->ratio_median, c->pred_p90_us, c->meas_p90_us);
  return 0;
}

int av_cmd_replay(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
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
  if (rc) return av_cli_fail_public(&err);
  anvil_replay_options_t r = {.plan = o.plan, .trace = o.trace, .gpu = o.gpu,
                               .timeline = o.timeline,
                               .cost_model = o.cost_given ? o.cost : NULL,
                               .on_report = print_report};
  replay_print_t rp = {.o = &o};
  anvil_replay_summary_t sum;
  anvil_error_t e;
  rc = anvil_replay(&r, print_cta_row, &rp, &sum, &e);
  if (rc) return av_cli_fail_public(&e);
  if (!sum.compared) {
    printf("CTA durations: not compared (%s); name a --cost-model to compare\n",
           sum.not_compared);
    return 0;
  }
  if (!rp.rows) print_cta_header(&o, sum.predicted_us);
  printf("  (items: median of each CTA's measured / predicted; merge: the medians' ratio)\n");
  return 0;
}
