/* Planning a batch into a file (`anvil plan`): one batch (a workload spec file or B/L
 * notation) planned by one scheduler for a GPU, its work held to the default limits first,
 * the plan proved exact and written with its workload as JSON. */
#ifndef ANVIL_PLAN_FILE_H
#define ANVIL_PLAN_FILE_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the executor issues a plan's launches. */
enum { ANVIL_LAUNCH_STREAMS = 0, ANVIL_LAUNCH_GRAPH = 1, ANVIL_LAUNCH_PDL = 2 };
/* "streams", "graph", "pdl" as the values above; -1 for anything else. */
int anvil_launch_from_name(const char *name);

typedef struct anvil_plan_file_options {
  const char *spec, *levels;      /* exactly one: a workload spec file, or "B=1,4 L=128,32" */
  const char *scheduler;          /* required */
  const char *const *params;      /* the scheduler's "KEY=VALUE" each */
  int n_params;
  const char *cost_model;         /* NULL: "roofline" */
  const char *const *cost_params;
  int n_cost_params;
  const char *gpu;                /* NULL: "H200-SXM" */
  int q_heads, kv_heads, head_dim;  /* when the spec has none; 0: 32, 8, 128 */
  int no_limits;                  /* plan over the limits */
  int launch;                     /* ANVIL_LAUNCH_* */
  const char *out;                /* the plan file (required) */
} anvil_plan_file_options_t;

/* What was written. */
typedef struct anvil_plan_file_result {
  char scheduler[64], params[256], workload[128], gpu[64];
  int32_t items, launches, streams, partial_slots;
} anvil_plan_file_result_t;

/* Plans, proves and writes; fills *out (may be NULL). Errors are those `anvil plan` prints. */
int anvil_plan_file(const anvil_plan_file_options_t *o, anvil_plan_file_result_t *out,
                    anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
