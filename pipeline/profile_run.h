/* `anvil profile` as a library call (docs/validation.md): identifies the CUDA device,
 * measures it with the profiler (profiler/profile.h) and writes the profile (the `profile`
 * cost model's table), the calibrated spec (`anvil validate` predicts with it) and the raw
 * details, or adds one part (CUDA-graph or programmatic-dependent launch figures, missing
 * tiles) to a profile that exists. Nothing is written unless every measurement succeeded;
 * what was measured is handed over once written; nothing is printed. */
#ifndef AV_PIPELINE_PROFILE_RUN_H
#define AV_PIPELINE_PROFILE_RUN_H

#include "core/error.h"
#include "core/gpu.h"
#include "profile_format/profile_format.h"

/* What a run measures. */
enum { AV_PROFILE_FULL = 0, AV_PROFILE_TILES = 1, AV_PROFILE_GRAPH = 2, AV_PROFILE_PDL = 3 };

/* A written profile: p's figures (those of the mode), the device's spec g, the file out. */
typedef void (*av_profile_done_fn)(int mode, const av_profile_t *p, const av_gpu_t *g,
                                   const char *out, void *user);

typedef struct av_profile_run_opts {
  const char *out;           /* NULL: profiles/<gpu>.json */
  const char *gpu_spec;      /* this device's spec when it is not recognised */
  const char *command;       /* the command line, recorded in the files */
  int quick, verbose, runs;
  int graph_only, pdl_only, add_tiles;  /* at most one: add that part to the profile `out` */
  void (*note)(const char *text, void *user);  /* may be NULL */
  av_profile_done_fn done;   /* may be NULL */
} av_profile_run_opts_t;

/* Measures and writes; callbacks get `user`. Messages name "profile" and the option a user
 * gave, as the `anvil` program prints them. */
int av_profile_run(const av_profile_run_opts_t *o, void *user, av_error_t *err);

#endif
