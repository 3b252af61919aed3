/* Running an experiment's plans on the GPU (`anvil exec`): the device identified and its
 * GPU spec picked (the experiment must list it), every batch's paged KV cache built once,
 * each scheduler's plan verified against fp64 attention and timed; each row handed over as
 * it finishes, the results JSON and CSV written once everything ran. Needs a CUDA device. */
#ifndef ANVIL_EXEC_H
#define ANVIL_EXEC_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How L2 is evicted before each timed run, and how the kernels copy KV. */
enum { ANVIL_L2_FLUSH_NONE = 0, ANVIL_L2_FLUSH_WRITE = 1, ANVIL_L2_FLUSH_READ = 2 };
enum { ANVIL_KV_COPY_EXPERIMENT = -1, ANVIL_KV_COPY_TMA = 0, ANVIL_KV_COPY_CP_ASYNC = 1 };
/* "none", "write", "read" / "tma", "cp_async" as the values above; -1 for anything else. */
int anvil_l2_flush_from_name(const char *name);
int anvil_kv_copy_from_name(const char *name);

#define ANVIL_AUTOTUNE_MAX_K 16     /* the most candidates autotune measures */

/* A candidate autotune measured for auto's row. */
typedef struct anvil_exec_candidate {
  const char *name;
  double predicted_us, measured_us;
} anvil_exec_candidate_t;

/* One plan run, or refused; borrowed for the callback's call only. */
typedef struct anvil_exec_row {
  const char *batch, *scheduler;
  int q_heads, kv_heads;
  const char *dtype;
  const char *error;                /* why it could not run here (e.g. a tile that is not
                                       compiled); NULL when it ran */
  int32_t ctas;                     /* CTAs per KV head */
  double median_us, min_us, max_us; /* timed runs */
  double floor_fraction;            /* unique KV bytes at the read-stream bandwidth (the
                                       floor's) / median; 0 without copy_bw */
  int verified;
  double max_rel_err;               /* against fp64 attention */
  int64_t unwritten;                /* output elements never written */
  int deterministic;
  int pass;                         /* within tolerance (1 when verification is off) */
  int tuned;                        /* auto's plan chosen by autotune: */
  int tune_from_cache;              /*   taken from the cache, or */
  int n_tune;                       /*   these candidates measured */
  const anvil_exec_candidate_t *tune;
  const char *tune_chose;           /*   and this one kept */
} anvil_exec_row_t;
/* Returns 0 to go on; any other value stops, and the call returns ANVIL_ERR_USAGE. */
typedef int (*anvil_exec_row_fn)(const anvil_exec_row_t *row, void *user);

typedef struct anvil_exec_options {
  const char *experiment, *plan;    /* exactly one: an experiment file or a saved plan */
  const char *out, *csv;            /* results JSON and CSV; NULL: none */
  const char *trace_dir;            /* each row's per-CTA timeline; NULL: none */
  const char *only;                 /* only batches whose name contains it */
  const char *gpu_spec;             /* this device's GPU spec when it is not recognised */
  const char *autotune_cache;       /* keep autotuned winners in this file */
  int all_schedulers;               /* every registered scheduler, default parameters */
  int copy_bw;                      /* measure the copy and read-stream bandwidths, report
                                       the floor fraction */
  int check_requests;               /* requests compared with fp64 per batch; 0: 8 */
  int autotune;                     /* auto measures its K predicted-fastest candidates */
  int kv_copy;                      /* ANVIL_KV_COPY_* */
  int warmup, repeats;              /* untimed and timed runs per plan */
  int verify;                       /* compare with fp64 and check the outputs */
  int l2_flush;                     /* ANVIL_L2_FLUSH_* */
  /* Each may be NULL; all get anvil_exec_experiment's user pointer. */
  void (*on_note)(const char *text, void *user);
  void (*on_device)(const char *device, const char *spec, void *user);
  void (*on_copy_bw)(double copy_GBps, double read_GBps, void *user);
  void (*on_start)(void *user);     /* everything loaded, before the first plan runs */
} anvil_exec_options_t;

/* The defaults of `anvil exec`: 3 warm-up and 20 timed runs, verified, L2 read-flushed, the
 * experiment's KV copy. */
void anvil_exec_options_default(anvil_exec_options_t *o);

typedef struct anvil_exec_summary {
  int run, failed, not_run;         /* plans run, failing verification, refused */
} anvil_exec_summary_t;

/* Runs, calling on_row (may be NULL) as each plan finishes; fills *out (may be NULL). Errors
 * are those `anvil exec` prints. */
int anvil_exec_experiment(const anvil_exec_options_t *o, anvil_exec_row_fn on_row, void *user,
                          anvil_exec_summary_t *out, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
