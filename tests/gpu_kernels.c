/* GPU tests of the kernels and the executor: every compiled tile on hand-built plans
 * (KV-centric partial items + merge, query-centric FINAL items, persistent queues), every
 * registered scheduler's plans, per-CTA traces, and the bad inputs the executor must refuse
 * before launching. Without a CUDA device (or a CUDA build) it prints one line and passes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/autotune.h"
#include "schedulers/scheduler.h"
#include "selectors/selectors.h"
#include "core/plan.h"
#include "tests/support.h"
#include "executor/executor.h"

#ifdef AV_HAVE_CUDA
#include "kernels/kernels.h"
#endif

static av_workload_t *small_tree(int hq, int hkv, int d, av_dtype_t dt) {
  /* A shared root, four branches, leaves of uneven lengths (not multiples of any tile). */
  const int64_t B[] = {1, 4, 12}, L[] = {300, 45, 37};
  av_heads_t h = {.hq = hq, .hkv = hkv, .head_dim = d, .dtype = dt};
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 3, &h, &err);
  ck_assert_msg(w != NULL, "%s", err.message);
  return w;
}

enum { MODE_KV = 0, MODE_QC = 1, MODE_PERSIST = 2, MODE_PERSIST_QC = 3 };

/* KV-centric: each node's queries in chunks of m/g rows, long nodes cut in two items, all
 * PARTIAL. Query-centric: one FINAL item per request over its path. Persistent: the KV-centric
 * (or query-centric) items spread over three CTA queues. */
static av_plan_t *make_plan(const av_workload_t *w, const av_tile_t *tile, int mode) {
  av_plan_t *p = av_plan_create(w, "gpu_test");
  ck_assert_ptr_nonnull(p);
  const int g = w->heads.hq / w->heads.hkv;
  const int per = tile->m_rows / g;
  ck_assert_int_ge(per, 1);
  const int queues = mode == MODE_PERSIST || mode == MODE_PERSIST_QC;
  int32_t l = av_plan_add_launch(p, 0, tile, queues ? 3 : 0);
  ck_assert_int_ge(l, 0);
  int32_t k = 0;
  if (mode == MODE_QC || mode == MODE_PERSIST_QC) {
    for (int32_t r = 0; r < w->n_requests; ++r) {
      av_segment_t segs[16];
      int n = 0;
      for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent)
        segs[n++] = (av_segment_t){u, 0, w->nodes[u].kv_len_tokens};
      ck_assert_int_ge(av_plan_add_item(p, l, (av_item_work_t){&r, 1, segs, n}, AV_OUT_FINAL,
                                        queues ? r % 3 : -1, queues ? r / 3 : -1),
                       0);
    }
  } else {
    for (int32_t u = 0; u < w->n_nodes; ++u) {
      const int32_t *q = w->node_reqs + w->node_req_offsets[u];
      const int32_t nq = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
      const int64_t len = w->nodes[u].kv_len_tokens;
      const int64_t cut = len > 64 ? len / 2 + 3 : len;
      for (int32_t c = 0; c < nq; c += per)
        for (int part = 0; part < (cut < len ? 2 : 1); ++part, ++k) {
          av_segment_t s = {u, part ? cut : 0, part ? len : cut};
          const int32_t n = nq - c < per ? nq - c : per;
          const int persist = mode == MODE_PERSIST;
          ck_assert_int_ge(av_plan_add_item(p, l, (av_item_work_t){q + c, n, &s, 1}, AV_OUT_PARTIAL,
                                            persist ? k % 3 : -1, persist ? k / 3 : -1),
                           0);
        }
    }
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  return p;
}

static int have_device(void) {
  av_error_t err;
  av_error_clear(&err);
  return av_exec_available(&err) == AV_OK;
}

#ifdef AV_HAVE_CUDA
/* A plan the executor must refuse before launching, with a message naming `why`. */
static void run_refused(av_exec_batch_t *b, const av_plan_t *p, const char *why,
                        const char *what) {
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  av_exec_result_t r;
  av_error_t err;
  av_error_clear(&err);
  const int rc = av_exec_batch_run(b, p, &o, &r, &err);
  ck_assert_msg(rc == AV_ERR_UNSUPPORTED, "%s: ran (rc %d) where it must be refused", what, rc);
  ck_assert_msg(strstr(err.message, why) != NULL, "%s: message '%s' does not say %s", what,
                err.message, why);
}
#endif

static void run_checked(av_exec_batch_t *b, const av_plan_t *p, av_dtype_t dt, const char *what) {
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  o.repeats = 2;
  o.warmup = 1;
  av_exec_result_t r;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_exec_batch_run(b, p, &o, &r, &err), &err);
  const double tol = dt == AV_DTYPE_BF16 ? 1e-2 : 2e-3;
  ck_assert_msg(r.verified && r.checked > 0, "%s: not verified", what);
  ck_assert_msg(r.max_rel_err <= tol, "%s: max rel err %.3e (request %d head %d) > %.0e",
                what, r.max_rel_err, r.worst_request, r.worst_head, tol);
  ck_assert_msg(r.unwritten == 0, "%s: %lld output elements never written", what,
                (long long)r.unwritten);
  ck_assert_msg(r.deterministic, "%s: two runs differ", what);
  ck_assert_msg(r.median_us > 0, "%s: no time", what);
  av_exec_result_free(&r);
}

#ifdef AV_HAVE_CUDA
/* Every compiled tile of w's head dim and dtype, on the three plan shapes, its KV copied as
 * `copy` says. */
static void run_variants(const av_workload_t *w, av_kv_copy_t copy) {
  int nv = 0;
  const av_kern_variant_t *vs = av_kern_variants(&nv);
  ck_assert_int_gt(nv, 0);
  const int d = w->heads.head_dim;
  const av_dtype_t dt = w->heads.dtype;
  av_error_t err;
  av_error_clear(&err);
  av_exec_batch_t *b = av_exec_batch_create(w, 7, 12, &err);
  AV_CK_OK(b ? AV_OK : err.code, &err);
  AV_CK_OK(av_exec_batch_set_kv_copy(b, copy, &err), &err);
  if (copy == AV_KV_COPY_CP_ASYNC) ck_assert_int_eq(av_exec_batch_tma(b), 0);
  for (int i = 0; i < nv; ++i) {
    const av_kern_variant_t *v = &vs[i];
    if (v->head_dim != d || v->dtype != (int)dt || v->kind == 3) continue;
    av_tile_t t = {.kind = (av_kernel_kind_t)v->kind, .m_rows = v->m, .n_tokens = v->n,
                   .warps = v->warps};
    const int mode = v->kind == 1 ? MODE_PERSIST : v->kind == 2 ? MODE_QC : MODE_KV;
    av_plan_t *p = make_plan(w, &t, mode);
    if (v->m >= 128 && !av_exec_batch_tma(b)) { /* the warp-specialised tile copies by TMA */
      run_refused(b, p, "TMA", v->name);
      av_plan_destroy(p);
      continue;
    }
    run_checked(b, p, dt, v->name);
    av_plan_destroy(p);
    if (v->kind <= 1) { /* the same tile computing FINAL outputs over whole paths */
      p = make_plan(w, &t, v->kind ? MODE_PERSIST_QC : MODE_QC);
      run_checked(b, p, dt, v->name);
      av_plan_destroy(p);
    }
  }
  av_exec_batch_destroy(b);
}

/* Every compiled tile, both dtypes, both head dims, the three plan shapes. */
START_TEST(test_every_variant) {
  const int dims[] = {128, 64};
  const av_dtype_t dts[] = {AV_DTYPE_FP16, AV_DTYPE_BF16};
  for (int di = 0; di < 2; ++di)
    for (int ti = 0; ti < 2; ++ti) {
      av_workload_t *w = small_tree(8, 2, dims[di], dts[ti]);
      run_variants(w, AV_KV_COPY_TMA);
      av_workload_destroy(w);
    }
}
END_TEST

/* On sm_90a every tile copies KV by TMA where the block size is a power of two >= 8 (boxes of
 * min(block, 32) tokens; a segment's first tile starts rounded down to a box and masks the
 * tokens before it), else by cp.async into the same swizzled tiles (kernels/attn_tma.cuh):
 * block sizes on both sides of that, and the cp.async path forced by the KV copy "cp_async"
 * at the default size; head dims and dtypes alternate. */
START_TEST(test_block_sizes) {
  const int sizes[] = {8, 12, 32, 64, 16};
  for (int i = 0; i < 5; ++i) {
    const int odd = i % 2;
    av_workload_t *w = small_tree(8, 2, odd ? 64 : 128, odd ? AV_DTYPE_BF16 : AV_DTYPE_FP16);
    w->block_size_tokens = sizes[i];
    run_variants(w, sizes[i] == 16 ? AV_KV_COPY_CP_ASYNC : AV_KV_COPY_TMA);
    av_workload_destroy(w);
  }
}
END_TEST

/* Paths of a few tokens a node: a 70-token root, then three levels of 3, 1 and 2 tokens (the
 * candidate trees of speculative decoding). The query-centric items, on every tile and on the
 * persistent kernels' queues, read four segments, the last three shorter than any tile and
 * than a TMA box: block sizes of 12 and 16 tokens (segments cross blocks), the 16-token one
 * also with TMA off. */
START_TEST(test_short_segments) {
  const int64_t B[] = {1, 2, 4, 8}, L[] = {70, 3, 1, 2};
  const av_dtype_t dts[] = {AV_DTYPE_FP16, AV_DTYPE_BF16};
  av_error_t err;
  av_error_clear(&err);
  for (int i = 0; i < 3; ++i) {
    av_heads_t h = {.hq = 8, .hkv = 2, .head_dim = i == 1 ? 64 : 128, .dtype = dts[i % 2]};
    av_workload_t *w = av_workload_from_levels(B, L, 4, &h, &err);
    ck_assert_msg(w != NULL, "%s", err.message);
    w->block_size_tokens = i == 1 ? 12 : 16;
    run_variants(w, i == 2 ? AV_KV_COPY_CP_ASYNC : AV_KV_COPY_TMA);
    av_workload_destroy(w);
  }
}
END_TEST

/* The warp-specialised m128 tile over long items: 32 requests x GQA 4 fill its 128 rows, and
 * a 4099-token root cut in two runs each item through its three-stage ring many times (every
 * stage's full and empty barriers change phase), with an unaligned cut masking both ends. */
START_TEST(test_wide_tile_long) {
  int nv = 0;
  const av_kern_variant_t *vs = av_kern_variants(&nv);
  const int64_t B[] = {1, 32}, L[] = {4099, 5};
  const av_dtype_t dts[] = {AV_DTYPE_FP16, AV_DTYPE_BF16};
  for (int di = 0; di < 2; ++di) {
    av_heads_t h = {.hq = 16, .hkv = 4, .head_dim = 128, .dtype = dts[di]};
    av_error_t err;
    av_error_clear(&err);
    av_workload_t *w = av_workload_from_levels(B, L, 2, &h, &err);
    ck_assert_msg(w != NULL, "%s", err.message);
    av_exec_batch_t *b = av_exec_batch_create(w, 11, 8, &err);
    AV_CK_OK(b ? AV_OK : err.code, &err);
    for (int i = 0; i < nv; ++i) {
      const av_kern_variant_t *v = &vs[i];
      if (v->m < 128 || v->head_dim != 128 || v->dtype != (int)dts[di]) continue;
      av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = v->m, .n_tokens = v->n,
                     .warps = v->warps};
      av_plan_t *p = make_plan(w, &t, MODE_KV);
      if (av_exec_batch_tma(b)) run_checked(b, p, dts[di], v->name);
      else run_refused(b, p, "TMA", v->name);
      av_plan_destroy(p);
    }
    av_exec_batch_destroy(b);
    av_workload_destroy(w);
  }
}
END_TEST
#endif

/* The H200 spec the schedulers plan for and the compiled variants' table. */
static av_variants_t *h200_and_variants(av_gpu_t *gpu) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, gpu, &err), &err);
  av_variants_t *vs = av_variants_load(NULL, &err);
  AV_CK_OK(vs ? AV_OK : err.code, &err);
  return vs;
}

/* Every registered scheduler's plan on a small tree, (32, 8) heads, issued on streams and
 * replayed as a CUDA graph (docs/kernels.md#launch-models). */
START_TEST(test_schedulers) {
  av_workload_t *w = small_tree(32, 8, 128, AV_DTYPE_FP16);
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t gpu;
  av_variants_t *vs = h200_and_variants(&gpu);
  const av_costmodel_ops_t *cops = NULL;
  AV_CK_OK(av_costmodel_lookup("roofline", "test", NULL, &cops, &err), &err);
  av_params_t cp;
  AV_CK_OK(av_params_init(&cp, cops->params, &err), &err);
  av_cost_env_t env = {.gpu = &gpu, .heads = &w->heads, .variants = vs};
  av_costmodel_t *cost = av_costmodel_create(cops, &cp, &env, &err);
  AV_CK_OK(cost ? AV_OK : err.code, &err);
  av_exec_batch_t *b = av_exec_batch_create(w, 3, 12, &err);
  AV_CK_OK(b ? AV_OK : err.code, &err);
  int n = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  for (int i = 0; i < n; ++i) {
    av_params_t sp;
    AV_CK_OK(av_params_init(&sp, all[i]->params, &err), &err);
    av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs, .cost = cost};
    av_plan_t *p = NULL;
    AV_CK_OK(av_scheduler_plan(all[i], &sp, &ctx, &p, &err), &err);
    run_checked(b, p, AV_DTYPE_FP16, all[i]->name);
    p->launch_model = AV_LAUNCH_GRAPH;
    char what[96];
    snprintf(what, sizeof what, "%s as a graph", all[i]->name);
    run_checked(b, p, AV_DTYPE_FP16, what);
    p->launch_model = AV_LAUNCH_PDL;
    snprintf(what, sizeof what, "%s with the merge a programmatic dependent", all[i]->name);
    run_checked(b, p, AV_DTYPE_FP16, what);
    av_plan_destroy(p);
  }
  av_exec_batch_destroy(b);
  av_costmodel_destroy(cost);
  av_variants_destroy(vs);
  av_workload_destroy(w);
}
END_TEST

#ifdef AV_HAVE_CUDA /* the merge kernel's rows per CTA come from the kernels library */
/* --trace: one record per (item, KV head) and one per merge CTA (item -1, after every
 * attention CTA has ended, also when the merge is a programmatic dependent launch: its CTAs
 * record their start after griddepcontrol.wait), SM ids in range, end after start. */
START_TEST(test_trace) {
  av_workload_t *w = small_tree(8, 2, 128, AV_DTYPE_FP16);
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64, .warps = 4};
  av_plan_t *p = make_plan(w, &t, MODE_KV);
  p->launch_model = _i ? AV_LAUNCH_PDL : AV_LAUNCH_STREAMS;
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  o.trace = 1;
  o.repeats = 1;
  av_exec_result_t r;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_exec_run(p, w, &o, &r, &err), &err);
  ck_assert_ptr_nonnull(r.trace);
  json_t *ctas = json_object_get(r.trace, "ctas");
  const int mr = av_kern_merge_rows_per_cta(); /* the merge's rows per CTA (kernels/merge.cu) */
  const int merge_ctas = p->n_slots > 0 ? (w->n_requests * w->heads.hq + mr - 1) / mr : 0;
  ck_assert_int_gt(merge_ctas, 0);
  ck_assert_int_eq((int)json_array_size(ctas), p->n_items * w->heads.hkv + merge_ctas);
  double mk = json_real_value(json_object_get(r.trace, "makespan_us"));
  ck_assert(mk > 0);
  size_t i;
  json_t *c;
  int n_merge = 0;
  double attn_end = 0, merge_start = 1e300;
  json_array_foreach(ctas, i, c) {
    const double s = json_real_value(json_object_get(c, "start_us"));
    const double e = json_real_value(json_object_get(c, "end_us"));
    ck_assert(s >= 0 && e >= s && e <= mk + 1e-9);
    ck_assert_int_lt(json_integer_value(json_object_get(c, "sm")), 1024);
    const json_int_t item = json_integer_value(json_object_get(c, "item"));
    const json_int_t head = json_integer_value(json_object_get(c, "head"));
    ck_assert(head >= 0 && head < w->heads.hkv);
    if (item < 0) {
      n_merge++;
      merge_start = s < merge_start ? s : merge_start;
    } else {
      attn_end = e > attn_end ? e : attn_end;
    }
  }
  ck_assert_int_eq(n_merge, merge_ctas);
  ck_assert(merge_start >= attn_end);
  av_exec_result_free(&r);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST
#endif

/* Bad input is refused with a clear error before anything runs. */
START_TEST(test_bad_input) {
  av_error_t err;
  av_exec_result_t r;
  /* head dim 256: no kernel */
  av_workload_t *w256 = small_tree(8, 2, 256, AV_DTYPE_FP16);
  av_error_clear(&err);
  ck_assert_ptr_null(av_exec_batch_create(w256, 1, 4, &err));
  ck_assert_int_eq(err.code, AV_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err.message, "compiled: 64, 128"));
  av_workload_destroy(w256);

  av_workload_t *w = small_tree(8, 2, 128, AV_DTYPE_FP16);
  av_error_clear(&err);
  av_exec_batch_t *b = av_exec_batch_create(w, 1, 4, &err);
  AV_CK_OK(b ? AV_OK : err.code, &err);
  /* a tile that is not compiled */
  av_tile_t bad = {.kind = AV_KERNEL_PARTIAL, .m_rows = 48, .n_tokens = 64, .warps = 4};
  av_plan_t *p = make_plan(w, &bad, MODE_KV);
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_batch_run(b, p, NULL, &r, &err), AV_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err.message, "no compiled partial kernel"));
  av_plan_destroy(p);
  /* a plan that is not exact: one token range dropped */
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64, .warps = 4};
  p = make_plan(w, &t, MODE_KV);
  p->segments[0].end -= 1;
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_batch_run(b, p, NULL, &r, &err), AV_ERR_PLAN);
  av_plan_destroy(p);
  av_exec_batch_destroy(b);
  /* a batch larger than device memory: 2^31 tokens of KV */
  const int64_t B[] = {1, 2}, L[] = {(int64_t)1 << 30, 1 << 20};
  av_heads_t h = {.hq = 64, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  av_workload_t *huge = av_workload_from_levels(B, L, 2, &h, &err);
  if (huge) {
    av_error_clear(&err);
    ck_assert_ptr_null(av_exec_batch_create(huge, 1, 4, &err));
    ck_assert_int_eq(err.code, AV_ERR_RANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "GiB of device memory"));
    av_workload_destroy(huge);
  }
  av_workload_destroy(w);
}
END_TEST

/* Plans timed together with their repeats interleaved: each gets its own median within
 * [least, most] and its CTA count; no plans, or a plan that is not exact, is an error before
 * anything runs. */
START_TEST(test_interleaved_timing) {
  av_workload_t *w = small_tree(32, 8, 128, AV_DTYPE_FP16);
  av_error_t err;
  av_error_clear(&err);
  av_exec_batch_t *b = av_exec_batch_create(w, 5, 4, &err);
  AV_CK_OK(b ? AV_OK : err.code, &err);
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = 16, .n_tokens = 64, .warps = 4};
  av_plan_t *p[3] = {make_plan(w, &t, MODE_KV), make_plan(w, &t, MODE_QC),
                     make_plan(w, &t, MODE_KV)};
  p[2]->launch_model = AV_LAUNCH_GRAPH;
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  o.repeats = 5;
  o.warmup = 1;
  av_exec_result_t r[3], one;
  AV_CK_OK(av_exec_batch_time(b, (const av_plan_t *const *)p, 3, &o, r, &err), &err);
  for (int k = 0; k < 3; ++k) {
    o.verify = 0;
    AV_CK_OK(av_exec_batch_run(b, p[k], &o, &one, &err), &err);
    ck_assert_int_eq(r[k].repeats, 5);
    ck_assert_int_eq(r[k].ctas, one.ctas);
    ck_assert_msg(r[k].min_us > 0 && r[k].min_us <= r[k].median_us &&
                      r[k].median_us <= r[k].max_us,
                  "plan %d: %.2f <= %.2f <= %.2f", k, r[k].min_us, r[k].median_us, r[k].max_us);
    ck_assert_str_eq(r[k].gpu, one.gpu);
    av_exec_result_free(&one);
  }
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_batch_time(b, (const av_plan_t *const *)p, 0, &o, r, &err),
                   AV_ERR_RANGE);
  p[1]->segments[0].end -= 1;
  av_error_clear(&err);
  ck_assert_int_eq(av_exec_batch_time(b, (const av_plan_t *const *)p, 3, &o, r, &err),
                   AV_ERR_PLAN);
  for (int k = 0; k < 3; ++k) av_plan_destroy(p[k]);
  av_exec_batch_destroy(b);
  av_workload_destroy(w);
}
END_TEST

/* --autotune: the two predicted fastest of auto's candidates are measured and the faster
 * kept, its plan verified; the cache then decides the same shape without measuring. */
START_TEST(test_autotune) {
  av_workload_t *w = small_tree(32, 8, 128, AV_DTYPE_FP16);
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t gpu;
  av_variants_t *vs = h200_and_variants(&gpu);
  av_exec_batch_t *b = av_exec_batch_create(w, 3, 12, &err);
  AV_CK_OK(b ? AV_OK : err.code, &err);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs};
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  o.repeats = 5;
  char path[64];
  snprintf(path, sizeof path, "/tmp/av_gpu_autotune_%d.json", (int)getpid());
  remove(path);
  av_autotune_cache_t cache;
  AV_CK_OK(av_autotune_cache_open(path, &cache, &err), &err);
  av_autotune_result_t res;
  av_plan_t *p = NULL;
  AV_CK_OK(av_autotune(b, &ctx, &(av_autotune_opts_t){NULL, 2, &o, &cache}, &res, &p, &err), &err);
  ck_assert_int_eq(res.k, 2);
  ck_assert(!res.from_cache);
  const int win = res.measured_us[1] < res.measured_us[0];
  ck_assert_str_eq(res.chose, res.cand[win].name);
  ck_assert_msg(strstr(p->params, "autotune=2") != NULL, "params: %s", p->params);
  run_checked(b, p, AV_DTYPE_FP16, "autotuned");
  av_plan_destroy(p);
  AV_CK_OK(av_autotune_cache_save(&cache, &err), &err);
  av_autotune_cache_close(&cache);
  AV_CK_OK(av_autotune_cache_open(path, &cache, &err), &err);
  AV_CK_OK(av_autotune(b, &ctx, &(av_autotune_opts_t){NULL, 2, &o, &cache}, &res, &p, &err), &err);
  ck_assert(res.from_cache);
  ck_assert_int_eq(res.k, 0);
  ck_assert_str_eq(res.chose, res.cand[win].name);
  av_plan_destroy(p);
  av_autotune_cache_close(&cache);
  remove(path);
  av_exec_batch_destroy(b);
  av_variants_destroy(vs);
  av_workload_destroy(w);
}
END_TEST

int main(void) {
  if (!have_device()) {  /* CTest reports 77 as skipped (tests/CMakeLists.txt) */
    puts("skipped: no CUDA device");
    return 77;
  }
  /* every registered scheduler, `auto` (selectors/) among them */
  if (av_selectors_register(NULL)) return 1;
  Suite *s = suite_create("gpu_kernels");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
#ifdef AV_HAVE_CUDA
  tcase_add_test(tc, test_every_variant);
  tcase_add_test(tc, test_block_sizes);
  tcase_add_test(tc, test_wide_tile_long);
  tcase_add_test(tc, test_short_segments);
  tcase_add_loop_test(tc, test_trace, 0, 2); /* streams, pdl */
#endif
  tcase_add_test(tc, test_schedulers);
  tcase_add_test(tc, test_autotune);
  tcase_add_test(tc, test_interleaved_timing);
  tcase_add_test(tc, test_bad_input);
  suite_add_tcase(s, tc);
  return av_test_run(s, 1);
}
