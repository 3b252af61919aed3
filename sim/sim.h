/* The GPU simulator: predicts a plan's time, bytes and timeline on a GPU spec. Two models:
 * "waves" (closed-form wave count, the quick estimate) and "engine" (event-driven dispatch,
 * processor-shared HBM bandwidth, per-CTA in-flight limit, SM compute sharing, L2 reuse,
 * streams). */
#ifndef AV_SIM_H
#define AV_SIM_H

#include <stdio.h>

#include "costmodels/costmodel.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"
#include "core/variants.h"
#include "core/workload.h"

/* engine_lines: the engine with its L2 looked up one KV line at a time, the reference the
 * engine's runs of lines are tested against (docs/simulator.md#l2-over-ranges); its cost
 * grows with the plan's KV. */
typedef enum { AV_SIM_WAVES = 0, AV_SIM_ENGINE = 1, AV_SIM_ENGINE_LINES = 2 } av_sim_model_t;
int av_sim_model_from_name(const char *name, av_sim_model_t *out);
const char *av_sim_model_name(av_sim_model_t m);
/* av_sim_model_from_name with a user-facing error: AV_ERR_NAME naming source/path and
 * listing the valid models ("waves, engine"). */
int av_sim_model_lookup(const char *name, const char *source, const char *path,
                        av_sim_model_t *out, av_error_t *err);

typedef struct av_sim_launch_result {
  double start_us, end_us;
  double waves;                /* CTAs / (resident CTAs per SM x SMs) */
  int32_t ctas;                /* x hkv */
  int ctas_per_sm;             /* occupancy */
} av_sim_launch_result_t;

typedef struct av_sim_result {
  double makespan_us;          /* partial phase + merge phase */
  double partial_us, merge_us;
  double hbm_bytes, l2_bytes;  /* all heads */
  double achieved_bw_GBps;     /* hbm_bytes / makespan */
  double sm_busy_frac, bubble_frac; /* over SMs x makespan */
  int32_t n_launches;
  av_sim_launch_result_t *launches; /* n_launches; owned by the result */
} av_sim_result_t;

void av_sim_result_free(av_sim_result_t *r);

/* One CTA execution on the timeline (also the trace format the GPU executor writes). */
typedef struct av_cta_event {
  int32_t item;                /* plan item (-1 for merge CTAs) */
  int32_t launch, head, sm;
  double start_us, end_us;
} av_cta_event_t;

typedef struct av_timeline {
  int32_t n, cap;
  av_cta_event_t *ev;
} av_timeline_t;
void av_timeline_free(av_timeline_t *t);
/* Chrome Trace Event JSON (opens in Perfetto / chrome://tracing). */
int av_timeline_write_chrome(const av_timeline_t *t, const av_plan_t *p, const char *path,
                             av_error_t *err);

typedef struct av_sim_config {
  av_sim_model_t model;
  int record_timeline;
  av_kv_copy_t kv_copy;        /* how the kernels copy KV (the default, 0, is TMA) */
} av_sim_config_t;

/* What a simulation runs: a plan (finalized, checked) for its workload on a GPU, with the
 * compiled kernel variants and the cost model that supplies per-item fixed costs and FLOPs. */
typedef struct av_sim_input {
  const av_plan_t *plan;
  const av_workload_t *workload;
  const av_gpu_t *gpu;
  const av_variants_t *variants;
  const av_costmodel_t *cost;
} av_sim_input_t;

/* Simulates in->plan for in->workload. If cfg->record_timeline, *tl (caller-initialised to
 * zero) receives every CTA. */
int av_sim_run(const av_sim_config_t *cfg, const av_sim_input_t *in, av_sim_result_t *out,
               av_timeline_t *tl, av_error_t *err);

#endif
