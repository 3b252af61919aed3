/* `anvil merge DIR... --out DIR`: the result directories of the shards of one experiment
 * (`anvil run --shard I/N`) become one result set, byte-identical to a single run
 * (anvil_merge, include/anvil/results.h); the table goes to stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/results_print.h"

enum { MAX_DIRS = 4096 };

static const av_cli_opt_t k_opts[] = {
    {"out", 'o', "DIR", "the merged results directory (required)"},
    {"experiment", 'e', "EXP.json", "the experiment file (default: the path the journals name)"},
    {"quiet", 'q', NULL, "print only where the results went and the summary line"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct merge_args {
  const char *dirs[MAX_DIRS];
  int n_dirs;
  const char *out, *exp;
  int quiet;
} merge_args_t;

static int parse_args(int argc, char **argv, merge_args_t *a, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (a->n_dirs == MAX_DIRS)
          return av_cli_error(err, ANVIL_ERR_USAGE, "merge", v, "more than %d directories",
                              MAX_DIRS);
        a->dirs[a->n_dirs++] = v;
        break;
      case 'o': a->out = v; break;
      case 'e': a->exp = v; break;
      case 'q': a->quiet = 1; break;
      case 'h': return -1;
    }
  }
  return ANVIL_OK;  /* what is missing is anvil_merge's to say */
}

int av_cmd_merge(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  merge_args_t a;
  memset(&a, 0, sizeof a);
  int rc = parse_args(argc, argv, &a, &err);
  if (rc == -1) {
    av_cli_print_help("merge DIR... --out DIR [--experiment EXP.json]",
                      "Combines the result directories of an experiment's shards (anvil run "
                      "--shard I/N)\ninto one result set, byte-identical to a single run. "
                      "Guide: docs/studies.md.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail_public(&err);
  av_cli_results_print_t table = {.quiet = a.quiet};
  anvil_merge_options_t m = {.dirs = a.dirs, .n_dirs = a.n_dirs, .out = a.out,
                             .experiment = a.exp, .on_head = av_cli_results_head};
  anvil_error_t e;
  if (anvil_merge(&m, av_cli_results_row, &table, &e)) return av_cli_fail_public(&e);
  av_cli_results_end(&table);
  return table.failed ? 1 : 0;
}
