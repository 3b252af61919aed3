/* The caller's batch of tests/gpu_run.c (tests/run_batch.h): block tables, the paged cache
 * and queries on the device, and the fp64 reference the runs are checked against. */
#ifdef AV_HAVE_CUDA
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "executor/exec_internal.h"
#include "kernels/kernels.h"
#include "tests/run_batch.h"

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
void batch_levels(batch_t *b, const int64_t *B, const int64_t *L, int nl, uint64_t seed) {
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
void batch_chain(batch_t *b, const int32_t *tokens, int32_t n, uint64_t seed) {
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


/* The cache and queries: host copies with random data, uploaded to the device, and the fp64
 * reference of the checked requests. */
void batch_upload(batch_t *b, uint64_t seed) {
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

void batch_free(batch_t *b) {
  av_kern_free(b->dk), av_kern_free(b->dv), av_kern_free(b->dq), av_kern_free(b->dout);
  av_kern_free(b->dlse);
  av_kern_stream_destroy(b->stream);
  free(b->k), free(b->v), free(b->q), free(b->table), free(b->tokens);
  free(b->check), free(b->ref_o), free(b->ref_lse);
  memset(b, 0, sizeof *b);
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
void batch_reference(batch_t *b) {
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
 * attention (relative L2 error 2e-3 fp16, 1e-2 bf16; lse within 1e-3 relative). The loops
 * find the first failure and assert once: each ck_assert is a Check mark point (a write to
 * its log), and one per element of millions of outputs per plan took longer than the runs. */
void batch_check(const batch_t *b, const uint16_t *out, const float *lse,
                          const char *what) {
  const cfg_t *c = &b->c;
  const size_t nq = (size_t)b->n * c->hq * c->d, nl = (size_t)b->n * c->hq;
  size_t i = 0;
  while (i < nq && !isnan(av__exec_to_double(out[i], (av_dtype_t)c->dtype))) ++i;
  ck_assert_msg(i == nq, "%s: output element %zu never written", what, i);
  for (i = 0; i < nl && !isnan(lse[i]); ++i) {}
  ck_assert_msg(i == nl, "%s: lse of row %zu never written", what, i);
  const double tol = c->dtype ? 1e-2 : 2e-3;
  for (int32_t k = 0; k < b->n_check; ++k) {
    const int32_t r = b->check[k];
    for (int h = 0; h < c->hq; ++h) {
      const double *o = b->ref_o + ((size_t)k * c->hq + h) * c->d;
      double num = 0, den = 0;
      for (int e = 0; e < c->d; ++e) {
        const double g = av__exec_to_double(out[((size_t)r * c->hq + h) * c->d + e],
                                            (av_dtype_t)c->dtype);
        num += (g - o[e]) * (g - o[e]);
        den += o[e] * o[e];
      }
      const double gl = lse[(size_t)r * c->hq + h], l = b->ref_lse[(size_t)k * c->hq + h];
      if (!(sqrt(num / den) <= tol) || !(fabs(gl - l) <= 1e-3 * (1 + fabs(l))))
        ck_abort_msg("%s: request %d head %d: rel err %.3e (bound %.0e), lse %.6f, fp64 %.6f",
                     what, r, h, sqrt(num / den), tol, gl, l);
    }
  }
}
#endif
