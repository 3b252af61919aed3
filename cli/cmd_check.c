/* `anvil check PLAN.json`: the plan checker (every (request, token) covered exactly once,
 * merges complete) and the fp64 CPU reference (partial attention + log-sum-exp merge vs
 * direct attention per request); every launch's tile must be a compiled kernel variant.
 * Exit 1 when the plan is not exact or names a tile no kernel has. */
#include <stdio.h>
#include <stdlib.h>

#include "anvil/check.h"
#include "cli/args.h"
#include "cli/commands.h"

enum { OPT_SEED = 256, OPT_MAXREQ, OPT_DIM, OPT_TOL, OPT_NOREF };

static const av_cli_opt_t k_opts[] = {
    {"seed", OPT_SEED, "N", "seed of the random Q/K/V (default 1)"},
    {"max-requests", OPT_MAXREQ, "N", "compare at most N requests, spread evenly (default all)"},
    {"dim", OPT_DIM, "D", "head dim the reference computes with (default the plan's)"},
    {"tolerance", OPT_TOL, "X", "largest relative error accepted (default 1e-9)"},
    {"no-reference", OPT_NOREF, NULL, "run the checker only"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

static int parse_args(int argc, char **argv, anvil_check_options_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  int64_t x;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case 0:
        if (o->path)
          return av_cli_error(err, ANVIL_ERR_USAGE, "check", v, "unexpected second plan file");
        o->path = v;
        break;
      case OPT_SEED:
        if (av_cli_int_arg("check", "--seed", v, 0, INT64_MAX, &x, err)) return err->code;
        o->seed = (uint64_t)x;
        break;
      case OPT_MAXREQ:
        if (av_cli_int_arg("check", "--max-requests", v, 0, INT32_MAX, &x, err))
          return err->code;
        o->max_requests = (int32_t)x;
        break;
      case OPT_DIM:
        if (av_cli_int_arg("check", "--dim", v, 1, 4096, &x, err)) return err->code;
        o->dim = (int)x;
        break;
      case OPT_TOL: {
        char *end;
        o->tolerance = strtod(v, &end);
        if (end == v || *end || !(o->tolerance > 0))
          return av_cli_error(err, ANVIL_ERR_USAGE, "check", "--tolerance",
                              "'%s' is not valid; expected a positive number such as 1e-9", v);
        break;
      }
      case OPT_NOREF: o->no_reference = 1; break;
    }
  }
  return ANVIL_OK;  /* a missing plan file is anvil_check's to say */
}

static void print_exact(const anvil_check_exact_t *x, void *user) {
  const anvil_check_options_t *o = user;
  printf("check: %s: exact (%s, %d items, %d launches, %d requests, %d nodes)\n", o->path,
         x->scheduler, x->items, x->launches, x->requests, x->nodes);
}

static void print_reference(const anvil_check_reference_t *r, void *user) {
  const anvil_check_options_t *o = user;
  printf("reference: max rel err %.3e over %d (request, head) pairs (seed %llu, worst "
         "request %d)\n",
         r->max_rel_err, r->checked, (unsigned long long)o->seed, r->worst_request);
}

int av_cmd_check(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  anvil_check_options_t o;
  anvil_check_options_default(&o);
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("check PLAN.json [--seed N] [--max-requests N] [--tolerance X]",
                      "Proves a plan exact for its workload and runs it on the fp64 CPU "
                      "reference,\ncomparing with direct attention per request. Exit 1 when "
                      "the plan is not exact.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail_public(&err);
  o.on_exact = print_exact;
  o.on_reference = print_reference;
  anvil_error_t e;
  return anvil_check(&o, &o, &e) ? av_cli_fail_public(&e) : 0;
}
