/* The option parsing of the `anvil bench` benchmarks, with errors as the library's av_error_t
 * values: the parser and help of cli/args.h, the one-line error printer, and the GPU spec
 * and cost model a benchmark loads (pipeline/models.h). The benchmarks include it as
 * "cli/cli_util.h", the name it had when they lived in cli/. */
#ifndef AV_BENCH_CLI_UTIL_H
#define AV_BENCH_CLI_UTIL_H

#include <jansson.h>
#include <stdint.h>

#include "cli/args.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/variants.h"
#include "core/workload.h"
#include "pipeline/models.h"

/* av_cli_next_arg and av_cli_int_arg of cli/args.h, their errors as av_error_t. */
int av_cli_next(av_cli_parser_t *ps, const char **value, av_error_t *err);
int av_cli_parse_int(const char *cmd, const char *opt, const char *text, int64_t min,
                     int64_t max, int64_t *out, av_error_t *err);

/* Prints the error as every command does ("anvil: <source>: <path>: <message>") to stderr
 * and returns its exit class (1 or 2). */
int av_cli_fail(const av_error_t *err);

/* The GPU spec `name` for a benchmark's --gpu option (messages name the option). */
int av_cli_load_gpu(const char *cmd, const char *name, av_gpu_t *out, av_error_t *err);

/* A cost model instance (pipeline/models.h av_models_cost_create). */
int av_cli_cost_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                       const av_gpu_t *gpu, const av_heads_t *h, const av_variants_t *vs,
                       av_costmodel_t **out, av_error_t *err);

#endif
