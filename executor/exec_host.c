/* Host side of the GPU executor: random queries and a paged KV cache whose physical blocks are
 * shuffled (a serving engine's pages are not contiguous, and a plan must not profit from it),
 * and the fp64 reference attention computed from exactly the host copies that were uploaded. */
#include "executor/exec_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double av__exec_to_double(uint16_t x, av_dtype_t t) {
  if (t == AV_DTYPE_BF16) {
    uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  const int s = x >> 15, e = (x >> 10) & 0x1f, m = x & 0x3ff;
  double v;
  if (e == 0)
    v = ldexp((double)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp((double)(m | 0x400), e - 25);
  return s ? -v : v;
}

static uint64_t av_rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Random values in +-[1/16, 1): random sign, exponent and mantissa bits. Cheap for hundreds
 * of millions of elements, and never zero (zeros hide unwritten outputs and bad indexing). */
static void av_fill_random(uint16_t *p, size_t n, av_dtype_t t, uint64_t *s) {
  size_t i = 0;
  while (i < n) {
    uint64_t r = av_rng_next(s);
    for (int k = 0; k < 4 && i < n; ++k, ++i, r >>= 16) {
      const unsigned sign = r & 1, ex = (r >> 1) & 3, man = (unsigned)(r >> 3);
      p[i] = t == AV_DTYPE_BF16 ? (uint16_t)(sign << 15 | (123u + ex) << 7 | (man & 0x7f))
                                : (uint16_t)(sign << 15 | (11u + ex) << 10 | (man & 0x3ff));
    }
  }
}

static int32_t av_node_blocks(const av_workload_t *w, int32_t u, int bs) {
  return (int32_t)((w->nodes[u].kv_len_tokens + bs - 1) / bs);
}

size_t av__exec_batch_bytes(const av_workload_t *w) {
  const av_heads_t *h = &w->heads;
  const int bs = w->block_size_tokens > 0 ? w->block_size_tokens : 16;
  size_t blocks = 0;
  for (int32_t u = 0; u < w->n_nodes; ++u) blocks += (size_t)av_node_blocks(w, u, bs);
  const size_t el = (size_t)av_dtype_bytes(h->dtype);
  return 2 * blocks * h->hkv * bs * h->head_dim * el             /* K, V */
         + 2 * (size_t)w->n_requests * h->hq * h->head_dim * el   /* Q, out */
         + (blocks + w->n_nodes + 1) * sizeof(int32_t);
}

int av__exec_host_build(av_exec_host_t *h, const av_workload_t *w, uint64_t seed) {
  memset(h, 0, sizeof *h);
  h->hq = w->heads.hq;
  h->hkv = w->heads.hkv;
  h->d = w->heads.head_dim;
  h->dtype = w->heads.dtype;
  h->bs = w->block_size_tokens > 0 ? w->block_size_tokens : 16;
  h->node_block_off = malloc(((size_t)w->n_nodes + 1) * sizeof *h->node_block_off);
  if (!h->node_block_off) return -1;
  h->node_block_off[0] = 0;
  for (int32_t u = 0; u < w->n_nodes; ++u)
    h->node_block_off[u + 1] = h->node_block_off[u] + av_node_blocks(w, u, h->bs);
  h->n_blocks = h->node_block_off[w->n_nodes];
  const size_t per_block = (size_t)h->hkv * h->bs * h->d;
  const size_t nq = (size_t)w->n_requests * h->hq * h->d;
  h->block_ids = malloc((size_t)h->n_blocks * sizeof *h->block_ids + 1);
  h->q = malloc(nq * 2 + 1);
  h->k = malloc((size_t)h->n_blocks * per_block * 2 + 1);
  h->v = malloc((size_t)h->n_blocks * per_block * 2 + 1);
  if (!h->block_ids || !h->q || !h->k || !h->v) return -1;
  uint64_t s = seed ? seed : 0x5eedull;
  for (int32_t i = 0; i < h->n_blocks; ++i) h->block_ids[i] = i;
  for (int32_t i = h->n_blocks - 1; i > 0; --i) { /* Fisher-Yates */
    const int32_t j = (int32_t)(av_rng_next(&s) % (uint64_t)(i + 1));
    const int32_t t = h->block_ids[i];
    h->block_ids[i] = h->block_ids[j];
    h->block_ids[j] = t;
  }
  av_fill_random(h->q, nq, h->dtype, &s);
  av_fill_random(h->k, (size_t)h->n_blocks * per_block, h->dtype, &s);
  av_fill_random(h->v, (size_t)h->n_blocks * per_block, h->dtype, &s);
  return 0;
}

/* Plain attention of request r, q head qh, over its whole path, in fp64. */
static void av_reference_one(const av_exec_host_t *h, const av_workload_t *w, int32_t r,
                             int qh, double *out, double *scores, int32_t *path) {
  const int d = h->d, g = h->hq / h->hkv, kvh = qh / g;
  const double scale = 1.0 / sqrt((double)d);
  double qv[256];
  for (int i = 0; i < d; ++i)
    qv[i] = av__exec_to_double(h->q[((size_t)r * h->hq + qh) * d + i], h->dtype);
  int32_t depth = 0;
  for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) path[depth++] = u;
  int64_t n = 0;
  double mx = -INFINITY;
  for (int32_t pi = depth - 1; pi >= 0; --pi) {
    const int32_t u = path[pi];
    for (int64_t t = 0; t < w->nodes[u].kv_len_tokens; ++t) {
      const int32_t blk = h->block_ids[h->node_block_off[u] + t / h->bs];
      const uint16_t *kr = h->k + (((size_t)blk * h->hkv + kvh) * h->bs + t % h->bs) * d;
      double s = 0;
      for (int i = 0; i < d; ++i) s += qv[i] * av__exec_to_double(kr[i], h->dtype);
      scores[n] = s * scale;
      if (scores[n] > mx) mx = scores[n];
      ++n;
    }
  }
  double sum = 0;
  for (int i = 0; i < d; ++i) out[i] = 0;
  n = 0;
  for (int32_t pi = depth - 1; pi >= 0; --pi) {
    const int32_t u = path[pi];
    for (int64_t t = 0; t < w->nodes[u].kv_len_tokens; ++t, ++n) {
      const int32_t blk = h->block_ids[h->node_block_off[u] + t / h->bs];
      const uint16_t *vr = h->v + (((size_t)blk * h->hkv + kvh) * h->bs + t % h->bs) * d;
      const double p = exp(scores[n] - mx);
      sum += p;
      for (int i = 0; i < d; ++i) out[i] += p * av__exec_to_double(vr[i], h->dtype);
    }
  }
  for (int i = 0; i < d; ++i) out[i] /= sum;
}

int av__exec_host_reference(av_exec_host_t *h, const av_workload_t *w, int max_req) {
  if (max_req <= 0) max_req = 8;
  const int32_t nr = w->n_requests < max_req ? w->n_requests : max_req;
  const int g = h->hq / h->hkv;
  int kvs[3] = {0, h->hkv / 2, h->hkv - 1}, nkv = 0;
  for (int i = 0; i < 3; ++i) {
    int dup = 0;
    for (int j = 0; j < nkv; ++j) dup |= kvs[j] == kvs[i];
    if (!dup) kvs[nkv++] = kvs[i];
  }
  h->n_check = nr * nkv * g;
  h->check_req = malloc((size_t)h->n_check * sizeof *h->check_req);
  h->check_head = malloc((size_t)h->n_check * sizeof *h->check_head);
  h->ref = malloc((size_t)h->n_check * h->d * sizeof *h->ref);
  int64_t maxlen = 1;
  for (int32_t r = 0; r < w->n_requests; ++r)
    if (w->request_kv_tokens[r] > maxlen) maxlen = w->request_kv_tokens[r];
  double *scores = malloc((size_t)maxlen * sizeof *scores);
  int32_t *path = malloc(((size_t)w->max_depth + 1) * sizeof *path + sizeof *path);
  if (!h->check_req || !h->check_head || !h->ref || !scores || !path) {
    free(scores);
    free(path);
    return -1;
  }
  int32_t c = 0;
  for (int32_t i = 0; i < nr; ++i) {
    /* Evenly spread, first and last included. */
    const int32_t r = nr == 1 ? 0 : (int32_t)((int64_t)i * (w->n_requests - 1) / (nr - 1));
    for (int k = 0; k < nkv; ++k)
      for (int j = 0; j < g; ++j, ++c) {
        h->check_req[c] = r;
        h->check_head[c] = kvs[k] * g + j;
        av_reference_one(h, w, r, kvs[k] * g + j, h->ref + (size_t)c * h->d, scores, path);
      }
  }
  free(scores);
  free(path);
  return 0;
}

void av__exec_host_free(av_exec_host_t *h) {
  free(h->node_block_off);
  free(h->block_ids);
  free(h->q);
  free(h->k);
  free(h->v);
  free(h->check_req);
  free(h->check_head);
  free(h->ref);
  memset(h, 0, sizeof *h);
}
