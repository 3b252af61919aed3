/* `anvil list`: what an experiment file can name — GPU specs, schedulers and cost models,
 * each with its one-line description and parameters (type, default, range or choices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/gpu.h"
#include "core/json_util.h"

static const av_cli_opt_t k_opts[] = {{"help", 'h', NULL, "show this help"},
                                      {NULL, 0, NULL, NULL}};

static void print_params(const av_param_def_t *defs) {
  for (int i = 0; defs && defs[i].name; i++) {
    const av_param_def_t *d = &defs[i];
    char range[256] = "";
    switch (d->type) {
      case AV_PARAM_INT: snprintf(range, sizeof range, "int in [%.0f, %.0f]", d->min, d->max); break;
      case AV_PARAM_DOUBLE: snprintf(range, sizeof range, "number in [%g, %g]", d->min, d->max); break;
      case AV_PARAM_BOOL: snprintf(range, sizeof range, "true|false"); break;
      case AV_PARAM_STRING: snprintf(range, sizeof range, "text"); break;
      case AV_PARAM_ENUM: {
        char names[200];
        av_names_join(names, sizeof names, d->choices, 0);
        snprintf(range, sizeof range, "one of: %s", names);
        break;
      }
    }
    printf("      %-18s = %-10s %s (%s)\n", d->name, d->def[0] ? d->def : "\"\"",
           d->help ? d->help : "", range);
  }
}

static int list_gpus(av_error_t *err) {
  char **names = NULL;
  int n = 0;
  int rc = av_gpu_list(NULL, &names, &n, err);
  if (rc) return rc;
  printf("GPUs (%s/gpus, \"gpu\" in an experiment):\n", av_data_dir());
  for (int i = 0; i < n && !rc; i++) {
    av_gpu_t g;
    rc = av_gpu_load(names[i], NULL, &g, err);
    if (rc) break;
    /* measured (a profile and a calibrated spec from `anvil profile`) or the datasheet alone */
    char prof[1100];
    snprintf(prof, sizeof prof, "%s/profiles/%s.json", av_data_dir(), g.name);
    const int measured = access(prof, R_OK) == 0;
    printf("  %-16s sm_%d, %3d SMs, HBM %6.0f GB/s (model), L2 %3.0f MiB, %s  %s\n", g.name,
           g.sm_arch, g.sm_count, av_gpu_hbm_bw_GBps(&g), g.l2_bytes / (1024.0 * 1024.0),
           measured ? "profiled" : "spec only", g.description);
  }
  printf("  (profiled: profiles/<gpu>.json measured by `anvil profile`; spec only: datasheet\n"
         "   numbers, never measured here, so predictions carry the uncalibrated error of\n"
         "   docs/validation.md#uncalibrated)\n");
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

int av_cmd_list(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next(&ps, &v, &err)) != -1) {
    if (k == -2) return av_cli_fail(&err);
    if (k == 0) {
      av_error_set(&err, AV_ERR_USAGE, "list", v, "unexpected argument; list takes none");
      return av_cli_fail(&err);
    }
    if (k == 'h') {
      av_cli_print_help("list", "Lists the GPU specs, schedulers and cost models an experiment "
                                "file can name,\nwith their parameters and defaults.",
                        k_opts);
      return 0;
    }
  }
  if (list_gpus(&err)) return av_cli_fail(&err);
  int n;
  const av_scheduler_ops_t *const *sch = av_scheduler_all(&n);
  printf("\nschedulers (\"schedulers\": [{\"name\": ..., \"params\": {...}}]):\n");
  for (int i = 0; i < n; i++) {
    printf("  %-16s %s\n", sch[i]->name, sch[i]->description);
    print_params(sch[i]->params);
  }
  const av_costmodel_ops_t *const *cm = av_costmodel_all(&n);
  printf("\ncost models (\"cost_model\": {\"name\": ..., \"params\": {...}}):\n");
  for (int i = 0; i < n; i++) {
    printf("  %-16s %s\n", cm[i]->name, cm[i]->description);
    print_params(cm[i]->params);
  }
  printf("\nsimulator models (\"sim\"): engine (event-driven, default), waves (wave-count "
         "estimate)\n");
  return 0;
}
