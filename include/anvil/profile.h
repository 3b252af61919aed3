/* Profiling this GPU (`anvil profile`, docs/validation.md): copy bandwidth, launch overhead,
 * every kernel variant's occupancy, a lone CTA's rate and per variant the single-CTA times
 * C(n_q, n), written as the profile (the `profile` cost model's table), a calibrated GPU spec
 * and the raw details; or one part added to a profile that exists. Needs a CUDA device.
 * What was written is handed over: its figures, then each variant measured. */
#ifndef ANVIL_PROFILE_H
#define ANVIL_PROFILE_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a run measured (anvil_profile_summary_t.mode). */
enum { ANVIL_PROFILE_FULL = 0, ANVIL_PROFILE_TILES = 1, ANVIL_PROFILE_GRAPH = 2,
       ANVIL_PROFILE_PDL = 3 };

/* The written profile's figures (those its mode measured); borrowed for the call only. */
typedef struct anvil_profile_summary {
  int mode;
  const char *gpu, *device;         /* the GPU spec's name, the driver's device name */
  const char *out;                  /* the profile file written or added to */
  int variants;                     /* kernel variants measured */
  double copy_GBps, launch_us, launch_r2;       /* FULL */
  double read_GBps;                             /* FULL: the read-only stream (the floor's) */
  double lone_GBps, cta_fixed_us, lone_r2, tensor_tflops;  /* FULL; tensor 0: none */
  double graph_gap_us, graph_join_us, graph_tail_us;        /* GRAPH */
  double pdl_join_us;                                       /* PDL */
} anvil_profile_summary_t;

/* One kernel variant measured (FULL and TILES); borrowed for the callback's call only. */
typedef struct anvil_profile_variant {
  const char *kind, *dtype;         /* "partial", "fp16", ... */
  int m_rows, n_tokens, head_dim;
  int occupancy_measured, occupancy_predicted;  /* CTAs per SM: seen, and core/occupancy */
  int32_t n_q;                      /* the largest measured cell C(n_q, kv_tokens) */
  int64_t kv_tokens;
  double time_us;
} anvil_profile_variant_t;
/* Returns 0 to go on; any other value stops, and the call returns ANVIL_ERR_USAGE. */
typedef int (*anvil_profile_variant_fn)(const anvil_profile_variant_t *v, void *user);

typedef struct anvil_profile_options {
  const char *out;                  /* NULL: profiles/<gpu>.json */
  const char *gpu_spec;             /* this device's GPU spec when it is not recognised */
  const char *command;              /* recorded in the files; NULL: none */
  int quick;                        /* fewer grid points */
  int verbose;                      /* the profiler's progress lines on stderr */
  int runs;                         /* traced runs per plan (mean); 0: 5 */
  int graph_only, pdl_only, add_tiles;  /* at most one: add that part to the profile `out` */
  void (*on_note)(const char *text, void *user);   /* may be NULL */
  void (*on_summary)(const anvil_profile_summary_t *s, void *user);  /* may be NULL */
} anvil_profile_options_t;

/* Measures and writes, then calls on_summary and on_variant (may be NULL) for each variant
 * measured; all callbacks get `user`. Errors are those `anvil profile` prints. */
int anvil_profile(const anvil_profile_options_t *o, anvil_profile_variant_fn on_variant,
                  void *user, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
