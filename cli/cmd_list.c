/* `anvil list`: what an experiment file can name — GPU specs, schedulers and cost models,
 * each with its one-line description and parameters (type, default, range or choices). */
#include <stdio.h>

#include "anvil/anvil.h"
#include "anvil/catalog.h"
#include "cli/args.h"
#include "cli/commands.h"

static const av_cli_opt_t k_opts[] = {{"help", 'h', NULL, "show this help"},
                                      {NULL, 0, NULL, NULL}};

static void print_params(const anvil_model_info_t *m) {
  for (int i = 0; i < m->n_params; i++) {
    const anvil_param_info_t *d = &m->params[i];
    char range[256] = "";
    switch (d->type) {
      case ANVIL_PARAM_INT: snprintf(range, sizeof range, "int in [%.0f, %.0f]", d->min, d->max); break;
      case ANVIL_PARAM_DOUBLE: snprintf(range, sizeof range, "number in [%g, %g]", d->min, d->max); break;
      case ANVIL_PARAM_BOOL: snprintf(range, sizeof range, "true|false"); break;
      case ANVIL_PARAM_STRING: snprintf(range, sizeof range, "text"); break;
      case ANVIL_PARAM_ENUM: snprintf(range, sizeof range, "one of: %s", d->choices); break;
    }
    printf("      %-18s = %-10s %s (%s)\n", d->name, d->def[0] ? d->def : "\"\"", d->help,
           range);
  }
}

static void print_model(const anvil_model_info_t *m, void *user) {
  (void)user;
  printf("  %-16s %s\n", m->name, m->description);
  print_params(m);
}

static int list_gpus(anvil_error_t *err) {
  char **names = NULL;
  int n = 0;
  int rc = anvil_gpu_names(&names, &n, err);
  if (rc) return rc;
  printf("GPUs (%s/gpus, \"gpu\" in an experiment):\n", anvil_data_dir());
  for (int i = 0; i < n && !rc; i++) {
    anvil_gpu_info_t g;
    rc = anvil_gpu_info(names[i], &g, err);
    if (rc) break;
    printf("  %-16s sm_%d, %3d SMs, HBM %6.0f GB/s (model), L2 %3.0f MiB, %s  %s\n", g.name,
           g.sm_arch, g.sm_count, g.hbm_GBps, g.l2_bytes / (1024.0 * 1024.0),
           g.profiled ? "profiled" : "spec only", g.description);
  }
  printf("  (profiled: profiles/<gpu>.json measured by `anvil profile`; spec only: datasheet\n"
         "   numbers, never measured here, so predictions carry the uncalibrated error of\n"
         "   docs/validation.md#uncalibrated)\n");
  for (int i = 0; i < n; i++) anvil_free(names[i]);
  anvil_free(names);
  return rc;
}

int av_cmd_list(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next_arg(&ps, &v, &err)) != -1) {
    if (k == -2) return av_cli_fail_public(&err);
    if (k == 0) {
      av_cli_error(&err, ANVIL_ERR_USAGE, "list", v, "unexpected argument; list takes none");
      return av_cli_fail_public(&err);
    }
    if (k == 'h') {
      av_cli_print_help("list", "Lists the GPU specs, schedulers and cost models an experiment "
                                "file can name,\nwith their parameters and defaults.",
                        k_opts);
      return 0;
    }
  }
  anvil_error_t e;
  if (list_gpus(&e)) return av_cli_fail_public(&e);
  printf("\nschedulers (\"schedulers\": [{\"name\": ..., \"params\": {...}}]):\n");
  anvil_schedulers_info(print_model, NULL);
  printf("\ncost models (\"cost_model\": {\"name\": ..., \"params\": {...}}):\n");
  anvil_cost_models_info(print_model, NULL);
  printf("\nsimulator models (\"sim\"): engine (event-driven, default), waves (wave-count "
         "estimate)\n");
  return 0;
}
