/* The profiler's launch-model steps (profiler/profile.h, docs/validation.md#profiling),
 * for the launch models of docs/kernels.md#launch-models other than plain streams:
 *
 * - graph: what the streams figures measure (the gap between two kernels of one stream, the
 *   join before the merge, the run's tail) measured again with every plan captured once as a
 *   CUDA graph and replayed. A graph's kernels are all ready when it starts, so no per-launch
 *   host issue is subtracted: the tail is the timed median minus the traced span, the
 *   graph's start and its end event together;
 * - pdl: the join before the merge when the merge is a programmatic dependent launch. */
#include <stdio.h>

#include "executor/executor.h"
#include "profiler/profile.h"

#define SRC "profile"

/* Merge plans of these partial states per row (the join and tail do not depend on them). */
static const int32_t k_graph_slots[] = {1, 16, 256};

/* 32 one-CTA launches of 16 tokens on one stream, as one graph, traced: the mean gap from
 * a launch's last CTA end to the next launch's first CTA start. */
static int graph_stream_gap(const av_gpu_t *g, const av_tile_t *tile, double *gap,
                            av_error_t *err) {
  int64_t kv[32];
  for (int i = 0; i < 32; i++) kv[i] = 16;
  av_workload_t *w = av_profile_workload(1, kv, 32, 128, AV_DTYPE_FP16, err);
  av_plan_t *p = w ? av_profile_plan(w, tile, 1, err) : NULL;
  av_exec_batch_t *b = p ? av_exec_batch_create(w, 7, 1, err) : NULL;
  int rc = b ? AV_OK : (err && err->code ? err->code : AV_ERR_INTERNAL);
  if (!rc) {
    p->launch_model = AV_LAUNCH_GRAPH;
    av_exec_opts_t o;
    av__profile_traced_opts(&o);
    av_exec_result_t r;
    rc = av__profile_flush_l2(g, err);
    if (!rc) rc = av_exec_batch_run(b, p, &o, &r, err);
    if (!rc) rc = av_profile_stream_gap(r.trace, p, gap, err);
    if (!rc) av_exec_result_free(&r);
  }
  av_exec_batch_destroy(b);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

/* One untimed run of p: the first launch of a kernel in the process loads its module (lazy
 * loading), which would otherwise land inside the first traced run's join (tens of us). */
static int warm_up(av_exec_batch_t *b, const av_plan_t *p, av_error_t *err) {
  av_exec_opts_t o;
  av__profile_traced_opts(&o);
  o.trace = 0;
  o.repeats = 1;  /* one timed run, its time unused */
  av_exec_result_t r;
  int rc = av_exec_batch_run(b, p, &o, &r, err);
  if (!rc) av_exec_result_free(&r);
  return rc;
}

/* The merge plans of the merge step (d 128, fp16) issued with launch model m, each after a
 * warm-up run: mean join and tail. */
static int join_tail_as(const av_gpu_t *g, const av_tile_t *part, int rows, int runs,
                        av_launch_model_t m, double *join, double *tail, av_error_t *err) {
  const int n = (int)(sizeof k_graph_slots / sizeof k_graph_slots[0]);
  int rc = AV_OK;
  *join = *tail = 0;
  for (int i = 0; i < n && !rc; i++) {
    av_workload_t *w = av_profile_merge_workload(k_graph_slots[i], rows, 128, AV_DTYPE_FP16, err);
    av_plan_t *p = w ? av_profile_merge_plan(w, part, err) : NULL;
    av_exec_batch_t *b = p ? av_exec_batch_create(w, 11, 1, err) : NULL;
    double j = 0, t = 0;
    rc = b ? AV_OK : (err && err->code ? err->code : AV_ERR_INTERNAL);
    if (!rc) {
      p->launch_model = m;
      rc = warm_up(b, p, err);
      if (!rc) rc = av__profile_join_tail(b, g, p, runs, 0, &j, &t, err);
    }
    *join += j / n;
    *tail += t / n;
    av_exec_batch_destroy(b);
    av_plan_destroy(p);
    av_workload_destroy(w);
  }
  return rc;
}

int av_profile_measure_graph(const av_gpu_t *g, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err) {
  av_tile_t dec, part, merge;
  if (av_variants_tiles(vs, AV_KERNEL_DECODE, 128, AV_DTYPE_FP16, g->sm_arch, &dec, 1) < 1 ||
      av_variants_tiles(vs, AV_KERNEL_PARTIAL, 128, AV_DTYPE_FP16, g->sm_arch, &part, 1) < 1 ||
      av_variants_tiles(vs, AV_KERNEL_MERGE, 128, AV_DTYPE_FP16, g->sm_arch, &merge, 1) < 1)
    return av_error_set(err, AV_ERR_UNSUPPORTED, SRC, NULL,
                        "no decode, partial and merge variants (d 128, fp16) for sm_%d in "
                        "kernels/variants.json", g->sm_arch);
  int rc = graph_stream_gap(g, &dec, &out->graph_gap_us, err);
  if (!rc)
    rc = join_tail_as(g, &part, merge.m_rows > 0 ? merge.m_rows : 1, o->runs, AV_LAUNCH_GRAPH,
                      &out->graph_join_us, &out->graph_tail_us, err);
  if (!rc && out->graph_tail_us <= 0)
    rc = av_error_set(err, AV_ERR_INTERNAL, SRC, NULL,
                      "graph: the timed runs were shorter than their traced span (%.2f us)",
                      out->graph_tail_us);
  if (!rc && o->verbose)
    fprintf(stderr, "profile: as a CUDA graph: same-stream gap %.2f us, join %.2f us, run "
            "tail %.2f us\n", out->graph_gap_us, out->graph_join_us, out->graph_tail_us);
  return rc;
}

int av_profile_measure_pdl(const av_gpu_t *g, const av_variants_t *vs,
                           const av_profile_opts_t *o, av_profile_t *out, av_error_t *err) {
  out->pdl_join_us = 0;
  if (g->sm_arch < 90) return AV_OK;  /* no programmatic dependent launch: nothing to measure */
  av_tile_t part, merge;
  if (av_variants_tiles(vs, AV_KERNEL_PARTIAL, 128, AV_DTYPE_FP16, g->sm_arch, &part, 1) < 1 ||
      av_variants_tiles(vs, AV_KERNEL_MERGE, 128, AV_DTYPE_FP16, g->sm_arch, &merge, 1) < 1)
    return av_error_set(err, AV_ERR_UNSUPPORTED, SRC, NULL,
                        "no partial and merge variants (d 128, fp16) for sm_%d in "
                        "kernels/variants.json", g->sm_arch);
  double tail = 0;
  int rc = join_tail_as(g, &part, merge.m_rows > 0 ? merge.m_rows : 1, o->runs, AV_LAUNCH_PDL,
                        &out->pdl_join_us, &tail, err);
  /* a join of exactly 0 would read as "not measured" in the spec */
  if (!rc && out->pdl_join_us < 0.001) out->pdl_join_us = 0.001;
  if (!rc && o->verbose)
    fprintf(stderr, "profile: the merge as a programmatic dependent launch: join %.2f us\n",
            out->pdl_join_us);
  return rc;
}
