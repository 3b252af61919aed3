/* Measured per-CTA traces (sim/replay.h), loaded against one fixed plan (levels B=[1,4]
 * L=[128,32], query_centric on the H200 spec) and replayed when they load. */
#include "schedulers/scheduler.h"
#include "sim/replay.h"
#include "tests/fuzz/fuzz_common.h"

static av_gpu_t g_gpu;
static av_workload_t *g_w;
static av_plan_t *g_plan;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  av_error_t err;
  av_error_clear(&err);
  const int64_t B[2] = {1, 4}, L[2] = {128, 32};
  const av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  if (av_gpu_load("H200-SXM", NULL, &g_gpu, &err)) abort();
  g_w = av_workload_from_levels(B, L, 2, &h, &err);
  av_sched_ctx_t ctx = {.workload = g_w, .gpu = &g_gpu};
  if (!g_w || av_scheduler_plan(av_scheduler_find("query_centric"), NULL, &ctx, &g_plan, &err))
    abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  av_error_t err;
  av_error_clear(&err);
  av_replay_trace_t t;
  if (av_replay_load(av_fuzz_file(data, size, ".json"), g_plan, &t, &err) == AV_OK) {
    av_replay_result_t r;
    if (av_replay_run(&t, g_plan, g_w, &g_gpu, NULL, &r, NULL, &err) == AV_OK)
      av_replay_result_free(&r);
    av_replay_trace_free(&t);
  }
  return 0;
}
