/* The simulator's front door: model names, argument checks common to both models, dispatch
 * to the waves model (sim_waves.c) or the event-driven engine (engine.c), and results. */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "sim/sim_internal.h"

typedef int (*sim_model_fn)(const av_sim_config_t *, const av_sim_input_t *, av_sim_result_t *,
                            av_timeline_t *, av_error_t *);

static const struct {
  const char *name;
  av_sim_model_t model;
  sim_model_fn run;
} sim_models[] = {
    {"waves", AV_SIM_WAVES, av__sim_waves},
    {"engine", AV_SIM_ENGINE, av__sim_engine},
    {"engine_lines", AV_SIM_ENGINE_LINES, av__sim_engine},
};
#define N_SIM_MODELS (sizeof sim_models / sizeof sim_models[0])

int av_sim_model_from_name(const char *name, av_sim_model_t *out) {
  for (size_t i = 0; i < N_SIM_MODELS; i++)
    if (name && strcmp(name, sim_models[i].name) == 0) {
      *out = sim_models[i].model;
      return AV_OK;
    }
  return AV_ERR_NAME;
}

const char *av_sim_model_name(av_sim_model_t m) {
  for (size_t i = 0; i < N_SIM_MODELS; i++)
    if (sim_models[i].model == m) return sim_models[i].name;
  return "?";
}

void av_sim_result_free(av_sim_result_t *r) {
  if (!r) return;
  free(r->launches);
  memset(r, 0, sizeof *r);
}

int av_sim_run(const av_sim_config_t *cfg, const av_sim_input_t *in, av_sim_result_t *out,
               av_timeline_t *tl, av_error_t *err) {
  memset(out, 0, sizeof *out);
  if (!cfg || !in || !in->plan || !in->workload || !in->gpu)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL,
                        "av_sim_run needs a config, a plan, a workload and a GPU");
  if (cfg->record_timeline && !tl)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL,
                        "record_timeline is set but no timeline was given");
  sim_model_fn run = NULL;
  for (size_t i = 0; i < N_SIM_MODELS; i++)
    if (sim_models[i].model == cfg->model) run = sim_models[i].run;
  if (!run) {
    const char *names[N_SIM_MODELS + 1];
    for (size_t i = 0; i < N_SIM_MODELS; i++) names[i] = sim_models[i].name;
    names[N_SIM_MODELS] = NULL;
    char list[128];
    av_names_join(list, sizeof list, names, 0);
    return av_error_set(err, AV_ERR_NAME, NULL, "sim", "unknown simulator model %d; expected "
                        "one of: %s", (int)cfg->model, list);
  }
  int rc = run(cfg, in, out, tl, err);
  if (rc) av_sim_result_free(out);
  return rc;
}

int av_sim_model_lookup(const char *name, const char *source, const char *path,
                        av_sim_model_t *out, av_error_t *err) {
  if (av_sim_model_from_name(name, out) == AV_OK) return AV_OK;
  const char *names[N_SIM_MODELS + 1];
  for (size_t i = 0; i < N_SIM_MODELS; i++) names[i] = sim_models[i].name;
  names[N_SIM_MODELS] = NULL;
  char list[128];
  av_names_join(list, sizeof list, names, 0);
  return av_error_set(err, AV_ERR_NAME, source, path,
                      "unknown simulator model '%s'; expected one of: %s", name ? name : "",
                      list);
}
