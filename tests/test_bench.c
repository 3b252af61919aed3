/* The benchmarks' inputs (bench/bench_batches.c, bench/bench_workload.c): the realistic batches
 * have the shapes the docs describe and are the same forests on every run and machine (their
 * structure hashes are pinned: the speed records and the committed instruction count were
 * measured on exactly these), and the fixed workload plans and simulates all of its plans. */
#include <string.h>

#include "cli/bench.h"
#include "cli/bench_batches.h"
#include "support.h"

static const av_bench_batch_t *batch(const char *name) {
  for (int i = 0; i < av_bench_n_realistic; i++)
    if (strcmp(av_bench_realistic[i].name, name) == 0) return &av_bench_realistic[i];
  ck_abort_msg("no realistic batch %s", name);
  return NULL;
}

START_TEST(test_shapes) {
  av_error_t err;
  av_error_clear(&err);
  const struct {
    const char *name;
    int32_t requests, depth;
    int64_t root_tokens; /* 0: not checked */
  } want[] = {{"doc-32k", 128, 2, 32768},  {"doc-64k", 128, 2, 65536},
              {"doc-128k", 128, 2, 131072}, {"conversation", 128, 3, 0},
              {"thoughts", 256, 5, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    av_workload_t *w = av_bench_batch_build(batch(want[i].name), &err);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(w->n_requests, want[i].requests);
    ck_assert_int_eq(w->max_depth, want[i].depth);
    ck_assert_int_eq(w->heads.hq, 32);
    ck_assert_int_eq(w->heads.hkv, 8);
    if (want[i].root_tokens) ck_assert_int_eq(w->nodes[0].kv_len_tokens, want[i].root_tokens);
    for (int32_t r = 0; r < w->n_requests; r++) /* every request has its own last node */
      ck_assert_int_eq(w->nodes[w->request_node[r]].share, 1);
    av_workload_destroy(w);
  }
  av_workload_t *s = av_bench_batch_build(batch("speculative"), &err);
  ck_assert_ptr_nonnull(s);
  int roots = 0;
  for (int32_t u = 0; u < s->n_nodes; u++) roots += s->nodes[u].parent < 0;
  ck_assert_int_eq(roots, 16);
  for (int32_t u = 0; u < s->n_nodes; u++) /* token-tree nodes are 1-4 tokens */
    if (s->nodes[u].parent >= 0) ck_assert_int_le(s->nodes[u].kv_len_tokens, 4);
  av_workload_destroy(s);
}
END_TEST

/* The same seed grows the same forest; these hashes change only with the batches. */
START_TEST(test_pinned) {
  av_error_t err;
  av_error_clear(&err);
  uint64_t h[16];
  ck_assert_int_le(av_bench_n_realistic, 16);
  for (int i = 0; i < av_bench_n_realistic; i++) {
    av_workload_t *a = av_bench_batch_build(&av_bench_realistic[i], &err);
    av_workload_t *b = av_bench_batch_build(&av_bench_realistic[i], &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert(av_workload_equal(a, b));
    h[i] = av_workload_hash(a);
    for (int j = 0; j < i; j++) ck_assert(h[j] != h[i]);
    av_workload_destroy(a);
    av_workload_destroy(b);
  }
  static const uint64_t pinned[] = {0xb370b4c215997c69ull, 0x599a47ce7bea101cull,
                                    0x8b5fb11bc90303eaull, 0x6118d877452f6d8dull,
                                    0x6d5b2a4e0f8722c2ull, 0x1fcb7afb76663705ull};
  ck_assert_int_eq((int)(sizeof pinned / sizeof pinned[0]), av_bench_n_realistic);
  for (int i = 0; i < av_bench_n_realistic; i++)
    ck_assert_msg(h[i] == pinned[i], "%s: hash 0x%016llxull, pinned 0x%016llxull",
                  av_bench_realistic[i].name, (unsigned long long)h[i],
                  (unsigned long long)pinned[i]);
}
END_TEST

START_TEST(test_workload_runs) {
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t gpu;
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
  av_heads_t h = av_test_heads();
  av_variants_t *vs = av_test_variants(&gpu, &h);
  av_bench_workload_plan_t out[AV_BENCH_WORKLOAD_PLANS];
  memset(out, 0, sizeof out);
  AV_CK_OK(av_bench_workload_run(&gpu, vs, out, &err), &err);
  for (int i = 0; i < AV_BENCH_WORKLOAD_PLANS; i++) {
    ck_assert_ptr_nonnull(out[i].batch);
    ck_assert_int_gt(out[i].items, 0);
    ck_assert_int_gt(out[i].ctas, 0);
    ck_assert(out[i].makespan_us > 0 && out[i].hbm_bytes > 0);
  }
  ck_assert_str_eq(out[0].batch, "doc-32k"); /* one plan under a long shared document */
  av_variants_destroy(vs);
}
END_TEST

static Suite *bench_suite(void) {
  Suite *s = suite_create("bench");
  TCase *tc = tcase_create("inputs");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_shapes);
  tcase_add_test(tc, test_pinned);
  tcase_add_test(tc, test_workload_runs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(bench_suite(), 0); }
