/* The event-driven engine against closed forms: waves, bandwidth-bound time, tails, stream
 * overlap, persistent queues, L2 reuse, determinism and the Chrome timeline. GPU specs,
 * variants and the cost model are built here so each case controls what binds. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodels/costmodel.h"
#include "core/plan.h"
#include "sim/sim.h"
#include "support.h"

/* --- fixtures ------------------------------------------------------------------------ */
/* A small sm_90-like GPU: 4 SMs, everything fast unless a case slows one thing down. */
static av_gpu_t test_gpu(void) {
  av_gpu_t g = av_test_small_gpu();
  g.hbm_bw_datasheet_GBps = 1e9;
  g.hbm_bw_measured_GBps = 1e9;
  g.l2_bytes = 0;               /* no L2 unless a case wants one */
  g.l2_bw_GBps = 1e9;
  g.mem_latency_ns = 1;
  g.bytes_in_flight_per_sm = 1e12; /* in-flight bound off */
  g.clock_MHz = 1000;
  g.fp16_tensor_tflops = 1e9;
  g.fp32_tflops = 1e9;
  g.launch_overhead_us = 2;
  g.cta_fixed_us = 0;
  return g;
}

/* One partial variant (m=16, n=64, 4 warps) whose shared memory gives 3 CTAs per SM, and a
 * merge variant. */
static av_variant_t g_var[2];
static av_variants_t g_variants = {2, g_var};
static const av_tile_t TILE = {AV_KERNEL_PARTIAL, 16, 64, 4};
#define WORK1(q, n_q, seg) ((av_item_work_t){q, n_q, seg, 1}) /* an item of one segment */
static const av_tile_t PTILE = {AV_KERNEL_PERSISTENT, 16, 64, 4};

static void setup_variants(int smem) { av_test_tile_variants(g_var, smem); }

/* Test cost model: bytes = exactly the KV bytes, FLOPs = flops_per_token x tokens. */
static double g_flops_per_token;
static void tc_estimate(const void *state, const av_cost_env_t *env, const av_cost_query_t *q,
                        av_item_cost_t *out) {
  (void)state;
  out->hbm_bytes = 2.0 * (double)q->kv_tokens * env->heads->head_dim * 2;
  out->flops = g_flops_per_token * (double)q->kv_tokens;
  out->time_us = 0;
}
static const av_costmodel_ops_t tc_ops = {.name = "test", .description = "test",
                                          .estimate = tc_estimate};

typedef struct sim_case {
  av_gpu_t gpu;
  av_workload_t *w;
  av_plan_t *p;
  av_costmodel_t *cost;
  av_sim_result_t res;
  av_timeline_t tl;
} sim_case_t;

static void run_case(sim_case_t *c, int timeline) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(c->p, &err), &err);
  av_cost_env_t env = {.gpu = &c->gpu, .heads = &c->w->heads, .variants = &g_variants};
  if (!c->cost) {
    c->cost = av_costmodel_create(&tc_ops, NULL, &env, &err);
    ck_assert_ptr_nonnull(c->cost);
  }
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = timeline};
  AV_CK_OK(av_sim_run(&cfg, &(av_sim_input_t){c->p, c->w, &c->gpu, &g_variants, c->cost}, &c->res,
                      timeline ? &c->tl : NULL, &err),
           &err);
}

static void free_case(sim_case_t *c) {
  av_sim_result_free(&c->res);
  av_timeline_free(&c->tl);
  av_costmodel_destroy(c->cost);
  av_plan_destroy(c->p);
  av_workload_destroy(c->w);
}

/* 76800 B of shared memory + 1 KiB reserved = 77824 B: floor(233472 / 77824) = 3 CTAs. */
#define SMEM_K3 76800

/* --- closed forms -------------------------------------------------------------------- */
START_TEST(waves_closed_form) {
  /* N equal fixed-cost CTAs, occupancy k on S SMs: ceil(N / (k S)) waves of one CTA time. */
  setup_variants(SMEM_K3);
  const int ns[] = {1, 12, 13, 30, 36, 37};
  for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
    int N = ns[t];
    sim_case_t c = {.gpu = test_gpu()};
    c.gpu.cta_fixed_us = 10;
    int64_t *l = av_test_lens(N, 1);
    c.w = av_test_flat_workload(N, l, 1);
    free(l);
    c.p = av_plan_create(c.w, "test");
    int32_t L = av_plan_add_launch(c.p, 0, &TILE, 0);
    av_test_request_items(c.p, c.w, L, 0, N);
    run_case(&c, 0);
    int waves = (N + 11) / 12;
    ck_assert_int_eq(c.res.launches[0].ctas_per_sm, 3);
    ck_assert_double_eq_tol(c.res.launches[0].waves, N / 12.0, 1e-12);
    ck_assert_double_eq_tol(c.res.makespan_us, 2 + 10.0 * waves, 1e-6);
    ck_assert_double_eq_tol(c.res.launches[0].start_us, 2, 1e-9);
    free_case(&c);
  }
}
END_TEST

START_TEST(waves_with_gqa_heads) {
  /* hkv heads multiply the grid: 6 items x 4 heads = 24 CTAs = 2 waves of 12. */
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.cta_fixed_us = 5;
  int64_t *l = av_test_lens(6, 1);
  c.w = av_test_flat_workload(6, l, 4);
  free(l);
  c.p = av_plan_create(c.w, "test");
  av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &TILE, 0), 0, 6);
  run_case(&c, 0);
  ck_assert_int_eq(c.res.launches[0].ctas, 24);
  ck_assert_double_eq_tol(c.res.makespan_us, 2 + 2 * 5.0, 1e-6);
  free_case(&c);
}
END_TEST

START_TEST(bandwidth_bound_total_bytes) {
  /* Uneven CTAs, no in-flight bound: processor sharing keeps HBM busy until the end, so the
   * time is exactly total bytes / bandwidth. */
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.hbm_bw_measured_GBps = 100;
  const int N = 50;
  int64_t l[50];
  for (int i = 0; i < N; i++) l[i] = 256 + 97 * ((i * 7) % 13);
  c.w = av_test_flat_workload(N, l, 2);
  c.p = av_plan_create(c.w, "test");
  av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &TILE, 0), 0, N);
  run_case(&c, 0);
  double bytes = 0;
  for (int i = 0; i < N; i++) bytes += 2.0 * l[i] * 128 * 2 * 2; /* x 2 heads */
  ck_assert_double_eq_tol(c.res.hbm_bytes, bytes, 1e-6 * bytes);
  double expect = 2 + bytes / (100 * 1e3);
  ck_assert_double_eq_tol(c.res.makespan_us, expect, 1e-9 * expect);
  ck_assert_double_eq_tol(c.res.achieved_bw_GBps, bytes / c.res.makespan_us * 1e-3, 1e-6);
  free_case(&c);
}
END_TEST

START_TEST(bandwidth_bound_with_inflight_limit) {
  /* H200-like per-SM in-flight bound (64 KiB / 700 ns = 93.6 GB/s per SM) with HBM at 200
   * GB/s on 4 SMs: the bound only bites in the tail, so total bytes / bandwidth holds within
   * 1%. */
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.hbm_bw_measured_GBps = 200;
  c.gpu.bytes_in_flight_per_sm = 65536;
  c.gpu.mem_latency_ns = 700;
  const int N = 400;
  int64_t l[400];
  for (int i = 0; i < N; i++) l[i] = 512 + 64 * (i % 5);
  c.w = av_test_flat_workload(N, l, 1);
  c.p = av_plan_create(c.w, "test");
  av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &TILE, 0), 0, N);
  run_case(&c, 0);
  double bytes = 0;
  for (int i = 0; i < N; i++) bytes += 2.0 * l[i] * 128 * 2;
  double expect = 2 + bytes / (200 * 1e3);
  ck_assert_double_ge(c.res.makespan_us, expect * (1 - 1e-9));
  ck_assert_double_le(c.res.makespan_us, expect * 1.01);
  free_case(&c);
}
END_TEST

START_TEST(long_cta_sets_tail) {
  /* One CTA 64x longer than 23 short ones: it finishes last, alone, at its in-flight bound,
   * and the bubble (idle SMs while it runs) is large. */
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.hbm_bw_measured_GBps = 200;
  c.gpu.bytes_in_flight_per_sm = 65536;
  c.gpu.mem_latency_ns = 700;
  const int N = 24;
  int64_t l[24];
  for (int i = 0; i < N; i++) l[i] = i == 5 ? 64 * 512 : 512;
  c.w = av_test_flat_workload(N, l, 1);
  c.p = av_plan_create(c.w, "test");
  av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &TILE, 0), 0, N);
  run_case(&c, 1);
  double long_bytes = 2.0 * 64 * 512 * 128 * 2, C = 65536 / 0.7; /* bytes/us */
  ck_assert_int_eq(c.tl.n, N);
  int last = 0;
  for (int i = 1; i < c.tl.n; i++)
    if (c.tl.ev[i].end_us > c.tl.ev[last].end_us) last = i;
  ck_assert_int_eq(c.tl.ev[last].item, 5);
  ck_assert_double_eq_tol(c.tl.ev[last].end_us, c.res.makespan_us, 1e-9);
  ck_assert_double_ge(c.res.makespan_us, 2 + long_bytes / C - 1e-6);
  /* the others are done long before: */
  for (int i = 0; i < c.tl.n; i++)
    if (i != last) ck_assert_double_lt(c.tl.ev[i].end_us, 0.5 * c.res.makespan_us);
  ck_assert_double_gt(c.res.bubble_frac, 0.5);
  free_case(&c);
}
END_TEST

static double two_launches(int same_stream) {
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.cta_fixed_us = 10;
  int64_t *l = av_test_lens(8, 1);
  c.w = av_test_flat_workload(8, l, 1);
  free(l);
  c.p = av_plan_create(c.w, "test");
  int32_t a = av_plan_add_launch(c.p, 0, &TILE, 0);
  int32_t b = av_plan_add_launch(c.p, same_stream ? 0 : 1, &TILE, 0);
  av_test_request_items(c.p, c.w, a, 0, 4);
  av_test_request_items(c.p, c.w, b, 4, 8);
  run_case(&c, 0);
  double m = c.res.makespan_us;
  if (same_stream) ck_assert_double_ge(c.res.launches[1].start_us, c.res.launches[0].end_us);
  free_case(&c);
  return m;
}

START_TEST(two_streams_overlap) {
  double serial = two_launches(1), overlapped = two_launches(0);
  /* alone, each launch takes overhead + 10 us */
  ck_assert_double_eq_tol(serial, 2 + 10 + 10, 1e-6);
  ck_assert_double_eq_tol(overlapped, 2 * 2 + 10, 1e-6);
  ck_assert_double_lt(overlapped, 2 * (2 + 10));
}
END_TEST

START_TEST(persistent_longest_queue) {
  /* Persistent grid of 3 CTAs with queues of 2, 5 and 3 fixed-cost items: the makespan is
   * the longest queue. */
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.cta_fixed_us = 10;
  int64_t *l = av_test_lens(10, 1);
  c.w = av_test_flat_workload(10, l, 1);
  free(l);
  c.p = av_plan_create(c.w, "test");
  int32_t L = av_plan_add_launch(c.p, 0, &PTILE, 3);
  const int cta_of[10] = {0, 1, 2, 1, 0, 1, 2, 1, 2, 1};
  int order[3] = {0, 0, 0};
  for (int32_t r = 0; r < 10; r++) {
    av_segment_t sg = {r, 0, 1};
    int k = cta_of[r];
    ck_assert_int_ge(av_plan_add_item(c.p, L, WORK1(&r, 1, &sg), AV_OUT_FINAL, k, order[k]++), 0);
  }
  run_case(&c, 1);
  ck_assert_double_eq_tol(c.res.makespan_us, 2 + 5 * 10.0, 1e-6);
  ck_assert_int_eq(c.res.launches[0].ctas, 3);
  ck_assert_int_eq(c.tl.n, 10);
  /* queue order is respected: CTA 1 runs items 1, 3, 5, 7, 9 back to back on one SM */
  double t = 2;
  for (int r = 1; r < 10; r += 2)
    for (int i = 0; i < c.tl.n; i++)
      if (c.tl.ev[i].item == r) {
        ck_assert_double_eq_tol(c.tl.ev[i].start_us, t, 1e-6);
        t = c.tl.ev[i].end_us;
      }
  free_case(&c);
}
END_TEST

/* k items all reading one node of `tokens` tokens: with an L2, one HBM read and k-1 L2 hits.
 * HBM binds, or with `inflight` each CTA's in-flight bound does (every CTA the same rate). */
static void l2_case(double l2_bytes, int k, int32_t tokens, int inflight, av_sim_result_t *out) {
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.l2_bytes = l2_bytes;
  c.gpu.hbm_bw_measured_GBps = inflight ? 1e6 : 100;
  c.gpu.l2_bw_GBps = inflight ? 1e6 : 1000;  /* a hit costs a miss's time */
  if (inflight) {
    c.gpu.bytes_in_flight_per_sm = 65536;
    c.gpu.mem_latency_ns = 700;
  }
  av_workload_t *w = av_workload_create(1, k);
  w->heads = av_test_heads_hkv(1);
  w->block_size_tokens = 16;
  w->nodes[0].parent = -1;
  w->nodes[0].kv_len_tokens = tokens;
  for (int i = 0; i < k; i++) w->request_node[i] = 0;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  c.w = w;
  c.p = av_plan_create(w, "test");
  int32_t L = av_plan_add_launch(c.p, 0, &TILE, 0);
  for (int32_t r = 0; r < k; r++) {
    av_segment_t sg = {0, 0, tokens};
    ck_assert_int_ge(av_plan_add_item(c.p, L, WORK1(&r, 1, &sg), AV_OUT_FINAL, -1, -1), 0);
  }
  run_case(&c, 0);
  *out = c.res;
  c.res.launches = NULL;
  free_case(&c);
}

START_TEST(l2_dedups_concurrent_reads) {
  const int k = 8;
  double node = 64.0 * 128 * 2 * 2;
  av_sim_result_t with, without, tiny, stream;
  l2_case(1 << 20, k, 64, 0, &with);
  l2_case(0, k, 64, 0, &without);
  ck_assert_double_eq_tol(with.hbm_bytes, node, 1e-6);
  ck_assert_double_eq_tol(with.l2_bytes, (k - 1) * node, 1e-6);
  ck_assert_double_eq_tol(without.hbm_bytes, k * node, 1e-6);
  ck_assert_double_eq_tol(without.l2_bytes, 0, 1e-12);
  ck_assert_double_lt(with.makespan_us, without.makespan_us);
  /* An L2 of one block (16 tokens) cannot hold the node: LRU thrashes, every read misses. */
  l2_case(16 * 128 * 2 * 2, k, 64, 0, &tiny);
  ck_assert_double_eq_tol(tiny.hbm_bytes, k * node, 1e-6);
  /* CTAs read their KV over their whole run (docs/simulator.md#l2-lines-in-reading-order):
   * k CTAs streaming a 1024-token node side by side at one rate hit each other's lines
   * although the node is four times the L2. Looked up at each CTA's start, every line would
   * have been evicted by the node's later lines before the next CTA asked for it. */
  l2_case(4 * node, k, 1024, 1, &stream);
  ck_assert_double_eq_tol(stream.hbm_bytes, 16 * node, 1e-6);
  ck_assert_double_eq_tol(stream.l2_bytes, (k - 1) * 16 * node, 1e-6);
  av_sim_result_free(&with);
  av_sim_result_free(&without);
  av_sim_result_free(&tiny);
  av_sim_result_free(&stream);
}
END_TEST

/* A plan with partial states (two items per request: the shared root and the leaf) on two
 * streams, plus its merge; hkv = 2. */
static void tree_case(sim_case_t *c) {
  setup_variants(SMEM_K3);
  *c = (sim_case_t){.gpu = test_gpu()};
  c->gpu.hbm_bw_measured_GBps = 300;
  c->gpu.bytes_in_flight_per_sm = 65536;
  c->gpu.mem_latency_ns = 700;
  c->gpu.cta_fixed_us = 0.3;
  c->gpu.l2_bytes = 4 << 20;
  c->gpu.l2_bw_GBps = 900;
  g_flops_per_token = 1e4;
  c->gpu.fp16_tensor_tflops = 0.5;
  const int R = 20;
  av_workload_t *w = av_workload_create(1 + R, R);
  w->heads = av_test_heads_hkv(2);
  w->block_size_tokens = 16;
  w->nodes[0].parent = -1;
  w->nodes[0].kv_len_tokens = 1000;
  for (int i = 0; i < R; i++) {
    w->nodes[1 + i].parent = 0;
    w->nodes[1 + i].kv_len_tokens = 100 + 37 * i;
    w->request_node[i] = 1 + i;
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  c->w = w;
  c->p = av_plan_create(w, "test");
  int32_t a = av_plan_add_launch(c->p, 0, &TILE, 0);
  int32_t b = av_plan_add_launch(c->p, 1, &TILE, 0);
  for (int32_t r = 0; r < R; r++) {
    av_segment_t sg = {0, 0, 1000};  /* five CTAs re-read the shared root: L2 hits */
    int32_t q[4] = {r, r + 1, r + 2, r + 3};
    if (r % 4 == 0)
      ck_assert_int_ge(av_plan_add_item(c->p, a, WORK1(q, 4, &sg), AV_OUT_PARTIAL, -1, -1), 0);
    av_segment_t leaf = {1 + r, 0, w->nodes[1 + r].kv_len_tokens};
    ck_assert_int_ge(av_plan_add_item(c->p, b, WORK1(&r, 1, &leaf), AV_OUT_PARTIAL, -1, -1), 0);
  }
}

START_TEST(merge_phase_follows) {
  sim_case_t c;
  tree_case(&c);
  run_case(&c, 1);
  ck_assert_double_gt(c.res.merge_us, 0);
  ck_assert_double_eq_tol(c.res.makespan_us, c.res.partial_us + c.res.merge_us, 1e-9);
  int merges = 0;
  for (int i = 0; i < c.tl.n; i++)
    if (c.tl.ev[i].item < 0) {
      merges++;
      ck_assert_double_ge(c.tl.ev[i].start_us, c.res.partial_us - 1e-9);
      ck_assert_int_eq(c.tl.ev[i].launch, 2);
    }
  ck_assert_int_eq(merges, 20 * 2); /* one request per merge CTA without a merge variant */
  ck_assert_int_eq(c.tl.n, c.p->n_items * 2 + merges);
  ck_assert_double_gt(c.res.l2_bytes, 0);
  ck_assert_double_gt(c.res.sm_busy_frac, 0);
  ck_assert_double_le(c.res.sm_busy_frac, 1);
  ck_assert_double_eq_tol(c.res.bubble_frac, 1 - c.res.sm_busy_frac, 1e-12);
  free_case(&c);
  g_flops_per_token = 0;
}
END_TEST

START_TEST(deterministic_outputs) {
  char path[2][256];
  av_sim_result_t r[2];
  for (int k = 0; k < 2; k++) {
    sim_case_t c;
    tree_case(&c);
    run_case(&c, 1);
    snprintf(path[k], sizeof path[k], "%s/engine_det_%ld_%d.json", AV_BINARY_DIR,
             (long)getpid(), k);
    av_error_t err;
    av_error_clear(&err);
    AV_CK_OK(av_timeline_write_chrome(&c.tl, c.p, path[k], &err), &err);
    r[k] = c.res;
    c.res.launches = NULL;
    free_case(&c);
  }
  g_flops_per_token = 0;
  ck_assert_double_eq(r[0].makespan_us, r[1].makespan_us);
  ck_assert_double_eq(r[0].hbm_bytes, r[1].hbm_bytes);
  ck_assert_double_eq(r[0].l2_bytes, r[1].l2_bytes);
  ck_assert_double_eq(r[0].bubble_frac, r[1].bubble_frac);
  ck_assert_int_eq(r[0].n_launches, r[1].n_launches);
  ck_assert_int_eq(memcmp(r[0].launches, r[1].launches,
                          sizeof *r[0].launches * (size_t)r[0].n_launches), 0);
  char *a = av_test_read_file(path[0]), *b = av_test_read_file(path[1]);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  remove(path[0]);
  remove(path[1]);
  av_sim_result_free(&r[0]);
  av_sim_result_free(&r[1]);
}
END_TEST

START_TEST(timeline_is_chrome_json) {
  sim_case_t c;
  tree_case(&c);
  run_case(&c, 1);
  char path[256];
  snprintf(path, sizeof path, "%s/engine_tl_%ld.json", AV_BINARY_DIR, (long)getpid());
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_timeline_write_chrome(&c.tl, c.p, path, &err), &err);
  json_error_t je;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
  ck_assert_msg(root != NULL, "%s:%d: %s", path, je.line, je.text);
  json_t *evs = json_object_get(root, "traceEvents");
  ck_assert(json_is_array(evs));
  size_t i, complete = 0;
  json_t *ev;
  json_array_foreach(evs, i, ev) {
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    ck_assert_ptr_nonnull(ph);
    if (strcmp(ph, "X") != 0) continue;
    complete++;
    ck_assert(json_is_number(json_object_get(ev, "ts")));
    ck_assert(json_number_value(json_object_get(ev, "dur")) >= 0);
    ck_assert(json_is_integer(json_object_get(ev, "tid")));
    ck_assert(json_is_integer(json_object_get(json_object_get(ev, "args"), "item")));
  }
  ck_assert_int_eq((int)complete, c.tl.n);
  ck_assert_int_eq((int)complete, c.p->n_items * 2 + 40);
  json_decref(root);
  remove(path);
  /* an unwritable path fails cleanly and leaves nothing behind */
  av_error_clear(&err);
  ck_assert_int_eq(av_timeline_write_chrome(&c.tl, c.p, "/nonexistent-dir/x.json", &err),
                   AV_ERR_IO);
  free_case(&c);
  g_flops_per_token = 0;
}
END_TEST

START_TEST(compute_shares_sm) {
  /* FLOP-bound CTAs: 2 CTAs on one SM share its tensor rate, so 2 CTAs take as long as 2 x
   * one CTA alone on the SM; 1 CTA per SM (4 CTAs) take one CTA time. */
  setup_variants(SMEM_K3);
  g_flops_per_token = 1e6;
  double t[2];
  for (int k = 0; k < 2; k++) {
    sim_case_t c = {.gpu = test_gpu()};
    c.gpu.sm_count = k == 0 ? 4 : 2;
    c.gpu.fp16_tensor_tflops = 4e-6 * c.gpu.sm_count; /* 4 FLOP/us per SM */
    int64_t *l = av_test_lens(4, 100);
    c.w = av_test_flat_workload(4, l, 1);
    free(l);
    c.p = av_plan_create(c.w, "test");
    av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &TILE, 0), 0, 4);
    run_case(&c, 0);
    t[k] = c.res.makespan_us - 2;
    free_case(&c);
  }
  g_flops_per_token = 0;
  /* per SM rate 4 flop/us; a CTA = 1e8 flop: alone 2.5e7 us; two sharing: 5e7 us */
  ck_assert_double_eq_tol(t[0], 1e8 / 4, 1e-3);
  ck_assert_double_eq_tol(t[1], 2 * 1e8 / 4, 1e-3);
}
END_TEST

/* A measured cost model (AV_COST_MEASURED_CTAS): a CTA alone takes
 * 3 us + its KV bytes at 10 GB/s (FlashForge §5.2's C(n_q, n), linear in n). */
static void pc_estimate(const void *state, const av_cost_env_t *env, const av_cost_query_t *q,
                        av_item_cost_t *out) {
  (void)state;
  out->hbm_bytes = 2.0 * (double)q->kv_tokens * env->heads->head_dim * 2;
  out->flops = 1e12;  /* inside the measured time: must not be simulated again */
  out->time_us = 3 + out->hbm_bytes / 1e4;
}
static const av_costmodel_ops_t pc_ops = {.name = "measured", .description = "test",
                                          .estimate = pc_estimate,
                                          .flags = AV_COST_MEASURED_CTAS};

static double profile_case(int n_ctas, double hbm_GBps) {
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  c.gpu.hbm_bw_measured_GBps = hbm_GBps;
  c.gpu.fp16_tensor_tflops = 1e-3;  /* would dominate if FLOPs were simulated */
  c.gpu.bytes_in_flight_per_sm = 1;  /* a per-SM bound is not applied to profiled CTAs */
  c.gpu.mem_latency_ns = 1000;
  int64_t *l = av_test_lens(n_ctas, 4096);
  c.w = av_test_flat_workload(n_ctas, l, 1);
  c.p = av_plan_create(c.w, "test");
  av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &TILE, 0), 0, n_ctas);
  av_error_t err;
  av_error_clear(&err);
  av_cost_env_t env = {.gpu = &c.gpu, .heads = &c.w->heads, .variants = &g_variants};
  c.cost = av_costmodel_create(&pc_ops, NULL, &env, &err);
  ck_assert_ptr_nonnull(c.cost);
  run_case(&c, 0);
  double t = c.res.makespan_us;
  free_case(&c);
  free(l);
  return t;
}

START_TEST(profile_time_per_cta) {
  /* The per-CTA model under a measured cost model: a lone CTA takes exactly its C(n_q, n)
   * after the launch; 12 CTAs, 3 per SM, each bring their own in-flight bytes, so each still
   * takes C; with HBM at 30 GB/s the 12 share it (2.5 GB/s each) after their fixed 3 us. */
  const double kv = 4096.0 * 128 * 2 * 2;
  double lone = 2 + 3 + kv / 1e4;
  ck_assert_double_eq_tol(profile_case(1, 1e9), lone, 1e-9 * lone);
  ck_assert_double_eq_tol(profile_case(12, 1e9), lone, 1e-9 * lone);
  double shared = 2 + 3 + kv / 2.5e3;
  ck_assert_double_eq_tol(profile_case(12, 30), shared, 1e-9 * shared);
}
END_TEST

START_TEST(missing_variant_is_an_error) {
  setup_variants(SMEM_K3);
  sim_case_t c = {.gpu = test_gpu()};
  int64_t *l = av_test_lens(2, 1);
  c.w = av_test_flat_workload(2, l, 1);
  free(l);
  c.p = av_plan_create(c.w, "test");
  av_tile_t other = {AV_KERNEL_PARTIAL, 64, 128, 8};
  av_test_request_items(c.p, c.w, av_plan_add_launch(c.p, 0, &other, 0), 0, 2);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(c.p, &err), &err);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE};
  int rc =
      av_sim_run(&cfg, &(av_sim_input_t){c.p, c.w, &c.gpu, &g_variants, NULL}, &c.res, NULL, &err);
  ck_assert_int_eq(rc, AV_ERR_UNSUPPORTED);
  ck_assert_str_eq(err.path, "launches[0].tile");
  ck_assert_ptr_nonnull(strstr(err.message, "m=64 n=128"));
  free_case(&c);
}
END_TEST

static Suite *engine_suite(void) {
  Suite *s = suite_create("engine");
  TCase *tc = tcase_create("closed_forms");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, waves_closed_form);
  tcase_add_test(tc, waves_with_gqa_heads);
  tcase_add_test(tc, bandwidth_bound_total_bytes);
  tcase_add_test(tc, bandwidth_bound_with_inflight_limit);
  tcase_add_test(tc, long_cta_sets_tail);
  tcase_add_test(tc, two_streams_overlap);
  tcase_add_test(tc, persistent_longest_queue);
  tcase_add_test(tc, l2_dedups_concurrent_reads);
  tcase_add_test(tc, compute_shares_sm);
  tcase_add_test(tc, merge_phase_follows);
  tcase_add_test(tc, profile_time_per_cta);
  suite_add_tcase(s, tc);
  TCase *out = tcase_create("outputs");
  tcase_add_test(out, deterministic_outputs);
  tcase_add_test(out, timeline_is_chrome_json);
  tcase_add_test(out, missing_variant_is_an_error);
  suite_add_tcase(s, out);
  return s;
}

int main(void) { return av_test_run(engine_suite(), 0); }
