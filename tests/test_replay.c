/* Trace replay: measured durations through the dispatch model (closed forms), and bad trace
 * files rejected with the key path (data-driven: tests/data/replay/bad/<case>/). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/plan.h"
#include "sim/replay.h"
#include "sim/sim.h"
#include "support.h"

/* The small test GPU: 100 GB/s HBM, 1 MiB of L2 at 300 GB/s, 0.7 us latency. */
static av_gpu_t test_gpu(void) {
  av_gpu_t g = av_test_small_gpu();
  g.hbm_bw_measured_GBps = 100;
  g.l2_bytes = 1 << 20;
  g.l2_bw_GBps = 300;
  g.mem_latency_ns = 700;
  g.bytes_in_flight_per_sm = 65536;
  g.fp16_tensor_tflops = 100;
  g.launch_overhead_us = 2;
  g.cta_fixed_us = 0.5;
  return g;
}

static const av_tile_t TILE = {AV_KERNEL_PARTIAL, 16, 64, 4};
static const av_tile_t PTILE = {AV_KERNEL_PERSISTENT, 16, 64, 4};
static av_variant_t g_var[2];
static av_variants_t g_variants = {2, g_var};

/* 3 CTAs per SM: 76800 B of shared memory + 1 KiB reserved = 77824 B of 233472. */
static void setup_variants(void) { av_test_tile_variants(g_var, 76800); }

/* n requests each on its own root of 64 tokens, hkv heads; one FINAL item per request on a
 * grid launch, or on a persistent launch of `pctas` CTAs (item r on CTA r mod pctas). */
static void build(int n, int hkv, int pctas, av_workload_t **w_out, av_plan_t **p_out) {
  av_workload_t *w = av_workload_create(n, n);
  w->heads = (av_heads_t){.hq = 4 * hkv, .hkv = hkv, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  w->block_size_tokens = 16;
  for (int i = 0; i < n; i++) {
    w->nodes[i].parent = -1;
    w->nodes[i].kv_len_tokens = 64;
    w->request_node[i] = i;
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  av_plan_t *p = av_plan_create(w, "test");
  int32_t L = av_plan_add_launch(p, 0, pctas ? &PTILE : &TILE, pctas);
  for (int32_t r = 0; r < n; r++) {
    av_segment_t sg = {r, 0, 64};
    ck_assert_int_ge(av_plan_add_item(p, L, (av_item_work_t){&r, 1, &sg, 1}, AV_OUT_FINAL,
                                      pctas ? r % pctas : -1, pctas ? r / pctas : -1),
                     0);
  }
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  *w_out = w;
  *p_out = p;
}

/* A trace of the plan with duration dur(i, h) = base + step * i per (item, head). */
static char *write_trace(const av_plan_t *p, double base, double step, double makespan) {
  static char path[256];
  snprintf(path, sizeof path, "%s/replay_%ld.json", AV_BINARY_DIR, (long)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"gpu\": \"test-gpu\", \"makespan_us\": %g, \"ctas\": [", makespan);
  int first = 1;
  for (int32_t i = 0; i < p->n_items; i++)
    for (int h = 0; h < p->heads.hkv; h++) {
      fprintf(f, "%s{\"item\": %d, \"head\": %d, \"sm\": 0, \"start_us\": 1, \"end_us\": %g}",
              first ? "" : ",", i, h, 1 + base + step * i);
      first = 0;
    }
  fputs("]}\n", f);
  fclose(f);
  return path;
}

static void replay(const av_plan_t *p, const av_workload_t *w, const char *path,
                   av_replay_result_t *r, av_timeline_t *tl) {
  av_gpu_t g = test_gpu();
  av_error_t err;
  av_error_clear(&err);
  av_replay_trace_t t;
  AV_CK_OK(av_replay_load(path, p, &t, &err), &err);
  AV_CK_OK(av_replay_run(&t, p, w, &g, &g_variants, r, tl, &err), &err);
  av_replay_trace_free(&t);
}

START_TEST(replay_waves) {
  /* 30 items x 1 head of 10 us each, 12 slots: 3 waves, whatever the bytes would say. */
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  build(30, 1, 0, &w, &p);
  const char *path = write_trace(p, 10, 0, 32);
  av_replay_result_t r;
  av_timeline_t tl = {0, 0, NULL};
  replay(p, w, path, &r, &tl);
  ck_assert_double_eq_tol(r.replayed_us, 2 + 30, 1e-6);
  ck_assert_double_eq_tol(r.rel_err, 0, 1e-9);
  ck_assert_double_eq_tol(r.measured_cta_us, 300, 1e-9);
  ck_assert_int_eq(tl.n, 30);
  for (int i = 0; i < tl.n; i++)
    ck_assert_double_eq_tol(tl.ev[i].end_us - tl.ev[i].start_us, 10, 1e-9);
  ck_assert_double_eq_tol(r.sim.hbm_bytes, 0, 1e-12); /* durations fixed: no byte model */
  remove(path);
  av_timeline_free(&tl);
  av_replay_result_free(&r);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* The spec's dispatch terms (docs/simulator.md#grids-and-dispatch): a grid CTA that refills a
 * slot holds it cta_dispatch_us longer than its traced time (a launch's first wave starts at
 * once), a persistent CTA's queued items do not, and the next launch of a stream starts
 * stream_gap_us after the previous one's last CTA. */
static double replay_gpu(const av_plan_t *p, const av_workload_t *w, const char *path,
                         const av_gpu_t *gpu) {
  av_gpu_t g = *gpu;
  av_error_t err;
  av_error_clear(&err);
  av_replay_trace_t t;
  av_replay_result_t r;
  AV_CK_OK(av_replay_load(path, p, &t, &err), &err);
  AV_CK_OK(av_replay_run(&t, p, w, &g, &g_variants, &r, NULL, &err), &err);
  double us = r.replayed_us;
  av_replay_trace_free(&t);
  av_replay_result_free(&r);
  return us;
}

static double replay_with(const av_plan_t *p, const av_workload_t *w, const char *path,
                          double cta_us, double gap_us) {
  av_gpu_t g = test_gpu();
  g.cta_dispatch_us = cta_us;
  g.stream_gap_us = gap_us;
  return replay_gpu(p, w, path, &g);
}

START_TEST(replay_dispatch_terms) {
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  /* grid: 30 CTAs of 10 us on 12 slots, 3 in a row on a slot, the first without the refill
   * gap: 2 + 10 + 2 x (10 + 0.5) */
  build(30, 1, 0, &w, &p);
  const char *path = write_trace(p, 10, 0, 32);
  ck_assert_double_eq_tol(replay_with(p, w, path, 0, 0), 32, 1e-6);
  ck_assert_double_eq_tol(replay_with(p, w, path, 0.5, 0), 2 + 10 + 2 * 10.5, 1e-6);
  remove(path);
  av_plan_destroy(p);
  av_workload_destroy(w);
  /* persistent: 12 queues of up to 3 items, the dispatch cost is not per item */
  build(30, 1, 12, &w, &p);
  path = write_trace(p, 10, 0, 32);
  ck_assert_double_eq_tol(replay_with(p, w, path, 0.5, 0), 32, 1e-6);
  remove(path);
  av_plan_destroy(p);
  av_workload_destroy(w);
  /* two launches of 12 CTAs on one stream: the second starts at max(its issue at 4, 12 + gap) */
  build(24, 1, 0, &w, &p);
  int32_t l1 = av_plan_add_launch(p, 0, &TILE, 0);
  ck_assert_int_eq(l1, 1);
  for (int32_t i = 12; i < 24; i++) p->items[i].launch = l1;
  path = write_trace(p, 10, 0, 32);
  ck_assert_double_eq_tol(replay_with(p, w, path, 0, 0), 22, 1e-6);
  ck_assert_double_eq_tol(replay_with(p, w, path, 0, 3), 25, 1e-6);
  /* each launch is one first wave: no refill gap */
  ck_assert_double_eq_tol(replay_with(p, w, path, 0.5, 3), 2 + 10 + 3 + 10, 1e-6);
  remove(path);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* A plan run as one CUDA graph (docs/kernels.md#launch-models): its kernels are ready at the
 * graph's start instead of one host issue each. Without graph figures the spec charges the
 * one host launch and its stream figures; with them, no issue, the graph's gap and its tail. */
START_TEST(replay_graph_launches) {
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  /* two launches of 6 CTAs of 10 us on two streams: streams issue them at 2 and 4 */
  build(12, 1, 0, &w, &p);
  ck_assert_int_eq(av_plan_add_launch(p, 1, &TILE, 0), 1);
  for (int32_t i = 6; i < 12; i++) p->items[i].launch = 1;
  const char *path = write_trace(p, 10, 0, 32);
  av_gpu_t g = test_gpu();
  g.stream_gap_us = 3;
  ck_assert_double_eq_tol(replay_gpu(p, w, path, &g), 4 + 10, 1e-6);
  p->launch_model = AV_LAUNCH_GRAPH;
  ck_assert_double_eq_tol(replay_gpu(p, w, path, &g), 2 + 10, 1e-6);
  g.graph_run_tail_us = 1.5;
  ck_assert_double_eq_tol(replay_gpu(p, w, path, &g), 10 + 1.5, 1e-6);
  remove(path);
  /* the same launches on one stream: the second follows the first after the gap */
  p->launches[1].stream = 0;
  p->launch_model = AV_LAUNCH_STREAMS;
  path = write_trace(p, 10, 0, 32);
  ck_assert_double_eq_tol(replay_gpu(p, w, path, &g), 2 + 10 + 3 + 10, 1e-6);
  p->launch_model = AV_LAUNCH_GRAPH;
  g.graph_stream_gap_us = 0.25;
  ck_assert_double_eq_tol(replay_gpu(p, w, path, &g), 10 + 0.25 + 10 + 1.5, 1e-6);
  remove(path);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(replay_long_tail_and_error) {
  /* 8 items x 2 heads, item i lasts 1 + 3i us; 16 CTAs on 12 slots. The grid is head-major
   * (CTA c = item c mod 8 of head c / 8); CTAs 0..11 start at 2 us. Items 0 of both heads end
   * at 3 us and free two slots for CTAs 12, 13 (items 4, 5 of head 1: 13 and 16 us); items 1
   * end at 6 us, freeing slots for CTAs 14, 15 (items 6, 7: 19 and 22 us): the last ends at
   * 6 + 22 = 28 us. */
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  build(8, 2, 0, &w, &p);
  const char *path = write_trace(p, 1, 3, 10);
  av_replay_result_t r;
  replay(p, w, path, &r, NULL);
  /* head-major grid: CTAs 0..7 = head 0 items 0..7, 8..15 = head 1; first 12 start at 2 us.
   * Slot freed first: item 0 head 0 at 3 us -> CTA 12 (head 1 item 4, 13 us) ends at 16;
   * the longest, item 7 (22 us), of head 1 (CTA 15) starts when the 4th slot frees. */
  ck_assert_double_eq_tol(r.replayed_us, 28, 1e-6);
  ck_assert_double_eq_tol(r.rel_err, (r.replayed_us - 10) / 10, 1e-12);
  remove(path);
  av_replay_result_free(&r);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(replay_persistent_queues) {
  /* 10 items on 3 persistent CTAs (queues of 4, 3, 3), 5 us each: 2 + 4 x 5. */
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  build(10, 1, 3, &w, &p);
  const char *path = write_trace(p, 5, 0, 22);
  av_replay_result_t r;
  replay(p, w, path, &r, NULL);
  ck_assert_double_eq_tol(r.replayed_us, 22, 1e-6);
  remove(path);
  av_replay_result_free(&r);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

START_TEST(replay_good_file_and_gpu_mismatch) {
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  build(2, 2, 0, &w, &p);
  av_replay_result_t r;
  replay(p, w, AV_TEST_DIR "/data/replay/good_trace.json", &r, NULL);
  ck_assert_double_eq_tol(r.replayed_us, 7, 1e-6);
  ck_assert_double_eq_tol(r.rel_err, (7 - 17.5) / 17.5, 1e-12);
  av_replay_result_free(&r);
  /* a trace from another GPU is refused */
  av_gpu_t g = test_gpu();
  snprintf(g.name, sizeof g.name, "other");
  av_error_t err;
  av_error_clear(&err);
  av_replay_trace_t t;
  AV_CK_OK(av_replay_load(AV_TEST_DIR "/data/replay/good_trace.json", p, &t, &err), &err);
  ck_assert_int_eq(av_replay_run(&t, p, w, &g, &g_variants, &r, NULL, &err), AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "gpu");
  av_replay_trace_free(&t);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* Every tests/data/replay/bad/<case>/trace.json fails to load with the expected path and
 * message fragment. */
START_TEST(replay_bad_inputs) {
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  build(2, 2, 0, &w, &p);
  const char *dir = AV_TEST_DIR "/data/replay/bad";
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  struct dirent *de;
  int cases = 0;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char trace[1024], expect[1024];
    snprintf(trace, sizeof trace, "%s/%s/trace.json", dir, de->d_name);
    snprintf(expect, sizeof expect, "%s/%s/expected_error", dir, de->d_name);
    char *want = av_test_read_file(expect);
    ck_assert_msg(want != NULL, "%s: missing expected_error", de->d_name);
    char *nl = strchr(want, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    char *msg = nl + 1, *end = strchr(msg, '\n');
    if (end) *end = '\0';
    av_error_t err;
    av_error_clear(&err);
    av_replay_trace_t t;
    int rc = av_replay_load(trace, p, &t, &err);
    ck_assert_msg(rc != AV_OK, "%s: accepted a bad trace", de->d_name);
    ck_assert_msg(av_error_exit_class(rc) == 1, "%s: %s is not a user error", de->d_name,
                  av_error_code_name(rc));
    ck_assert_msg(strstr(err.source, "trace.json") != NULL, "%s: source '%s'", de->d_name,
                  err.source);
    if (want[0]) ck_assert_msg(strcmp(err.path, want) == 0, "%s: path '%s', expected '%s'",
                               de->d_name, err.path, want);
    if (msg[0]) ck_assert_msg(strstr(err.message, msg) != NULL, "%s: message '%s' lacks '%s'",
                              de->d_name, err.message, msg);
    ck_assert_ptr_null(t.ctas);
    free(want);
    cases++;
  }
  closedir(d);
  ck_assert_int_ge(cases, 10);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

/* The cost model's CTAs beside the measured ones: item CTAs paired by (item, head), merge
 * CTAs compared as distributions (here predicted only: the trace has no merge records). */
START_TEST(replay_compare_ctas) {
  setup_variants();
  av_workload_t *w;
  av_plan_t *p;
  build(4, 2, 0, &w, &p);
  av_error_t err;
  av_error_clear(&err);
  av_replay_trace_t t;
  AV_CK_OK(av_replay_load(write_trace(p, 2, 1, 20), p, &t, &err), &err);
  /* predicted: half of each measured duration (2 + i), in reverse order; two merge CTAs */
  av_cta_event_t ev[10];
  int k = 0;
  for (int i = 3; i >= 0; i--)
    for (int h = 1; h >= 0; h--)
      ev[k++] = (av_cta_event_t){.item = i, .head = h, .start_us = 1, .end_us = 1 + (2 + i) / 2.0};
  ev[k++] = (av_cta_event_t){.item = -1, .launch = 1, .start_us = 10, .end_us = 13};
  ev[k++] = (av_cta_event_t){.item = -1, .launch = 1, .head = 1, .start_us = 10, .end_us = 15};
  av_timeline_t tl = {k, k, ev};
  av_replay_cta_cmp_t *c = NULL;
  int32_t n = 0;
  AV_CK_OK(av_replay_compare(&t, p, &tl, &c, &n, &err), &err);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(c[0].launch, 0);
  ck_assert_int_eq(c[0].ctas, 8);
  /* measured 2, 2, 3, 3, 4, 4, 5, 5: median 3.5; 90th percentile x[6] + 0.3 (x[7] - x[6]) */
  ck_assert_double_eq_tol(c[0].meas_median_us, 3.5, 1e-12);
  ck_assert_double_eq_tol(c[0].meas_p90_us, 5, 1e-12);
  ck_assert_double_eq_tol(c[0].pred_median_us, 1.75, 1e-12);
  ck_assert_double_eq_tol(c[0].ratio_median, 2, 1e-12);
  ck_assert_int_eq(c[1].launch, -1);
  ck_assert_int_eq(c[1].ctas, 0);
  ck_assert_double_eq_tol(c[1].pred_median_us, 4, 1e-12);
  ck_assert_double_eq_tol(c[1].ratio_median, 0, 1e-12);
  free(c);
  av_replay_trace_free(&t);
  av_plan_destroy(p);
  av_workload_destroy(w);
}
END_TEST

static Suite *replay_suite(void) {
  Suite *s = suite_create("replay");
  TCase *tc = tcase_create("replay");
  tcase_add_test(tc, replay_waves);
  tcase_add_test(tc, replay_long_tail_and_error);
  tcase_add_test(tc, replay_persistent_queues);
  tcase_add_test(tc, replay_good_file_and_gpu_mismatch);
  tcase_add_test(tc, replay_bad_inputs);
  tcase_add_test(tc, replay_dispatch_terms);
  tcase_add_test(tc, replay_graph_launches);
  tcase_add_test(tc, replay_compare_ctas);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(replay_suite(), 0); }
