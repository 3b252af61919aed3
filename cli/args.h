/* Helpers every `anvil` subcommand shares: a small long/short option parser that reports
 * mistakes as errors of the public API (ANVIL_ERR_USAGE, exit 1) instead of printing, the
 * error maker with the library's one-line form, and the command-line forms of heads and of
 * -p / -c assignments. */
#ifndef AV_CLI_ARGS_H
#define AV_CLI_ARGS_H

#include <stdint.h>

#include "anvil/error.h"

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
int av_cli_next_arg(av_cli_parser_t *ps, const char **value, anvil_error_t *err);

/* Prints "usage: anvil <usage>", the description and the option table to stdout. */
void av_cli_print_help(const char *usage, const char *description, const av_cli_opt_t *opts);

/* Records the first error into err (a later one leaves it as it is): "source: path: message"
 * escaped, as the library writes its one line; returns code. */
int av_cli_error(anvil_error_t *err, int code, const char *source, const char *path,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void av_cli_error_clear(anvil_error_t *err);

/* An integer option value in [min, max] (ANVIL_ERR_USAGE naming the option otherwise). */
int av_cli_int_arg(const char *cmd, const char *opt, const char *text, int64_t min,
                   int64_t max, int64_t *out, anvil_error_t *err);

/* Query and KV heads, head dim (the defaults a command starts from). */
typedef struct av_cli_heads {
  int hq, hkv, head_dim;
} av_cli_heads_t;
/* "32,8" or "32/8" -> hq, hkv (the head dim is left as it is). */
int av_cli_parse_heads(const char *cmd, const char *text, av_cli_heads_t *h,
                       anvil_error_t *err);

/* The scheduler and cost model a planning command names (--scheduler, --cost-model) and
 * their repeatable -p / -c KEY=VALUE assignments, as parsed. */
#define AV_CLI_MAX_ASSIGN 32
typedef struct av_cli_model_args {
  const char *sched, *cost;
  const char *sp[AV_CLI_MAX_ASSIGN], *cp[AV_CLI_MAX_ASSIGN];
  int n_sp, n_cp;
} av_cli_model_args_t;

/* Records the value of -p (key 'p') or -c (any other key); ANVIL_ERR_USAGE naming the option
 * past AV_CLI_MAX_ASSIGN of one kind. */
int av_cli_add_assign(const char *cmd, int key, const char *value, av_cli_model_args_t *a,
                      anvil_error_t *err);

#endif
