/* The cost models anvil knows, by name. Adding one is one C file plus one line here. */
#include <stdio.h>
#include <string.h>

#include "costmodels/costmodel.h"

extern const av_costmodel_ops_t av_cost_roofline, av_cost_profile, av_cost_linear,
    av_cost_compute, av_cost_memory;

static const av_costmodel_ops_t *const registry[] = {
    &av_cost_roofline, &av_cost_profile, &av_cost_linear, &av_cost_compute, &av_cost_memory,
};
enum { N_MODELS = sizeof registry / sizeof registry[0] };

const av_costmodel_ops_t *av_costmodel_find(const char *name) {
  for (int i = 0; name && i < N_MODELS; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const av_costmodel_ops_t *const *av_costmodel_all(int *n) {
  if (n) *n = N_MODELS;
  return registry;
}

int av_costmodel_lookup(const char *name, const char *source, const char *path,
                        const av_costmodel_ops_t **out, av_error_t *err) {
  const av_costmodel_ops_t *ops = av_costmodel_find(name);
  if (out) *out = ops;
  if (ops) return AV_OK;
  const char *names[N_MODELS];
  for (int i = 0; i < N_MODELS; i++) names[i] = registry[i]->name;
  char list[512];
  av_names_join(list, sizeof list, names, N_MODELS);
  return av_error_set(err, AV_ERR_NAME, source, path,
                      "unknown cost model '%s'; expected one of: %s", name ? name : "", list);
}
