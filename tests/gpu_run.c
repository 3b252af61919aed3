/* GPU tests of anvil_run (include/anvil/run.h): a serving engine's paged KV cache, filled
 * with random data in its own layout (NHD or HND) under shuffled physical block ids, PAT's 20
 * kernel-evaluation trees as block tables, every registered scheduler's plan of each made
 * through anvil_workload_from_block_table and run through one device plan, outputs and lse
 * against fp64 attention read from the same cache, and two runs bitwise equal. The planner's
 * plans of consecutive decode steps run the same way, and bad tensors are refused with a
 * message naming them. By default each tree runs one configuration (heads, dtype, head dim,
 * layout, block size in rotation); `gpu_run --full` runs every tree in every configuration.
 * Without a CUDA device (or a CUDA build) it prints one line and exits 77 (skipped). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/anvil.h"
#include "executor/executor.h"
#include "selectors/selectors.h"
#include "tests/support.h"

#ifdef AV_HAVE_CUDA
#include "executor/exec_internal.h"
#include "kernels/kernels.h"

static int full_cross;

/* One configuration of the caller's cache. */
typedef struct cfg {
  int hq, hkv, d, dtype, nhd, bs;
} cfg_t;

static const int heads_tab[4][2] = {{32, 8}, {32, 32}, {64, 8}, {32, 4}};

/* The caller's batch: block table, token counts, cache, queries (host and device). */
typedef struct batch {
  cfg_t c;
  int32_t n, stride;
  int32_t *table, *tokens;
  int64_t n_blocks, sb, sh, st;  /* element strides of block, KV head, token */
  uint16_t *k, *v, *q;
  void *dk, *dv, *dq, *dout;
  float *dlse;
  void *stream;
  /* fp64 reference of the checked requests (all heads): their ids, outputs, lse */
  int32_t n_check, *check;
  double *ref_o, *ref_lse;
} batch_t;

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}
/* Random 16-bit floats of magnitude about 0.03 to 1, either sign. */
static void fill16(uint16_t *p, size_t n, int bf16, uint64_t *s) {
  for (size_t i = 0; i < n; i += 4) {
    uint64_t r = rng_next(s);
    for (size_t j = i; j < i + 4 && j < n; ++j, r >>= 16) {
      const uint16_t sign = (uint16_t)((r & 1) << 15), e = (uint16_t)((r >> 1) % 5);
      p[j] = bf16 ? (uint16_t)(sign | (uint16_t)((122 + e) << 7) | ((r >> 4) & 0x7f))
                  : (uint16_t)(sign | (uint16_t)((10 + e) << 10) | ((r >> 4) & 0x3ff));
    }
  }
}

static int cmp_u64(const void *x, const void *y) {
  const uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
  return (a > c) - (a < c);
}

/* Physical ids for the logical block keys (a shuffled permutation with unused ids between):
 * keys[i] is the key of table entry i; equal keys share a block. */
static void assign_ids(batch_t *b, const uint64_t *keys, int64_t n_keys, uint64_t seed) {
  uint64_t *sorted = malloc((size_t)n_keys * sizeof *sorted);
  memcpy(sorted, keys, (size_t)n_keys * sizeof *sorted);
  qsort(sorted, (size_t)n_keys, sizeof *sorted, cmp_u64);
  int64_t u = 0;
  for (int64_t i = 0; i < n_keys; ++i)
    if (i == 0 || sorted[i] != sorted[u - 1]) sorted[u++] = sorted[i];
  b->n_blocks = u + u / 8 + 3;
  int32_t *perm = malloc((size_t)b->n_blocks * sizeof *perm);
  for (int64_t i = 0; i < b->n_blocks; ++i) perm[i] = (int32_t)i;
  for (int64_t i = b->n_blocks - 1; i > 0; --i) {
    const int64_t j = (int64_t)(rng_next(&seed) % (uint64_t)(i + 1));
    const int32_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  for (int64_t i = 0; i < n_keys; ++i) {
    if (keys[i] == UINT64_MAX) continue;
    int64_t lo = 0, hi = u - 1;
    while (lo < hi) {
      const int64_t m = (lo + hi) / 2;
      if (sorted[m] < keys[i]) lo = m + 1;
      else hi = m;
    }
    b->table[i] = perm[lo];
  }
  free(perm);
  free(sorted);
}

/* A levels tree (B nodes of L tokens per level) as the block table a serving engine holds:
 * one request per leaf; a block is shared by the requests below the deepest node its last
 * token lies in (a block that straddles a node boundary belongs to the deeper node). */
static void table_levels(batch_t *b, const int64_t *B, const int64_t *L, int nl, uint64_t seed) {
  const int bs = b->c.bs;
  int64_t total = 0;
  for (int i = 0; i < nl; ++i) total += L[i];
  b->n = (int32_t)B[nl - 1];
  b->stride = (int32_t)((total + bs - 1) / bs) + 1;
  b->table = malloc((size_t)b->n * b->stride * sizeof *b->table);
  b->tokens = malloc((size_t)b->n * sizeof *b->tokens);
  uint64_t *keys = malloc((size_t)b->n * b->stride * sizeof *keys);
  for (int32_t r = 0; r < b->n; ++r) {
    b->tokens[r] = (int32_t)total;
    for (int32_t j = 0; j < b->stride; ++j) {
      const int64_t last = (int64_t)(j + 1) * bs - 1 < total ? (int64_t)(j + 1) * bs - 1 : total - 1;
      int lv = 0;
      for (int64_t off = L[0]; last >= off; off += L[++lv]) {}
      const uint64_t node = (uint64_t)(r / (B[nl - 1] / B[lv]));
      keys[(size_t)r * b->stride + j] =
          (int64_t)j * bs >= total ? UINT64_MAX : ((uint64_t)lv << 56) | (node << 24) | (uint64_t)j;
      b->table[(size_t)r * b->stride + j] = -1;
    }
  }
  assign_ids(b, keys, (int64_t)b->n * b->stride, seed);
  free(keys);
}

/* Requests that are prefixes of one another (one chain of blocks): most end part-way into a
 * block the longer ones share, so nodes start inside blocks. */
static void table_chain(batch_t *b, const int32_t *tokens, int32_t n, uint64_t seed) {
  int32_t most = 0;
  for (int32_t r = 0; r < n; ++r) most = tokens[r] > most ? tokens[r] : most;
  b->n = n;
  b->stride = (most + b->c.bs - 1) / b->c.bs;
  b->table = malloc((size_t)n * b->stride * sizeof *b->table);
  b->tokens = malloc((size_t)n * sizeof *b->tokens);
  uint64_t *keys = malloc((size_t)n * b->stride * sizeof *keys);
  for (int32_t r = 0; r < n; ++r) {
    b->tokens[r] = tokens[r];
    for (int32_t j = 0; j < b->stride; ++j) {
      keys[(size_t)r * b->stride + j] =
          (int64_t)j * b->c.bs < tokens[r] ? (uint64_t)j : UINT64_MAX;
      b->table[(size_t)r * b->stride + j] = -1;
    }
  }
  assign_ids(b, keys, (int64_t)n * b->stride, seed);
  free(keys);
}

static void batch_reference(batch_t *b);

/* The cache and queries: host copies with random data, uploaded to the device, and the fp64
 * reference of the checked requests. */
static void batch_upload(batch_t *b, uint64_t seed) {
  const cfg_t *c = &b->c;
  const int64_t per_block = (int64_t)c->bs * c->hkv * c->d;
  b->sb = per_block;
  b->sh = c->nhd ? c->d : (int64_t)c->bs * c->d;
  b->st = c->nhd ? (int64_t)c->hkv * c->d : c->d;
  const size_t nkv = (size_t)(b->n_blocks * per_block), nq = (size_t)b->n * c->hq * c->d;
  b->k = malloc(nkv * 2), b->v = malloc(nkv * 2), b->q = malloc(nq * 2);
  ck_assert(b->k && b->v && b->q);
  fill16(b->k, nkv, c->dtype, &seed);
  fill16(b->v, nkv, c->dtype, &seed);
  fill16(b->q, nq, c->dtype, &seed);
  ck_assert_int_eq(av_kern_malloc(&b->dk, nkv * 2), 0);
  ck_assert_int_eq(av_kern_malloc(&b->dv, nkv * 2), 0);
  ck_assert_int_eq(av_kern_malloc(&b->dq, nq * 2), 0);
  ck_assert_int_eq(av_kern_malloc(&b->dout, nq * 2), 0);
  ck_assert_int_eq(av_kern_malloc((void **)&b->dlse, (size_t)b->n * c->hq * 4), 0);
  ck_assert_int_eq(av_kern_h2d(b->dk, b->k, nkv * 2), 0);
  ck_assert_int_eq(av_kern_h2d(b->dv, b->v, nkv * 2), 0);
  ck_assert_int_eq(av_kern_h2d(b->dq, b->q, nq * 2), 0);
  ck_assert_int_eq(av_kern_stream_create(&b->stream, -1), 0);
  batch_reference(b);
}

static void batch_free(batch_t *b) {
  av_kern_free(b->dk), av_kern_free(b->dv), av_kern_free(b->dq), av_kern_free(b->dout);
  av_kern_free(b->dlse);
  av_kern_stream_destroy(b->stream);
  free(b->k), free(b->v), free(b->q), free(b->table), free(b->tokens);
  free(b->check), free(b->ref_o), free(b->ref_lse);
  memset(b, 0, sizeof *b);
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

/* fp64 attention of request r, q head h, read from the host cache through the block table:
 * o (d values) and the natural-log lse of the scaled scores. */
static double ref_row(const batch_t *b, int32_t r, int h, double *o) {
  const cfg_t *c = &b->c;
  const av_dtype_t t = (av_dtype_t)c->dtype;
  const int kvh = h / (c->hq / c->hkv), T = b->tokens[r];
  const uint16_t *q = b->q + ((size_t)r * c->hq + h) * c->d;
  double *s = malloc((size_t)T * sizeof *s), m = -INFINITY, sum = 0;
  for (int tok = 0; tok < T; ++tok) {
    const int64_t blk = b->table[(size_t)r * b->stride + tok / c->bs];
    const size_t at = (size_t)(blk * b->sb + kvh * b->sh + (tok % c->bs) * b->st);
    double dot = 0;
    for (int e = 0; e < c->d; ++e)
      dot += av__exec_to_double(q[e], t) * av__exec_to_double(b->k[at + e], t);
    s[tok] = dot / sqrt((double)c->d);
    m = s[tok] > m ? s[tok] : m;
  }
  for (int e = 0; e < c->d; ++e) o[e] = 0;
  for (int tok = 0; tok < T; ++tok) {
    const int64_t blk = b->table[(size_t)r * b->stride + tok / c->bs];
    const size_t at = (size_t)(blk * b->sb + kvh * b->sh + (tok % c->bs) * b->st);
    const double p = exp(s[tok] - m);
    sum += p;
    for (int e = 0; e < c->d; ++e) o[e] += p * av__exec_to_double(b->v[at + e], t);
  }
  for (int e = 0; e < c->d; ++e) o[e] /= sum;
  free(s);
  return m + log(sum);
}

/* The fp64 reference of up to 6 requests spread over the batch (all of a batch of at most
 * 8), every q head: computed once, compared with every plan's run. */
static void batch_reference(batch_t *b) {
  const cfg_t *c = &b->c;
  b->n_check = b->n <= 8 ? b->n : 6;
  b->check = malloc((size_t)b->n_check * sizeof *b->check);
  b->ref_o = malloc((size_t)b->n_check * c->hq * c->d * sizeof *b->ref_o);
  b->ref_lse = malloc((size_t)b->n_check * c->hq * sizeof *b->ref_lse);
  for (int32_t i = 0; i < b->n_check; ++i) {
    b->check[i] = b->n_check == b->n ? i : (int32_t)((int64_t)i * (b->n - 1) / (b->n_check - 1));
    for (int h = 0; h < c->hq; ++h)
      b->ref_lse[(size_t)i * c->hq + h] =
          ref_row(b, b->check[i], h, b->ref_o + ((size_t)i * c->hq + h) * c->d);
  }
}

/* Every output and lse written, and the checked rows within the executor's bounds of fp64
 * attention (relative L2 error 2e-3 fp16, 1e-2 bf16; lse within 1e-3 relative). */
static void check_outputs(const batch_t *b, const uint16_t *out, const float *lse,
                          const char *what) {
  const cfg_t *c = &b->c;
  const size_t nq = (size_t)b->n * c->hq * c->d;
  for (size_t i = 0; i < nq; ++i)
    ck_assert_msg(!isnan(av__exec_to_double(out[i], (av_dtype_t)c->dtype)),
                  "%s: output element %zu never written", what, i);
  for (size_t i = 0; i < (size_t)b->n * c->hq; ++i)
    ck_assert_msg(!isnan(lse[i]), "%s: lse of row %zu never written", what, i);
  const double tol = c->dtype ? 1e-2 : 2e-3;
  for (int32_t i = 0; i < b->n_check; ++i) {
    const int32_t r = b->check[i];
    for (int h = 0; h < c->hq; ++h) {
      const double *o = b->ref_o + ((size_t)i * c->hq + h) * c->d;
      double num = 0, den = 0;
      for (int e = 0; e < c->d; ++e) {
        const double g = av__exec_to_double(out[((size_t)r * c->hq + h) * c->d + e],
                                            (av_dtype_t)c->dtype);
        num += (g - o[e]) * (g - o[e]);
        den += o[e] * o[e];
      }
      ck_assert_msg(sqrt(num / den) <= tol, "%s: request %d head %d: rel err %.3e > %.0e",
                    what, r, h, sqrt(num / den), tol);
      const double gl = lse[(size_t)r * c->hq + h], l = b->ref_lse[(size_t)i * c->hq + h];
      ck_assert_msg(fabs(gl - l) <= 1e-3 * (1 + fabs(l)),
                    "%s: request %d head %d: lse %.6f, fp64 %.6f", what, r, h, gl, l);
    }
  }
}

/* Uploads p into dp, runs it twice on outputs poisoned with NaN, and checks the first run
 * against fp64 attention and the second bitwise equal to it. */
static void run_checked(anvil_device_plan_t *dp, const anvil_plan_t *p, batch_t *b,
                        const char *what) {
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
    ck_assert_msg(anvil_run(dp, &v.t, b->stream, &err) == 0, "%s: %s", what, err.message);
    ck_assert_int_eq(av_kern_sync(), 0);
    ck_assert_int_eq(av_kern_d2h(out[k], b->dout, nq * 2), 0);
    ck_assert_int_eq(av_kern_d2h(lse[k], b->dlse, nl * 4), 0);
  }
  check_outputs(b, out[0], lse[0], what);
  ck_assert_msg(memcmp(out[0], out[1], nq * 2) == 0 && memcmp(lse[0], lse[1], nl * 4) == 0,
                "%s: two runs differ", what);
  for (int k = 0; k < 2; ++k) free(out[k]), free(lse[k]);
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
  for (int i = 0; i < n; ++i) {
    char what[256];
    snprintf(what, sizeof what, "%s, %s (%d/%d heads, d %d, %s, %s, block %d)", name,
             anvil_plan_scheduler(plans[i]), b->c.hq, b->c.hkv, b->c.d,
             b->c.dtype ? "bf16" : "fp16", b->c.nhd ? "NHD" : "HND", b->c.bs);
    run_checked(dp, plans[i], b, what);
    anvil_plan_destroy(plans[i]);
  }
  anvil_device_plan_destroy(dp);
  anvil_workload_destroy(w);
  anvil_target_destroy(t);
}

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
      table_levels(&b, B, L, nl, 0x9e3779b9ull + i);
      batch_upload(&b, 17 + i);
      char name[64];
      snprintf(name, sizeof name, "PAT tree %d", (int)json_integer_value(json_object_get(tr, "id")));
      run_schedulers(&b, name);
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
    table_chain(&b, tokens, 7, 99 + k);
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
  table_levels(&b, B, L, 3, 3);
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
    run_checked(dp, anvil_planner_plan(pl), &b, step ? "planner, reused" : "planner, planned");
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
  table_chain(&b, tokens, 3, 1);
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
  full_cross = argc > 1 && strcmp(argv[1], "--full") == 0;
  if (av_selectors_register(NULL)) return 1;
  Suite *s = suite_create("gpu_run");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, full_cross ? 36000 : 900);
  tcase_add_test(tc, test_bad_tensors);
  tcase_add_test(tc, test_nodes_inside_blocks);
  tcase_add_test(tc, test_planner_steps);
  tcase_add_test(tc, test_pat_trees);
  suite_add_tcase(s, tc);
  return av_test_run(s, 1);
#else
  (void)argc, (void)argv;
  return 77;
#endif
}
