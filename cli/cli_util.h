/* Helpers every `anvil` subcommand shares: a small long/short option parser that reports
 * mistakes as av_error_t values (AV_ERR_USAGE, exit 1) instead of printing, the one-line
 * error printer, parsing of the command-line forms of heads and of -p / -c assignments, and,
 * for the benchmarks, the GPU spec and a cost model instance (pipeline/models.h). */
#ifndef AV_CLI_UTIL_H
#define AV_CLI_UTIL_H

#include <jansson.h>
#include <stdint.h>

#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/variants.h"
#include "core/workload.h"
#include "pipeline/models.h"

/* One option of a subcommand. `key` is what the parser returns for it (a short letter or
 * any int > 255 for long-only options); `arg` names the value (NULL for flags). */
typedef struct av_cli_opt {
  const char *name;     /* long form without dashes, e.g. "out" */
  int key;              /* 'o', or a value > 255 when there is no short form */
  const char *arg;      /* "DIR", or NULL for a flag */
  const char *help;     /* one line for --help */
} av_cli_opt_t;         /* tables end with an entry whose name is NULL */

/* Walks argv[1..argc) (argv[0] is the subcommand). Call repeatedly: returns the option's key
 * and sets *value (NULL for flags), returns 0 for a positional argument (in *value), -1 at
 * the end, or -2 on a usage error (err filled: source = the command name). "--" ends
 * options; "--name=value" and "-kvalue" are accepted. */
typedef struct av_cli_parser {
  int argc, i;
  char **argv;
  const av_cli_opt_t *opts;
  int only_positional;
} av_cli_parser_t;
void av_cli_parser_init(av_cli_parser_t *ps, int argc, char **argv, const av_cli_opt_t *opts);
int av_cli_next(av_cli_parser_t *ps, const char **value, av_error_t *err);

/* Prints "usage: anvil <usage>", the description and the option table to stdout. */
void av_cli_print_help(const char *usage, const char *description, const av_cli_opt_t *opts);

/* An integer option value in [min, max] (AV_ERR_USAGE naming the option otherwise). */
int av_cli_parse_int(const char *cmd, const char *opt, const char *text, int64_t min,
                     int64_t max, int64_t *out, av_error_t *err);

/* "32,8" or "32/8" -> hq, hkv (head dim and dtype are left as they are). */
int av_cli_parse_heads(const char *cmd, const char *text, av_heads_t *h, av_error_t *err);

/* Loads the GPU spec `name` for a command's --gpu option (messages name the option). */
int av_cli_load_gpu(const char *cmd, const char *name, av_gpu_t *out, av_error_t *err);

/* The scheduler and cost model a planning command names (--scheduler, --cost-model) and
 * their repeatable -p / -c KEY=VALUE assignments, as parsed. */
#define AV_CLI_MAX_ASSIGN 32
typedef struct av_cli_model_args {
  const char *sched, *cost;
  const char *sp[AV_CLI_MAX_ASSIGN], *cp[AV_CLI_MAX_ASSIGN];
  int n_sp, n_cp;
} av_cli_model_args_t;

/* Records the value of -p (key 'p') or -c (any other key); AV_ERR_USAGE naming the option
 * past AV_CLI_MAX_ASSIGN of one kind. */
int av_cli_add_assign(const char *cmd, int key, const char *value, av_cli_model_args_t *a,
                      av_error_t *err);

/* A cost model instance (pipeline/models.h av_models_cost_create), for the benchmarks. */
int av_cli_cost_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                       const av_gpu_t *gpu, const av_heads_t *h, const av_variants_t *vs,
                       av_costmodel_t **out, av_error_t *err);

#endif
