/* Experiment files (docs/experiments.md): which batches, head configurations, GPUs,
 * schedulers, cost model and simulator model an `anvil run` covers. Loading validates the
 * whole file (names, keys, every workload built) before anything runs, so a mistake is
 * reported before any work or output happens. */
#ifndef AV_CLI_EXPERIMENT_H
#define AV_CLI_EXPERIMENT_H

#include <jansson.h>

#include "costmodels/costmodel.h"
#include "schedulers/scheduler.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/limits.h"
#include "core/params.h"
#include "sim/sim.h"
#include "core/workload.h"

/* One batch of the experiment: a workload spec (or collection tree) at one head config. */
typedef struct av_exp_batch {
  char name[128];          /* "pat-3", the spec's "name", or "workloads[i]" */
  int spec_index;          /* index into the file's "workloads" */
  int heads_index;         /* index into the file's "heads"; -1 when the spec sets its own */
  av_workload_t *w;        /* owned */
} av_exp_batch_t;

/* Scheduler variants an experiment may hold (entries times their grids' points). */
#define AV_MAX_SCHED_VARIANTS 4096

typedef struct av_exp_sched {
  char label[64];          /* "label", default the scheduler's name; [k=v,...] when swept */
  int entry;               /* index into the file's "schedulers" */
  const av_scheduler_ops_t *ops;
  av_params_t params;
} av_exp_sched_t;

typedef struct av_experiment {
  char name[128];
  char path[512];          /* the file it came from */
  av_sim_model_t sim;
  av_launch_model_t launch;  /* "launch": how every plan's launches are issued */
  av_kv_copy_t kv_copy;      /* "kv_copy": how the kernels copy KV (simulated and executed) */
  int n_gpus;
  av_gpu_t *gpus;
  const av_costmodel_ops_t *cost_ops;
  av_params_t cost_params;
  int n_heads;
  av_heads_t *heads;
  int n_specs;             /* entries of "workloads" (collections count once) */
  int n_batches;
  av_exp_batch_t *batches;
  int n_scheds;
  av_exp_sched_t *scheds;
  av_limits_t limits;      /* "limits", checked on every batch at load */
} av_experiment_t;

/* Loads and validates an experiment file; every batch is built. Caller owns *out. */
int av_experiment_load(const char *path, av_experiment_t **out, av_error_t *err);
/* The same from a parsed document; `path` names it in messages and anchors relative paths
 * (collections). */
int av_experiment_from_json(const json_t *root, const char *path, av_experiment_t **out,
                            av_error_t *err);
void av_experiment_destroy(av_experiment_t *e);

#endif
