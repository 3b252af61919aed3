/* Workload module: every builder against hand-computed structure, the published PAT and
 * FastTree trees, the H200 reference figures, random determinism, block-table round trips
 * and node splitting, traces (workload specs in JSON: tests/test_workload_json.c). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"
#include "tests/support.h"

#define DATA AV_TEST_DIR "/data/workloads/"
#define EXPERIMENTS AV_TEST_DIR "/../experiments/workloads/"

START_TEST(test_levels_hand_computed) {
  const int64_t B[] = {1, 4, 16}, L[] = {128, 256, 1024};
  av_workload_t *w = av_test_levels(B, L, 3);
  ck_assert_int_eq(w->n_nodes, 21);
  ck_assert_int_eq(w->n_requests, 16);
  ck_assert_int_eq(w->max_depth, 3);
  ck_assert_int_eq(w->nodes[0].share, 16);
  for (int i = 1; i <= 4; i++) {
    ck_assert_int_eq(w->nodes[i].parent, 0);
    ck_assert_int_eq(w->nodes[i].share, 4);
    ck_assert_int_eq(w->nodes[i].path_offset_tokens, 128);
  }
  for (int j = 0; j < 16; j++) {
    ck_assert_int_eq(w->nodes[5 + j].parent, 1 + j / 4);
    ck_assert_int_eq(w->nodes[5 + j].depth, 2);
    ck_assert_int_eq(w->request_node[j], 5 + j);
    ck_assert_int_eq(w->request_kv_tokens[j], 128 + 256 + 1024);
  }
  /* node_reqs: requests below node 2 are 4..7, in order. */
  ck_assert_int_eq(w->node_req_offsets[3] - w->node_req_offsets[2], 4);
  for (int k = 0; k < 4; k++) ck_assert_int_eq(w->node_reqs[w->node_req_offsets[2] + k], 4 + k);
  ck_assert_int_eq(w->nodes[0].first_child, 1);
  ck_assert_int_eq(w->nodes[1].next_sibling, 2);
  ck_assert_int_eq(w->nodes[4].next_sibling, -1);
  av_workload_stats_t s;
  av_workload_stats(w, &s);
  ck_assert_int_eq(s.requests, 16);
  ck_assert_int_eq(s.nodes, 21);
  ck_assert_int_eq(s.depth, 3);
  ck_assert_int_eq(s.roots, 1);
  ck_assert_int_eq(s.leaves, 16);
  ck_assert_int_eq(s.unique_kv_tokens, 128 + 4 * 256 + 16 * 1024);
  ck_assert_int_eq(s.query_centric_kv_tokens, 16 * (128 + 256 + 1024));
  ck_assert_double_eq(s.max_share, 16);
  ck_assert_double_eq_tol(s.mean_share, (16.0 + 4 * 4 + 16) / 21, 1e-12);
  double bpt = 8 * 128 * 2 * 2; /* hkv x d x (K,V) x fp16 */
  ck_assert_double_eq(s.unique_kv_bytes, s.unique_kv_tokens * bpt);
  ck_assert_double_eq(s.query_centric_kv_bytes, s.query_centric_kv_tokens * bpt);
  ck_assert_double_eq_tol(s.sharing_ratio, 16.0 * 1408 / 17536, 1e-12);
  ck_assert_double_eq_tol(av_workload_floor_us(w, 1000.0), s.unique_kv_bytes / 1e12 * 1e6, 1e-9);
  ck_assert_str_eq(w->name, "levels B=[1,4,16] L=[128,256,1024]");
  av_workload_destroy(w);
}
END_TEST

/* The roofline floor: a long document shared by many GQA-8 queries is compute-bound, a
 * short shared prompt memory-bound; the floor is the larger part either way. */
START_TEST(test_roofline_floor) {
  av_gpu_t g = {.hbm_bw_measured_GBps = 4000.0, .fp16_tensor_tflops = 1000.0};
  const av_heads_t heads = {.hq = 64, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  const int64_t B[] = {1, 128}, doc[] = {100000, 16}, chat[] = {2048, 512};
  av_floor_t f;
  av_error_t err;
  av_workload_t *w = av_workload_from_levels(B, doc, 2, &heads, &err);
  ck_assert_ptr_nonnull(w);
  const double flops = 4.0 * 64 * 128 * 128 * (100000 + 16);
  ck_assert_double_eq_tol(av_workload_flops(w), flops, 1.0);
  av_workload_floor(w, &g, &f);
  ck_assert_double_eq_tol(f.compute_us, flops / 1e15 * 1e6, 1e-9); /* 1000 TFLOP/s */
  ck_assert_double_eq_tol(f.mem_us, av_workload_floor_us(w, 4000.0), 1e-12);
  ck_assert(f.compute_us > f.mem_us);
  ck_assert_double_eq(f.us, f.compute_us);
  av_workload_destroy(w);
  w = av_workload_from_levels(B, chat, 2, &heads, &err);
  ck_assert_ptr_nonnull(w);
  av_workload_floor(w, &g, &f);
  ck_assert(f.mem_us > f.compute_us && f.compute_us > 0);
  ck_assert_double_eq(f.us, f.mem_us);
  /* a measured read stream is the floor's bandwidth (the copy stays the simulator's); the
   * datasheet's gives the datasheet floor */
  g.hbm_bw_read_GBps = 5000.0;
  g.hbm_bw_datasheet_GBps = 8000.0;
  av_workload_floor(w, &g, &f);
  ck_assert_double_eq_tol(f.mem_us, av_workload_floor_us(w, 5000.0), 1e-12);
  ck_assert_double_eq_tol(f.datasheet_us, av_workload_floor_us(w, 8000.0), 1e-12);
  ck_assert_double_eq(f.us, f.mem_us);
  g.fp16_tensor_tflops = 0; /* a spec without a tensor rate: the bytes alone */
  av_workload_floor(w, &g, &f);
  ck_assert_double_eq(f.compute_us, 0.0);
  ck_assert_double_eq(f.us, f.mem_us);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_levels_uneven_spread) {
  /* 5 children over 2 parents: the first parent takes one more. */
  const int64_t B[] = {2, 5, 7}, L[] = {10, 20, 30};
  av_workload_t *w = av_test_levels(B, L, 3);
  const int32_t want[] = {-1, -1, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 6};
  ck_assert_int_eq(w->n_nodes, 14);
  for (int i = 0; i < 14; i++) ck_assert_int_eq(w->nodes[i].parent, want[i]);
  ck_assert_int_eq(w->nodes[0].share, 5);
  ck_assert_int_eq(w->nodes[1].share, 2);
  av_workload_stats_t s;
  av_workload_stats(w, &s);
  ck_assert_int_eq(s.roots, 2);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_levels_errors) {
  av_error_t err;
  av_error_clear(&err);
  const int64_t B[] = {1, 8, 4}, L[] = {1, 2, 3};
  ck_assert_ptr_null(av_workload_from_levels(B, L, 3, NULL, &err));
  ck_assert_int_eq(err.code, AV_ERR_SCHEMA);
  ck_assert_str_eq(err.path, "B[2]");
  av_error_clear(&err);
  const int64_t B2[] = {1, 8}, L2[] = {1, 0};
  ck_assert_ptr_null(av_workload_from_levels(B2, L2, 2, NULL, &err));
  ck_assert_str_eq(err.path, "L[1]");
  av_error_clear(&err);
  av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 96, .dtype = AV_DTYPE_FP16};
  ck_assert_ptr_null(av_workload_from_levels(B2, B2, 2, &h, &err));
  ck_assert_int_eq(err.code, AV_ERR_UNSUPPORTED);
  ck_assert_str_eq(err.message, "unsupported head dim 96; expected one of: 64, 128, 256");
}
END_TEST

/* Every tree of a published-trees file builds with the expected shape and figures. */
static void check_tree_file(const char *path) {
  av_error_t err;
  av_error_clear(&err);
  json_t *root;
  AV_CK_OK(av_json_load_file(path, &root, &err), &err);
  json_t *trees = json_object_get(root, "trees");
  ck_assert_uint_gt(json_array_size(trees), 10);
  for (size_t t = 0; t < json_array_size(trees); t++) {
    json_t *tree = json_array_get(trees, t);
    json_t *jb = json_object_get(tree, "B"), *jl = json_object_get(tree, "L");
    int n = (int)json_array_size(jb);
    int64_t B[16], L[16], nodes = 0, uniq = 0, path_len = 0;
    for (int i = 0; i < n; i++) {
      B[i] = json_integer_value(json_array_get(jb, i));
      L[i] = json_integer_value(json_array_get(jl, i));
      nodes += B[i];
      uniq += B[i] * L[i];
      path_len += L[i];
    }
    av_workload_t *w = av_test_levels(B, L, n);
    ck_assert_int_eq(w->n_nodes, nodes);
    ck_assert_int_eq(w->n_requests, B[n - 1]);
    ck_assert_int_eq(w->max_depth, n);
    av_workload_stats_t s;
    av_workload_stats(w, &s);
    ck_assert_int_eq(s.roots, B[0]);
    ck_assert_int_eq(s.leaves, B[n - 1]);
    ck_assert_int_eq(s.unique_kv_tokens, uniq);
    ck_assert_int_eq(s.query_centric_kv_tokens, B[n - 1] * path_len);
    /* Shares of level i differ by at most one and sum to the batch. */
    for (int32_t u = 0, first = 0, i = 0; i < n; first += (int32_t)B[i], i++) {
      int64_t sum = 0;
      for (u = first; u < first + B[i]; u++) {
        ck_assert_int_eq(w->nodes[u].depth, i);
        ck_assert_int_le(w->nodes[u].share, (B[n - 1] + B[i] - 1) / B[i]);
        ck_assert_int_ge(w->nodes[u].share, B[n - 1] / B[i]);
        sum += w->nodes[u].share;
      }
      ck_assert_int_eq(sum, B[n - 1]);
    }
    av_workload_destroy(w);
  }
  json_decref(root);
}

START_TEST(test_pat_and_fasttree_trees) {
  check_tree_file(EXPERIMENTS "pat_kernel_trees.json");
  check_tree_file(EXPERIMENTS "fasttree_kernel_trees.json");
}
END_TEST

/* Unique / query-centric bytes and the floor agree with the measured H200 reference rows. */
START_TEST(test_h200_reference_figures) {
  av_error_t err;
  av_error_clear(&err);
  json_t *root;
  AV_CK_OK(av_json_load_file(EXPERIMENTS "h200_reference.json", &root, &err), &err);
  double bw = json_number_value(json_object_get(root, "copy_GBps"));
  json_t *rows = json_object_get(root, "rows");
  ck_assert_uint_gt(json_array_size(rows), 3);
  for (size_t r = 0; r < json_array_size(rows); r++) {
    json_t *row = json_array_get(rows, r), *spec = json_object();
    json_object_set_new(spec, "kind", json_string("levels"));
    json_object_set(spec, "B", json_object_get(row, "B"));
    json_object_set(spec, "L", json_object_get(row, "L"));
    json_object_set(spec, "heads", json_object_get(row, "heads"));
    av_jctx_t c = {.source = "h200_reference.json", .err = &err};
    av_workload_t *w = av_workload_from_json(spec, NULL, &c, "rows");
    AV_CK_OK(err.code, &err);
    av_workload_stats_t s;
    av_workload_stats(w, &s);
    double uniq = json_number_value(json_object_get(row, "uniq_bytes_GB")) * 1e9;
    double qc = json_number_value(json_object_get(row, "qc_bytes_GB")) * 1e9;
    double floor_ms = json_number_value(json_object_get(row, "floor_ms"));
    ck_assert_double_eq_tol(s.unique_kv_bytes, uniq, 1.0);
    ck_assert_double_eq_tol(s.query_centric_kv_bytes, qc, 1.0);
    ck_assert_double_eq_tol(av_workload_floor_us(w, bw), floor_ms * 1e3, 1e-6);
    av_workload_destroy(w);
    json_decref(spec);
  }
  json_decref(root);
}
END_TEST

START_TEST(test_kary_and_degenerate) {
  av_error_t err;
  av_error_clear(&err);
  const int64_t L[] = {100, 50, 25};
  av_workload_t *w = av_workload_from_kary(2, 3, L, 3, 2, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 7);
  ck_assert_int_eq(w->n_requests, 8);
  ck_assert_int_eq(w->nodes[0].share, 8);
  ck_assert_int_eq(w->nodes[1].share, 4);
  ck_assert_int_eq(w->nodes[3].share, 2);
  ck_assert_int_eq(w->request_node[0], 3);
  ck_assert_int_eq(w->request_node[1], 3);
  ck_assert_int_eq(w->request_node[7], 6);
  av_workload_destroy(w);
  /* 3-ary, depth 3, one length for every level: 1 + 3 + 9 nodes. */
  w = av_workload_from_kary(3, 3, L, 1, 1, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 13);
  ck_assert_int_eq(w->n_requests, 9);
  ck_assert_int_eq(w->nodes[12].kv_len_tokens, 100);
  av_workload_destroy(w);

  /* Degenerate binary tree of depth 4: only the first child of each level branches. */
  const int64_t L4[] = {400, 300, 200, 100};
  w = av_workload_degenerate(2, 4, L4, 4, NULL, &err);
  AV_CK_OK(err.code, &err);
  const int32_t parent[] = {-1, 0, 0, 1, 1, 3, 3}, req[] = {2, 4, 5, 6};
  ck_assert_int_eq(w->n_nodes, 7);
  ck_assert_int_eq(w->n_requests, 4);
  for (int i = 0; i < 7; i++) ck_assert_int_eq(w->nodes[i].parent, parent[i]);
  for (int r = 0; r < 4; r++) ck_assert_int_eq(w->request_node[r], req[r]);
  ck_assert_int_eq(w->nodes[0].share, 4);
  ck_assert_int_eq(w->nodes[3].share, 2);
  ck_assert_int_eq(w->request_kv_tokens[3], 1000);
  ck_assert_int_eq(w->request_kv_tokens[0], 700);
  av_workload_destroy(w);
}
END_TEST

START_TEST(test_ratio) {
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_ratio(8, 1000, 0.25, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 9);
  ck_assert_int_eq(w->nodes[0].kv_len_tokens, 250);
  ck_assert_int_eq(w->nodes[0].share, 8);
  for (int r = 0; r < 8; r++) {
    ck_assert_int_eq(w->nodes[r + 1].kv_len_tokens, 750);
    ck_assert_int_eq(w->request_kv_tokens[r], 1000);
  }
  av_workload_destroy(w);
  w = av_workload_from_ratio(8, 1000, 0.0, NULL, &err); /* no sharing: 8 roots */
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 8);
  ck_assert_int_eq(w->nodes[7].parent, -1);
  av_workload_destroy(w);
  w = av_workload_from_ratio(8, 1000, 1.0, NULL, &err); /* all requests end at the root */
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 1);
  ck_assert_int_eq(w->nodes[0].share, 8);
  ck_assert_int_eq(w->request_node[5], 0);
  av_workload_destroy(w);
  ck_assert_ptr_null(av_workload_from_ratio(8, 1000, NAN, NULL, &err));
  ck_assert_str_eq(err.path, "shared_ratio");
}
END_TEST

START_TEST(test_random_determinism_and_properties) {
  av_error_t err;
  av_error_clear(&err);
  int depths[7] = {0}, inner_requests = 0;
  uint64_t prev_hash = 0;
  for (uint64_t seed = 0; seed < 300; seed++) {
    av_random_spec_t spec = av_test_random_spec(seed);
    av_workload_t *a = av_workload_random(&spec, NULL, &err);
    av_workload_t *b = av_workload_random(&spec, NULL, &err);
    AV_CK_OK(err.code, &err);
    ck_assert(av_workload_equal(a, b));
    ck_assert_uint_eq(av_workload_hash(a), av_workload_hash(b));
    ck_assert_uint_ne(av_workload_hash(a), prev_hash);
    prev_hash = av_workload_hash(a);
    ck_assert_int_ge(a->n_requests, a->max_depth);
    ck_assert_int_le(a->n_requests, 512);
    ck_assert_int_ge(a->max_depth, 1);
    ck_assert_int_le(a->max_depth, 6);
    depths[a->max_depth]++;
    for (int32_t u = 0; u < a->n_nodes; u++) {
      const av_node_t *n = &a->nodes[u];
      ck_assert_int_ge(n->kv_len_tokens, 1);
      ck_assert_int_le(n->kv_len_tokens, 2048);
      int kids = 0, ends = 0;
      for (int32_t c = n->first_child; c >= 0; c = a->nodes[c].next_sibling) kids++;
      for (int32_t r = 0; r < a->n_requests; r++) ends += a->request_node[r] == u;
      /* Radix-canonical: a node with one child ends a request. */
      ck_assert(kids != 1 || ends >= 1);
      if (kids > 0 && ends > 0) inner_requests++;
    }
    av_workload_destroy(a);
    av_workload_destroy(b);
  }
  for (int d = 1; d <= 6; d++) ck_assert_int_gt(depths[d], 10);
  ck_assert_int_gt(inner_requests, 50);
  /* min_depth holds whenever max_requests allows it. */
  for (uint64_t seed = 0; seed < 50; seed++) {
    av_random_spec_t deep = av_test_random_spec(seed);
    deep.min_depth = 4;
    deep.max_children = 2;
    av_workload_t *w = av_workload_random(&deep, NULL, &err);
    AV_CK_OK(err.code, &err);
    ck_assert_int_ge(w->max_depth, 4);
    av_workload_destroy(w);
  }
  /* Pinned: the stream is integer-only, so this holds on every machine. */
  av_random_spec_t spec = av_test_random_spec(42);
  av_workload_t *w = av_workload_random(&spec, NULL, &err);
  ck_assert_msg(av_workload_hash(w) == UINT64_C(0x1cc1a1662b4bcd3c), "hash of seed 42: 0x%016" PRIx64,
                av_workload_hash(w));
  av_workload_destroy(w);
}
END_TEST

/* to_block_table, then from_block_table, gives the same forest. */
static void round_trip(const av_workload_t *w, int bs) {
  av_error_t err;
  av_error_clear(&err);
  int64_t **blocks;
  int32_t *nb, *lbt;
  AV_CK_OK(av_workload_to_block_table(w, bs, &blocks, &nb, &lbt, &err), &err);
  av_workload_t *back = av_workload_from_block_table((const int64_t *const *)blocks, nb,
                                                     w->n_requests, bs, lbt, &w->heads, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_msg(av_workload_equal(w, back), "%s: block-table round trip differs (bs %d)",
                w->name, bs);
  ck_assert_int_eq(back->block_size_tokens, bs);
  /* The same ids as rows of a padded int32 table, read in place. */
  int32_t stride = 1;
  for (int32_t r = 0; r < w->n_requests; r++) stride = nb[r] + 1 > stride ? nb[r] + 1 : stride;
  int32_t *table = malloc((size_t)w->n_requests * (size_t)stride * sizeof *table);
  ck_assert_ptr_nonnull(table);
  for (int32_t r = 0; r < w->n_requests; r++)
    for (int32_t j = 0; j < stride; j++)
      table[(size_t)r * stride + j] = j < nb[r] ? (int32_t)blocks[r][j] : -1;
  av_workload_t *rows = av_workload_from_block_rows(
      &(av_block_rows_t){table, stride, nb, w->n_requests}, bs, lbt, &w->heads, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_msg(av_workload_equal(w, rows) && !strcmp(back->name, rows->name),
                "%s: block rows differ from block lists (bs %d)", w->name, bs);
  av_workload_destroy(rows);
  free(table);
  for (int32_t r = 0; r < w->n_requests; r++) free(blocks[r]);
  free(blocks);
  free(nb);
  free(lbt);
  av_workload_destroy(back);
}

START_TEST(test_block_table_round_trip) {
  const int64_t B1[] = {1, 4, 16}, L1[] = {128, 256, 1000};
  const int64_t B2[] = {2, 8, 16, 256}, L2[] = {256, 256, 32, 32};
  const int64_t B3[] = {1, 3, 10}, L3[] = {64, 32, 7};
  const int64_t B4[] = {5}, L4[] = {33};
  av_workload_t *w[] = {av_test_levels(B1, L1, 3), av_test_levels(B2, L2, 4), av_test_levels(B3, L3, 3),
                        av_test_levels(B4, L4, 1)};
  for (int i = 0; i < 4; i++) {
    round_trip(w[i], 16);
    round_trip(w[i], 32);
    round_trip(w[i], 1);
    av_workload_destroy(w[i]);
  }
  av_error_t err;
  av_error_clear(&err);
  for (uint64_t seed = 100; seed < 140; seed++) {
    av_random_spec_t spec = av_test_random_spec(seed);
    spec.max_len = 200;
    spec.max_requests = 128;
    av_workload_t *r = av_workload_random(&spec, NULL, &err);
    AV_CK_OK(err.code, &err);
    round_trip(r, 1);
    av_workload_destroy(r);
  }
  /* A node with children whose length is not whole blocks cannot be a block table. */
  const int64_t B5[] = {1, 2}, L5[] = {20, 16};
  av_workload_t *x = av_test_levels(B5, L5, 2);
  int64_t **blocks;
  int32_t *nb, *lbt;
  ck_assert_int_eq(av_workload_to_block_table(x, 16, &blocks, &nb, &lbt, &err),
                   AV_ERR_UNSUPPORTED);
  ck_assert_str_eq(err.path, "nodes[0]");
  ck_assert_ptr_null(blocks);
  av_workload_destroy(x);
}
END_TEST

START_TEST(test_block_table_splits) {
  av_error_t err;
  av_error_clear(&err);
  /* Alone, request 0 is one node of four blocks; request 1 diverges after two blocks. */
  const int64_t r0[] = {10, 11, 12, 13}, r1[] = {10, 11, 20};
  const int64_t *one[] = {r0};
  int32_t n_one[] = {4};
  av_workload_t *w = av_workload_from_block_table(one, n_one, 1, 16, NULL, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 1);
  ck_assert_int_eq(w->nodes[0].kv_len_tokens, 64);
  av_workload_destroy(w);
  const int64_t *two[] = {r0, r1};
  int32_t n_two[] = {4, 3}, lbt[] = {0, 5};
  w = av_workload_from_block_table(two, n_two, 2, 16, lbt, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 3);
  ck_assert_int_eq(w->nodes[0].kv_len_tokens, 32);
  ck_assert_int_eq(w->nodes[1].kv_len_tokens, 32); /* blocks 12, 13 */
  ck_assert_int_eq(w->nodes[2].kv_len_tokens, 5);  /* block 20, part-full */
  ck_assert_int_eq(w->request_node[0], 1);
  ck_assert_int_eq(w->request_node[1], 2);
  ck_assert_int_eq(w->nodes[0].share, 2);
  av_workload_destroy(w);
  /* A request ending part-way into a block that another request fills cuts the block. */
  const int64_t a[] = {1, 2, 3}, b[] = {1, 2, 3, 4}, c[] = {1, 2, 3};
  const int64_t *three[] = {a, b, c};
  int32_t n3[] = {3, 4, 3}, lbt3[] = {5, 0, 9};
  w = av_workload_from_block_table(three, n3, 3, 16, lbt3, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 3);
  const int64_t len[] = {37, 4, 7 + 16};
  const int32_t parent[] = {-1, 0, 1}, req[] = {0, 2, 1};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(w->nodes[i].kv_len_tokens, len[i]);
    ck_assert_int_eq(w->nodes[i].parent, parent[i]);
    ck_assert_int_eq(w->request_node[i], req[i]);
  }
  ck_assert_int_eq(w->request_kv_tokens[0], 37);
  ck_assert_int_eq(w->request_kv_tokens[1], 64);
  ck_assert_int_eq(w->request_kv_tokens[2], 41);
  av_workload_destroy(w);
  /* Opaque ids out of order still give parents before children. */
  const int64_t p[] = {900, 5}, q[] = {900, 7}, s[] = {3};
  const int64_t *ids[] = {p, q, s};
  int32_t nids[] = {2, 2, 1};
  w = av_workload_from_block_table(ids, nids, 3, 8, NULL, NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(w->n_nodes, 4);
  ck_assert_int_eq(w->nodes[0].share, 1); /* block 3: smallest id first */
  ck_assert_int_eq(w->nodes[1].share, 2); /* block 900 */
  ck_assert_int_eq(w->nodes[2].parent, 1);
  av_workload_destroy(w);
  /* The same block after two different prefixes. */
  const int64_t e0[] = {1, 2}, e1[] = {3, 2};
  const int64_t *bad[] = {e0, e1};
  int32_t nbad[] = {2, 2};
  ck_assert_ptr_null(av_workload_from_block_table(bad, nbad, 2, 16, NULL, NULL, &err));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "requests[1][1]");
  /* The same from int32 rows: the message names where the block was first used. */
  const int32_t rows[] = {7, 1, 2, 9, 3, 2};
  int32_t nrows[] = {3, 3};
  av_error_clear(&err);
  ck_assert_ptr_null(av_workload_from_block_rows(&(av_block_rows_t){rows, 3, nrows, 2}, 16, NULL,
                                                 NULL, NULL, &err));
  ck_assert_int_eq(err.code, AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "requests[1][2]");
  ck_assert_msg(strstr(err.message, "block 2 follows block 3 here but has a different prefix "
                                    "at requests[0][2]") != NULL, "%s", err.message);
}
END_TEST

START_TEST(test_clone_equal_hash) {
  const int64_t B[] = {1, 4, 16}, L[] = {128, 256, 1024};
  av_workload_t *a = av_test_levels(B, L, 3), *b = av_workload_clone(a);
  ck_assert(av_workload_equal(a, b));
  ck_assert_uint_eq(av_workload_hash(a), av_workload_hash(b));
  ck_assert_int_eq(b->node_reqs[b->node_req_offsets[4]], a->node_reqs[a->node_req_offsets[4]]);
  b->nodes[7].kv_len_tokens++;
  ck_assert(!av_workload_equal(a, b));
  ck_assert_uint_ne(av_workload_hash(a), av_workload_hash(b));
  b->nodes[7].kv_len_tokens--;
  b->heads.hkv = 4;
  ck_assert(!av_workload_equal(a, b));
  ck_assert_uint_ne(av_workload_hash(a), av_workload_hash(b));
  av_workload_destroy(a);
  av_workload_destroy(b);
  av_workload_destroy(NULL);
}
END_TEST

START_TEST(test_finalize_by_hand) {
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_create(3, 2);
  w->nodes[0] = (av_node_t){.parent = -1, .kv_len_tokens = 10};
  w->nodes[1] = (av_node_t){.parent = 0, .kv_len_tokens = 20};
  w->nodes[2] = (av_node_t){.parent = 0, .kv_len_tokens = 0};
  w->request_node[0] = 1;
  w->request_node[1] = 2;
  ck_assert_int_eq(av_workload_finalize(w, &err), AV_ERR_RANGE);
  ck_assert_str_eq(err.path, "nodes[2].kv_len");
  w->nodes[2].kv_len_tokens = 5;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  AV_CK_OK(av_workload_finalize(w, &err), &err); /* twice is fine */
  ck_assert_int_eq(w->nodes[0].share, 2);
  ck_assert_int_eq(w->request_kv_tokens[1], 15);
  w->heads.hkv = 3;
  ck_assert_int_eq(av_workload_finalize(w, &err), AV_ERR_MISMATCH);
  ck_assert_str_eq(err.path, "heads");
  av_workload_destroy(w);
  ck_assert_ptr_null(av_workload_create((1 << 22) + 1, 1));
  ck_assert_ptr_null(av_workload_create(1, -1));
}
END_TEST

START_TEST(test_trace) {
  av_error_t err;
  av_error_clear(&err);
  av_trace_t *t = av_trace_load(DATA "trace_good.jsonl", NULL, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_int_eq(av_trace_steps(t), 3);
  ck_assert_str_eq(av_trace_step(t, 0)->name, "step0");
  ck_assert_int_eq(av_trace_step(t, 1)->heads.hq, 16);
  ck_assert_int_eq(av_trace_step(t, 1)->nodes[4].kv_len_tokens, 33);
  ck_assert_int_eq(av_trace_step(t, 2)->n_requests, 3);
  ck_assert_ptr_null(av_trace_step(t, 3));
  av_trace_destroy(t);

  ck_assert_ptr_null(av_trace_load(DATA "trace_bad_content.jsonl", NULL, &err));
  ck_assert_int_eq(err.code, AV_ERR_SCHEMA);
  ck_assert_str_eq(err.source, DATA "trace_bad_content.jsonl:4");
  ck_assert_str_eq(err.path, "B[2]");
  av_error_clear(&err);
  ck_assert_ptr_null(av_trace_load(DATA "trace_bad_syntax.jsonl", NULL, &err));
  ck_assert_int_eq(err.code, AV_ERR_PARSE);
  ck_assert_ptr_nonnull(strstr(err.source, "trace_bad_syntax.jsonl:2:"));
  av_error_clear(&err);
  ck_assert_ptr_null(av_trace_load(DATA "trace_empty.jsonl", NULL, &err));
  ck_assert_ptr_nonnull(strstr(err.message, "empty trace"));
  av_error_clear(&err);
  ck_assert_ptr_null(av_trace_load(DATA "no_such_trace.jsonl", NULL, &err));
  ck_assert_int_eq(err.code, AV_ERR_IO);
}
END_TEST

static Suite *workload_suite(void) {
  Suite *s = suite_create("workload");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_levels_hand_computed);
  tcase_add_test(tc, test_levels_uneven_spread);
  tcase_add_test(tc, test_roofline_floor);
  tcase_add_test(tc, test_levels_errors);
  tcase_add_test(tc, test_pat_and_fasttree_trees);
  tcase_add_test(tc, test_h200_reference_figures);
  tcase_add_test(tc, test_kary_and_degenerate);
  tcase_add_test(tc, test_ratio);
  tcase_add_test(tc, test_random_determinism_and_properties);
  tcase_add_test(tc, test_block_table_round_trip);
  tcase_add_test(tc, test_block_table_splits);
  tcase_add_test(tc, test_clone_equal_hash);
  tcase_add_test(tc, test_finalize_by_hand);
  tcase_add_test(tc, test_trace);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(workload_suite(), 0); }
