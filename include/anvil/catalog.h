/* What an experiment file can name (`anvil list`): the GPU specs of the data directory,
 * the schedulers and the cost models, each with its parameters and their defaults. */
#ifndef ANVIL_CATALOG_H
#define ANVIL_CATALOG_H

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A GPU spec (gpus/<name>.json). */
typedef struct anvil_gpu_info {
  char name[64], description[128];
  int sm_arch, sm_count;
  double hbm_GBps;                /* the model's HBM bandwidth */
  double l2_bytes;
  int profiled;                   /* profiles/<name>.json exists (`anvil profile` measured it) */
} anvil_gpu_info_t;

/* The names of the GPU specs of the data directory, sorted; *names (caller frees each name
 * and the array with anvil_free) holds *n of them. */
int anvil_gpu_names(char ***names, int *n, anvil_error_t *err);
/* The spec `name` (a name of anvil_gpu_names, or a spec file's path). */
int anvil_gpu_info(const char *name, anvil_gpu_info_t *out, anvil_error_t *err);

enum { ANVIL_PARAM_INT = 0, ANVIL_PARAM_DOUBLE, ANVIL_PARAM_BOOL, ANVIL_PARAM_STRING,
       ANVIL_PARAM_ENUM };

typedef struct anvil_param_info {
  const char *name;
  int type;                       /* ANVIL_PARAM_* */
  const char *def;                /* the default, as text ("" for an empty string) */
  double min, max;                /* INT and DOUBLE: the inclusive range */
  const char *choices;            /* ENUM: the choices, ", " between them; else NULL */
  const char *help;               /* one line */
} anvil_param_info_t;

/* A scheduler or a cost model; borrowed for the callback's call only. */
typedef struct anvil_model_info {
  const char *name, *description;
  int n_params;
  const anvil_param_info_t *params;
} anvil_model_info_t;

/* The registered schedulers (`auto` among them) and cost models, in registry order. */
void anvil_schedulers_info(void (*fn)(const anvil_model_info_t *m, void *user), void *user);
void anvil_cost_models_info(void (*fn)(const anvil_model_info_t *m, void *user), void *user);

#ifdef __cplusplus
}
#endif
#endif
