/* What an experiment file can name (include/anvil/catalog.h): the GPU specs, schedulers and
 * cost models of the registries, as the public structs. */
#include "anvil/catalog.h"

#include <stdio.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "core/json_util.h"
#include "schedulers/scheduler.h"
#include "selectors/selectors.h"

int anvil_gpu_names(char ***names, int *n, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int rc = av_gpu_list(NULL, names, n, &e);
  return av__api_error(err, &e, rc);
}

int anvil_gpu_info(const char *name, anvil_gpu_info_t *out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_gpu_t g;
  int rc = av_gpu_load(name, NULL, &g, &e);
  if (!rc) {
    /* measured (a profile and a calibrated spec from `anvil profile`) or the datasheet alone */
    char prof[1100];
    snprintf(prof, sizeof prof, "%s/profiles/%s.json", av_data_dir(), g.name);
    *out = (anvil_gpu_info_t){.sm_arch = g.sm_arch, .sm_count = g.sm_count,
                              .hbm_GBps = av_gpu_hbm_bw_GBps(&g), .l2_bytes = g.l2_bytes,
                              .profiled = access(prof, R_OK) == 0};
    snprintf(out->name, sizeof out->name, "%s", g.name);
    snprintf(out->description, sizeof out->description, "%s", g.description);
  }
  return av__api_error(err, &e, rc);
}

static int public_type(av_param_type_t t) {
  switch (t) {
    case AV_PARAM_INT: return ANVIL_PARAM_INT;
    case AV_PARAM_DOUBLE: return ANVIL_PARAM_DOUBLE;
    case AV_PARAM_BOOL: return ANVIL_PARAM_BOOL;
    case AV_PARAM_ENUM: return ANVIL_PARAM_ENUM;
    default: return ANVIL_PARAM_STRING;
  }
}

/* One table's parameters as public infos, then fn. */
static void hand_model(const char *name, const char *description, const av_param_def_t *defs,
                       void (*fn)(const anvil_model_info_t *m, void *user), void *user) {
  anvil_param_info_t p[AV_MAX_PARAMS];
  char choices[AV_MAX_PARAMS][200];
  int n = 0;
  for (; defs && defs[n].name && n < AV_MAX_PARAMS; n++) {
    const av_param_def_t *d = &defs[n];
    if (d->type == AV_PARAM_ENUM) av_names_join(choices[n], sizeof choices[n], d->choices, 0);
    p[n] = (anvil_param_info_t){.name = d->name, .type = public_type(d->type), .def = d->def,
                                .min = d->min, .max = d->max, .help = d->help ? d->help : "",
                                .choices = d->type == AV_PARAM_ENUM ? choices[n] : NULL};
  }
  anvil_model_info_t m = {.name = name, .description = description, .n_params = n,
                          .params = p};
  fn(&m, user);
}

void anvil_schedulers_info(void (*fn)(const anvil_model_info_t *m, void *user), void *user) {
  av_selectors_register(NULL);  /* fails only if a selector's name is taken: then it is left out */
  int n;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  for (int i = 0; i < n; i++) hand_model(all[i]->name, all[i]->description, all[i]->params, fn, user);
}

void anvil_cost_models_info(void (*fn)(const anvil_model_info_t *m, void *user), void *user) {
  int n;
  const av_costmodel_ops_t *const *all = av_costmodel_all(&n);
  for (int i = 0; i < n; i++) hand_model(all[i]->name, all[i]->description, all[i]->params, fn, user);
}
