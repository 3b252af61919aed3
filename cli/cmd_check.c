/* `anvil check PLAN.json`: the plan checker (every (request, token) covered exactly once,
 * merges complete) and the fp64 CPU reference (partial attention + log-sum-exp merge vs
 * direct attention per request); every launch's tile must be a compiled kernel variant.
 * Exit 1 when the plan is not exact or names a tile no kernel has. */
#include <stdio.h>
#include <stdlib.h>

#include "proofs/proofs.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/plan.h"

enum { OPT_SEED = 256, OPT_MAXREQ, OPT_DIM, OPT_TOL, OPT_NOREF };

static const av_cli_opt_t k_opts[] = {
    {"seed", OPT_SEED, "N", "seed of the random Q/K/V (default 1)"},
    {"max-requests", OPT_MAXREQ, "N", "compare at most N requests, spread evenly (default all)"},
    {"dim", OPT_DIM, "D", "head dim the reference computes with (default the plan's)"},
    {"tolerance", OPT_TOL, "X", "largest relative error accepted (default 1e-9)"},
    {"no-reference", OPT_NOREF, NULL, "run the checker only"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct check_opts {
  const char *path;
  av_reference_opts_t ref;
  double tol;
  int no_ref;
} check_opts_t;

static int parse_args(int argc, char **argv, check_opts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  int64_t x;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 0:
        if (o->path)
          return av_error_set(err, AV_ERR_USAGE, "check", v, "unexpected second plan file");
        o->path = v;
        break;
      case OPT_SEED:
        if (av_cli_parse_int("check", "--seed", v, 0, INT64_MAX, &x, err)) return err->code;
        o->ref.seed = (uint64_t)x;
        break;
      case OPT_MAXREQ:
        if (av_cli_parse_int("check", "--max-requests", v, 0, INT32_MAX, &x, err))
          return err->code;
        o->ref.max_requests = (int32_t)x;
        break;
      case OPT_DIM:
        if (av_cli_parse_int("check", "--dim", v, 1, 4096, &x, err)) return err->code;
        o->ref.dim = (int)x;
        break;
      case OPT_TOL: {
        char *end;
        o->tol = strtod(v, &end);
        if (end == v || *end || !(o->tol > 0))
          return av_error_set(err, AV_ERR_USAGE, "check", "--tolerance",
                              "'%s' is not valid; expected a positive number such as 1e-9", v);
        break;
      }
      case OPT_NOREF: o->no_ref = 1; break;
    }
  }
  if (!o->path)
    return av_error_set(err, AV_ERR_USAGE, "check", NULL,
                        "missing the plan file (usage: anvil check PLAN.json)");
  return AV_OK;
}

int av_cmd_check(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  check_opts_t o = {.ref = {.seed = 1}, .tol = 1e-9};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("check PLAN.json [--seed N] [--max-requests N] [--tolerance X]",
                      "Proves a plan exact for its workload and runs it on the fp64 CPU "
                      "reference,\ncomparing with direct attention per request. Exit 1 when "
                      "the plan is not exact.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  av_reference_result_t res = {0};
  av_variants_t *vs = NULL;
  rc = av_plan_load(o.path, &p, &w, &err);
  if (!rc) rc = av_plan_check(p, w, &err);
  if (!rc) rc = av_cli_load_variants(0, &vs, &err);
  if (!rc) rc = av_plan_check_tiles(p, vs, &err);
  if (!rc) {
    av_plan_stats_t ps;
    av_plan_stats(p, &ps);
    printf("check: %s: exact (%s, %d items, %d launches, %d requests, %d nodes)\n", o.path,
           p->scheduler, ps.items, ps.launches, w->n_requests, w->n_nodes);
  }
  if (!rc && !o.no_ref) rc = av_reference_run(p, w, &o.ref, &res, &err);
  if (!rc && !o.no_ref) {
    printf("reference: max rel err %.3e over %d (request, head) pairs (seed %llu, worst "
           "request %d)\n",
           res.max_rel_err, res.checked, (unsigned long long)o.ref.seed, res.worst_request);
    if (!(res.max_rel_err <= o.tol))
      rc = av_error_set(&err, AV_ERR_PLAN, o.path, NULL,
                        "the CPU reference differs from direct attention by %.3e (request "
                        "%d), more than the tolerance %.1e",
                        res.max_rel_err, res.worst_request, o.tol);
  }
  /* The checker and reference do not know the file; the user needs it in the message. */
  if (rc && !err.source[0]) snprintf(err.source, sizeof err.source, "%s", o.path);
  av_variants_destroy(vs);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc ? av_cli_fail(&err) : 0;
}
