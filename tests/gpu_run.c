/* GPU tests of anvil_run (include/anvil/run.h): a serving engine's paged KV cache, filled
 * with random data in its own layout (NHD or HND) under shuffled physical block ids, PAT's 20
 * kernel-evaluation trees as block tables, every registered scheduler's plan of each made
 * through anvil_workload_from_block_table and run through one device plan, outputs and lse
 * against fp64 attention read from the same cache, and two runs bitwise equal. The planner's
 * plans of consecutive decode steps run the same way, and bad tensors are refused with a
 * message naming them. Every configuration runs with both KV copies (TMA and cp.async), so a
 * fault of the TMA maps is told from the rest. By default each tree runs one configuration
 * (heads, dtype, head dim, layout, block size in rotation) and trees whose cache exceeds
 * 1 GiB are left out; `gpu_run --full` runs every tree in every configuration, `--copy tma`
 * or `--copy cp_async` one copy only. One line per configuration says how far the run got,
 * and every wait on the device is bounded: a kernel still running after WAIT_S seconds ends
 * the run with its configuration named. Cases run alone by name (CK_RUN_CASE=pat_trees).
 * Without a CUDA device (or a CUDA build) it prints one line and exits 77 (skipped). */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "anvil/anvil.h"
#include "executor/executor.h"
#include "selectors/selectors.h"
#include "tests/run_batch.h"
#include "tests/support.h"

#ifdef AV_HAVE_CUDA
#include "kernels/kernels.h"

static int full_cross;
static int copy_only = -1;  /* ANVIL_KV_COPY_TMA or _CP_ASYNC; -1: both */

enum { WAIT_S = 20 };                          /* the longest a run may take */
#define DEFAULT_KV_BYTES ((int64_t)1 << 30)    /* K and V of a default run's tree, at most */

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for everything issued on `stream`, at most WAIT_S seconds. A kernel that never ends
 * (a bulk copy whose bytes never arrive, a CTA that loops) would otherwise hang the test with
 * nothing said; it also holds the device, so no later case could run: the process ends with
 * the run named. */
static void wait_bounded(void *stream, const char *what) {
  const double t0 = seconds();
  for (;;) {
    int done = 0;
    ck_assert_msg(av_kern_stream_done(stream, &done) == 0, "%s: %s", what, av_kern_last_error());
    if (done) return;
    if (seconds() - t0 > WAIT_S) {
      fprintf(stderr, "gpu_run: %s: still running after %d s (a hung kernel)\n", what, WAIT_S);
      fflush(stdout);
      fflush(stderr);
      _exit(EXIT_FAILURE);
    }
    nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}

/* DLPack views of the batch's device buffers (compact shapes; the cache in its layout). */
typedef struct views {
  int64_t qs[3], kvs[4], ls[2];
  DLTensor q, k, v, out, lse;
  anvil_tensors_t t;
} views_t;

static void views_make(views_t *w, const batch_t *b) {
  const cfg_t *c = &b->c;
  const DLDataType dt = {c->dtype ? kDLBfloat : kDLFloat, 16, 1}, f32 = {kDLFloat, 32, 1};
  const DLDevice dev = {kDLCUDA, 0};
  w->qs[0] = b->n, w->qs[1] = c->hq, w->qs[2] = c->d;
  w->kvs[0] = b->n_blocks, w->kvs[1] = c->nhd ? c->bs : c->hkv;
  w->kvs[2] = c->nhd ? c->hkv : c->bs, w->kvs[3] = c->d;
  w->ls[0] = b->n, w->ls[1] = c->hq;
  w->q = (DLTensor){b->dq, dev, 3, dt, w->qs, NULL, 0};
  w->out = (DLTensor){b->dout, dev, 3, dt, w->qs, NULL, 0};
  w->k = (DLTensor){b->dk, dev, 4, dt, w->kvs, NULL, 0};
  w->v = (DLTensor){b->dv, dev, 4, dt, w->kvs, NULL, 0};
  w->lse = (DLTensor){b->dlse, dev, 2, f32, w->ls, NULL, 0};
  w->t = (anvil_tensors_t){&w->q, &w->k, &w->v, &w->out, &w->lse, ANVIL_KV_AUTO};
}

static anvil_heads_t heads_of(const cfg_t *c) {
  return (anvil_heads_t){c->hq, c->hkv, c->d, c->dtype};
}

/* The H200 target the plans are made for (roofline costs). */
static anvil_target_t *h200(void) {
  anvil_error_t err;
  anvil_target_t *t = NULL;
  ck_assert_msg(anvil_target_create("H200-SXM", "roofline", NULL, 0, &t, &err) == 0, "%s",
                err.message);
  return t;
}

/* Uploads p into dp, runs it twice on outputs poisoned with NaN, and checks the first run
 * against fp64 attention and the second bitwise equal to it. Returns 0 where the run is
 * refused because the plan's m128 tiles copy only by TMA and dp copies by cp.async, else 1. */
static int run_checked(anvil_device_plan_t *dp, const anvil_plan_t *p, batch_t *b,
                       const char *what, int kv_copy) {
  const cfg_t *c = &b->c;
  const size_t nq = (size_t)b->n * c->hq * c->d, nl = (size_t)b->n * c->hq;
  views_t v;
  views_make(&v, b);
  anvil_error_t err;
  uint16_t *out[2] = {malloc(nq * 2), malloc(nq * 2)};
  float *lse[2] = {malloc(nl * 4), malloc(nl * 4)};
  ck_assert_msg(anvil_device_plan_upload(dp, p, b->table, b->stride, b->stream, &err) == 0,
                "%s: %s", what, err.message);
  for (int k = 0; k < 2; ++k) {
    ck_assert_int_eq(av_kern_fill_nan(b->dout, nq, 2, b->stream), 0);
    ck_assert_int_eq(av_kern_fill_nan(b->dlse, nl, 4, b->stream), 0);
    const int rc = anvil_run(dp, &v.t, b->stream, &err);
    if (rc != 0 && k == 0 && kv_copy == ANVIL_KV_COPY_CP_ASYNC &&
        strstr(err.message, "copies KV by TMA") != NULL) {
      for (int j = 0; j < 2; ++j) free(out[j]), free(lse[j]);
      return 0;
    }
    ck_assert_msg(rc == 0, "%s: %s", what, err.message);
    wait_bounded(b->stream, what);
    ck_assert_int_eq(av_kern_sync(), 0);
    ck_assert_int_eq(av_kern_d2h(out[k], b->dout, nq * 2), 0);
    ck_assert_int_eq(av_kern_d2h(lse[k], b->dlse, nl * 4), 0);
  }
  batch_check(b, out[0], lse[0], what);
  ck_assert_msg(memcmp(out[0], out[1], nq * 2) == 0 && memcmp(lse[0], lse[1], nl * 4) == 0,
                "%s: two runs differ", what);
  for (int k = 0; k < 2; ++k) free(out[k]), free(lse[k]);
  return 1;
}

static void cap_max(anvil_device_capacity_t *a, const anvil_device_capacity_t *b) {
  int32_t *x = &a->requests;
  const int32_t *y = &b->requests;
  for (size_t i = 0; i < sizeof *a / sizeof(int32_t); ++i) x[i] = y[i] > x[i] ? y[i] : x[i];
}

/* Every registered scheduler's plan of the batch's block table, through one device plan
 * sized for the largest of them. */
static void run_schedulers(batch_t *b, const char *name) {
  anvil_error_t err;
  anvil_target_t *t = h200();
  const anvil_heads_t h = heads_of(&b->c);
  anvil_workload_t *w = NULL;
  ck_assert_msg(anvil_workload_from_block_table(b->table, b->stride, b->tokens, b->n, b->c.bs,
                                                &h, &w, &err) == 0,
                "%s: %s", name, err.message);
  anvil_plan_t *plans[32];
  anvil_device_capacity_t cap = {0};
  int n = 0;
  for (const char *s; n < 32 && (s = anvil_scheduler_name(n)) != NULL; ++n) {
    ck_assert_msg(anvil_plan(t, w, s, NULL, 0, &plans[n], &err) == 0, "%s %s: %s", name, s,
                  err.message);
    anvil_device_capacity_t c;
    anvil_device_capacity_of(plans[n], &c);
    cap_max(&cap, &c);
  }
  ck_assert_int_ge(n, 6);
  anvil_device_plan_t *dp = NULL;
  ck_assert_msg(anvil_device_plan_create(&cap, &h, b->c.bs, &dp, &err) == 0, "%s", err.message);
  char conf[160];
  snprintf(conf, sizeof conf, "%s (%d/%d heads, d %d, %s, %s, block %d)", name, b->c.hq,
           b->c.hkv, b->c.d, b->c.dtype ? "bf16" : "fp16", b->c.nhd ? "NHD" : "HND", b->c.bs);
  for (int copy = ANVIL_KV_COPY_TMA; copy <= ANVIL_KV_COPY_CP_ASYNC; ++copy) {
    if (copy_only >= 0 && copy != copy_only) continue;
    const char *cn = copy == ANVIL_KV_COPY_TMA ? "tma" : "cp_async";
    ck_assert_msg(anvil_device_plan_set_kv_copy(dp, copy, &err) == 0, "%s", err.message);
    const double t0 = seconds();
    int ran = 0;
    for (int i = 0; i < n; ++i) {
      char what[256];
      snprintf(what, sizeof what, "%s, %s, KV copy %s", conf, anvil_plan_scheduler(plans[i]),
               cn);
      ran += run_checked(dp, plans[i], b, what, copy);
    }
    printf("gpu_run: %s, KV copy %s: %d plans checked, %d refused (m128 tiles copy by TMA "
           "only), %.1f s\n", conf, cn, ran, n - ran, seconds() - t0);
    fflush(stdout);
  }
  for (int i = 0; i < n; ++i) anvil_plan_destroy(plans[i]);
  anvil_device_plan_destroy(dp);
  anvil_workload_destroy(w);
  anvil_target_destroy(t);
}

static const int heads_tab[4][2] = {{32, 8}, {32, 32}, {64, 8}, {32, 4}};

/* Configuration k of the cross heads x dtype x head dim x layout x block size. */
static cfg_t cfg_of(int k) {
  const int *hh = heads_tab[k % 4];
  return (cfg_t){.hq = hh[0], .hkv = hh[1], .dtype = (k / 4) % 2, .d = (k / 8) % 2 ? 64 : 128,
                 .nhd = (k / 16) % 2 == 0, .bs = (k / 32) % 2 ? 64 : 16};
}
enum { N_CFG = 64 };

/* PAT's trees (experiments/workloads/pat_kernel_trees.json): tree i in configuration
 * (i * 13 + 5) % 64 by default, which covers each value of each factor; in all of them with
 * --full. */
START_TEST(test_pat_trees) {
  json_error_t je;
  json_t *root = json_load_file("experiments/workloads/pat_kernel_trees.json", 0, &je);
  ck_assert_msg(root != NULL, "%s", je.text);
  json_t *trees = json_object_get(root, "trees");
  ck_assert_int_eq((int)json_array_size(trees), 20);
  for (size_t i = 0; i < json_array_size(trees); ++i) {
    json_t *tr = json_array_get(trees, i), *jb = json_object_get(tr, "B"),
           *jl = json_object_get(tr, "L");
    int64_t B[8], L[8];
    const int nl = (int)json_array_size(jb);
    for (int j = 0; j < nl; ++j)
      B[j] = json_integer_value(json_array_get(jb, j)),
      L[j] = json_integer_value(json_array_get(jl, j));
    for (int k = 0; k < N_CFG; ++k) {
      if (!full_cross && k != (int)((i * 13 + 5) % N_CFG)) continue;
      batch_t b = {.c = cfg_of(k)};
      batch_levels(&b, B, L, nl, 0x9e3779b9ull + i);
      char name[64];
      snprintf(name, sizeof name, "PAT tree %d", (int)json_integer_value(json_object_get(tr, "id")));
      const int64_t kv_bytes = 4 * b.n_blocks * b.c.bs * b.c.hkv * b.c.d;
      printf("gpu_run: %s in configuration %d: %d requests, %.2f GB of K and V%s\n", name, k,
             (int)b.n, kv_bytes / 1e9,
             full_cross || kv_bytes <= DEFAULT_KV_BYTES ? "" : ", left out (gpu_run --full)");
      fflush(stdout);
      if (full_cross || kv_bytes <= DEFAULT_KV_BYTES) {
        batch_upload(&b, 17 + i);
        run_schedulers(&b, name);
      }
      batch_free(&b);
    }
  }
  json_decref(root);
}
END_TEST

/* Requests that end part-way into blocks longer ones share: the forest's nodes start inside
 * blocks, so the device plan addresses them from their offset in their first block. */
START_TEST(test_nodes_inside_blocks) {
  const int32_t tokens[] = {40, 60, 100, 23, 16, 17, 41};
  for (int k = 0; k < 2; ++k) {
    batch_t b = {.c = {.hq = 32, .hkv = 8, .d = 128, .dtype = k, .nhd = 1 - k, .bs = 16}};
    batch_chain(&b, tokens, 7, 99 + k);
    batch_upload(&b, 5 + k);
    run_schedulers(&b, "prefix chain");
    batch_free(&b);
  }
}
END_TEST

/* The planner's plans of two decode steps (planned, then reused as tokens grow inside the
 * last blocks) run on the cache through one device plan. */
START_TEST(test_planner_steps) {
  const int64_t B[] = {1, 4, 16}, L[] = {300, 45, 37};
  batch_t b = {.c = {.hq = 32, .hkv = 8, .d = 128, .dtype = 0, .nhd = 1, .bs = 16}};
  batch_levels(&b, B, L, 3, 3);
  batch_upload(&b, 4);
  anvil_error_t err;
  anvil_target_t *t = h200();
  const anvil_heads_t h = heads_of(&b.c);
  anvil_planner_t *pl = NULL;
  ck_assert_msg(anvil_planner_create(t, "profit_pack", NULL, 0, b.c.bs, &h, &pl, &err) == 0,
                "%s", err.message);
  anvil_device_plan_t *dp = NULL;
  for (int step = 0; step < 2; ++step) {
    int reused = -1;
    ck_assert_msg(anvil_planner_step(pl, b.table, b.stride, b.tokens, b.n, &reused, &err) == 0,
                  "%s", err.message);
    ck_assert_int_eq(reused, step);
    if (!dp) {
      anvil_device_capacity_t cap;
      anvil_device_capacity_of(anvil_planner_plan(pl), &cap);
      ck_assert(anvil_device_plan_create(&cap, &h, b.c.bs, &dp, &err) == 0);
    }
    for (int copy = ANVIL_KV_COPY_TMA; copy <= ANVIL_KV_COPY_CP_ASYNC; ++copy) {
      if (copy_only >= 0 && copy != copy_only) continue;
      char what[64];
      snprintf(what, sizeof what, "planner, %s, KV copy %s", step ? "reused" : "planned",
               copy == ANVIL_KV_COPY_TMA ? "tma" : "cp_async");
      ck_assert(anvil_device_plan_set_kv_copy(dp, copy, &err) == 0);
      ck_assert_msg(run_checked(dp, anvil_planner_plan(pl), &b, what, copy), "%s: refused", what);
    }
    for (int32_t r = 0; r < b.n; ++r) b.tokens[r] += 1;  /* 382 -> 383: inside block 23 */
    free(b.check), free(b.ref_o), free(b.ref_lse);
    batch_reference(&b);
  }
  anvil_device_plan_destroy(dp);
  anvil_planner_destroy(pl);
  anvil_target_destroy(t);
  batch_free(&b);
}
END_TEST

/* A run or upload that must be refused, with a message naming `why`. */
static void refused(int rc, const anvil_error_t *err, const char *why) {
  ck_assert_msg(rc != 0, "accepted where '%s' must be refused", why);
  ck_assert_msg(strstr(err->message, why) != NULL, "message '%s' does not say '%s'",
                err->message, why);
}

START_TEST(test_bad_tensors) {
  const int32_t tokens[] = {40, 60, 23};
  /* KV heads equal to the block size: the shape alone cannot tell NHD from HND */
  batch_t b = {.c = {.hq = 32, .hkv = 16, .d = 128, .dtype = 0, .nhd = 1, .bs = 16}};
  batch_chain(&b, tokens, 3, 1);
  batch_upload(&b, 2);
  anvil_error_t err;
  anvil_target_t *t = h200();
  const anvil_heads_t h = heads_of(&b.c);
  anvil_workload_t *w = NULL;
  anvil_plan_t *p = NULL;
  ck_assert(anvil_workload_from_block_table(b.table, b.stride, b.tokens, b.n, 16, &h, &w,
                                            &err) == 0);
  ck_assert_msg(anvil_plan(t, w, "query_centric", NULL, 0, &p, &err) == 0, "%s", err.message);
  anvil_device_capacity_t cap;
  anvil_device_capacity_of(p, &cap);
  anvil_device_plan_t *dp = NULL;
  ck_assert(anvil_device_plan_create(&cap, &h, 16, &dp, &err) == 0);
  views_t v;
  views_make(&v, &b);
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "no plan uploaded");
  anvil_device_capacity_t small = cap;
  small.segments -= 1;
  anvil_device_plan_t *tiny = NULL;
  ck_assert(anvil_device_plan_create(&small, &h, 16, &tiny, &err) == 0);
  refused(anvil_device_plan_upload(tiny, p, b.table, b.stride, NULL, &err), &err, "segments");
  anvil_device_plan_destroy(tiny);
  ck_assert(anvil_device_plan_upload(dp, p, b.table, b.stride, b.stream, &err) == 0);
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "kv_layout");
  v.t.kv_layout = ANVIL_KV_NHD;
  ck_assert_msg(anvil_run(dp, &v.t, b.stream, &err) == 0, "%s", err.message);
  wait_bounded(b.stream, "bad tensors: the NHD run");
  refused(anvil_device_plan_set_kv_copy(dp, 7, &err), &err, "kv_copy");
  v.q.dtype.bits = 32;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "q: dtype");
  v.q.dtype.bits = 16;
  v.lse.dtype.code = kDLBfloat;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "lse: dtype");
  v.lse.dtype.code = kDLFloat;
  v.out.device.device_type = kDLCPU;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "out: on DLPack device type 1");
  v.out.device.device_type = kDLCUDA;
  int64_t st[4] = {b.sb, b.st + 4, b.sh, 1};
  v.k.strides = v.v.strides = st;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "multiples of 8 elements (16 bytes)");
  st[0] = b.sb + 8, st[1] = b.st;
  v.v.strides = NULL;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "v_cache: stride");
  v.k.strides = NULL;
  int64_t few[4] = {2, 16, 16, 128};
  v.k.shape = v.v.shape = few;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "k_cache: 2 blocks");
  v.k.shape = v.v.shape = v.kvs;
  v.kvs[3] = 64;
  refused(anvil_run(dp, &v.t, b.stream, &err), &err, "k_cache: dimension 3 is 64");
  anvil_device_plan_destroy(dp);
  anvil_plan_destroy(p);
  anvil_workload_destroy(w);
  anvil_target_destroy(t);
  batch_free(&b);
}
END_TEST
#endif

static int have_device(void) {
  av_error_t err;
  av_error_clear(&err);
  return av_exec_available(&err) == AV_OK;
}

int main(int argc, char **argv) {
  if (!have_device()) {  /* CTest reports 77 as skipped (tests/CMakeLists.txt) */
    puts("skipped: no CUDA device");
    return 77;
  }
#ifdef AV_HAVE_CUDA
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--full") == 0) full_cross = 1;
    else if (strcmp(argv[i], "--copy") == 0 && i + 1 < argc &&
             anvil_kv_copy_from_name(argv[i + 1]) >= 0)
      copy_only = anvil_kv_copy_from_name(argv[++i]);
    else {
      fprintf(stderr, "gpu_run: argument '%s'; expected --full or --copy tma|cp_async\n",
              argv[i]);
      return 2;
    }
  }
  if (av_selectors_register(NULL)) return 1;
  Suite *s = suite_create("gpu_run");
  const struct { const char *name; const TTest *test; } cases[] = {
      {"bad_tensors", test_bad_tensors}, {"inside_blocks", test_nodes_inside_blocks},
      {"planner_steps", test_planner_steps}, {"pat_trees", test_pat_trees}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    TCase *tc = tcase_create(cases[i].name);
    tcase_set_timeout(tc, full_cross ? 36000 : 900);
    tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  return av_test_run(s, 1);
#else
  (void)argc, (void)argv;
  return 77;
#endif
}
