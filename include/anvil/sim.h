/* The GPU simulator: a plan's predicted time, bytes and CTA timeline on a target's GPU. */
#ifndef ANVIL_SIM_H
#define ANVIL_SIM_H

#include <stdint.h>

#include "anvil/error.h"
#include "anvil/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anvil_sim_result {
  double predicted_us, partial_us, merge_us;
  double floor_us;            /* roofline floor: the larger of the two below */
  double hbm_bytes, l2_bytes, achieved_bw_GBps, bubble_frac;
  double floor_mem_us;        /* unique KV bytes / the target's HBM bandwidth */
  double floor_compute_us;    /* attention FLOPs / the target's dense fp16 tensor rate */
} anvil_sim_result_t;

/* One CTA on the timeline (item -1: a merge CTA). */
typedef struct anvil_cta_event {
  int32_t item, launch, head, sm;
  double start_us, end_us;
} anvil_cta_event_t;

typedef struct anvil_timeline anvil_timeline_t;

/* Simulates p on t's GPU with t's cost model; `model` is "engine" (NULL) or "waves". With
 * a non-NULL `timeline`, *timeline receives every CTA (caller owns). */
int anvil_simulate(anvil_target_t *t, const anvil_plan_t *p, const char *model,
                   anvil_sim_result_t *out, anvil_timeline_t **timeline, anvil_error_t *err);

int32_t anvil_timeline_size(const anvil_timeline_t *tl);
const anvil_cta_event_t *anvil_timeline_events(const anvil_timeline_t *tl);
/* Chrome Trace Event JSON for Perfetto (the file `anvil run --timeline` writes). */
int anvil_timeline_write(const anvil_timeline_t *tl, const anvil_plan_t *p, const char *path,
                         anvil_error_t *err);
void anvil_timeline_destroy(anvil_timeline_t *tl);

/* --- the GPU (CUDA builds) --------------------------------------------------------------- */
typedef struct anvil_exec_result {
  double median_us, min_us, max_us;   /* timed runs: the plan's launches and its merge */
  int verified;                       /* outputs compared with fp64 attention */
  double max_rel_err;
  int deterministic;                  /* two runs gave bitwise the same output */
} anvil_exec_result_t;
/* Runs p on this machine's GPU over a paged KV cache of seeded random data (pages shuffled),
 * verifies it against fp64 attention and times it (median of `repeats`). ANVIL_ERR_NODEVICE
 * on a build without CUDA or a machine without a device. */
int anvil_exec(const anvil_plan_t *p, uint64_t seed, int repeats, anvil_exec_result_t *out,
               anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
