/* The benchmarks' option parsing (bench/cli_util.h): cli/args.h with its errors as
 * av_error_t values, and the loaders of pipeline/models.h. */
#include "cli/cli_util.h"

#include <stdio.h>

/* The one line of an error of the public API as an av_error_t: formatted and escaped
 * already, so formatting it again leaves it as it is. */
static int library_error(const anvil_error_t *e, av_error_t *err) {
  return av_error_set(err, e->code, NULL, NULL, "%s", e->message);
}

int av_cli_next(av_cli_parser_t *ps, const char **value, av_error_t *err) {
  anvil_error_t e;
  av_cli_error_clear(&e);
  int k = av_cli_next_arg(ps, value, &e);
  if (k == -2) library_error(&e, err);
  return k;
}

int av_cli_parse_int(const char *cmd, const char *opt, const char *text, int64_t min,
                     int64_t max, int64_t *out, av_error_t *err) {
  anvil_error_t e;
  av_cli_error_clear(&e);
  return av_cli_int_arg(cmd, opt, text, min, max, out, &e) ? library_error(&e, err) : AV_OK;
}

int av_cli_fail(const av_error_t *err) {
  char buf[1700];
  av_error_format(err, buf, sizeof buf);
  fprintf(stderr, "anvil: %s\n", buf[0] ? buf : "unknown error");
  int cls = av_error_exit_class(err ? err->code : AV_ERR_INTERNAL);
  return cls ? cls : 2;
}

int av_cli_load_gpu(const char *cmd, const char *name, av_gpu_t *out, av_error_t *err) {
  return av_models_load_gpu(cmd, name, out, err);
}

int av_cli_cost_create(const av_costmodel_ops_t *ops, const av_params_t *params,
                       const av_gpu_t *gpu, const av_heads_t *h, const av_variants_t *vs,
                       av_costmodel_t **out, av_error_t *err) {
  return av_models_cost_create(ops, params, gpu, h, vs, out, err);
}
