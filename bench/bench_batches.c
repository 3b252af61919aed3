/* Realistic batches of the benchmarks, grown node by node from a fixed seed (shapes as in
 * analysis/heldout.py). Integer arithmetic only, so the forests are the same with any libm. */
#include "cli/bench_batches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const av_bench_batch_t av_bench_realistic[] = {
    {"doc-32k", AV_BENCH_DOC, 32768, 11},
    {"doc-64k", AV_BENCH_DOC, 65536, 12},
    {"doc-128k", AV_BENCH_DOC, 131072, 13},
    {"conversation", AV_BENCH_CONVERSATION, 0, 21},
    {"thoughts", AV_BENCH_THOUGHTS, 0, 31},
    {"speculative", AV_BENCH_SPECULATIVE, 0, 41},
};
const int av_bench_n_realistic = (int)(sizeof av_bench_realistic / sizeof av_bench_realistic[0]);

enum { MAX_NODES = 4096, MAX_REQS = 1024 };

/* A forest under construction: parents precede children, as the workload requires. */
typedef struct tree {
  uint64_t rng;
  int32_t n_nodes, n_reqs, overflow;
  int32_t parent[MAX_NODES];
  int64_t len[MAX_NODES];
  int32_t req[MAX_REQS];
} tree_t;

/* splitmix64 */
static uint64_t next_u64(tree_t *t) {
  uint64_t z = (t->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int64_t uniform(tree_t *t, int64_t lo, int64_t hi) { /* [lo, hi] */
  return lo + (int64_t)(next_u64(t) % (uint64_t)(hi - lo + 1));
}

static int log2_floor(int64_t x) {
  int k = 0;
  while (x >>= 1) k++;
  return k;
}

/* About log-uniform in [lo, hi]: a uniform exponent in 16-bit fixed point, its fraction
 * mapped linearly within the octave. */
static int64_t log_uniform(tree_t *t, int64_t lo, int64_t hi) {
  int64_t a = (int64_t)log2_floor(lo) << 16, b = ((int64_t)log2_floor(hi) + 1) << 16;
  int64_t e = uniform(t, a, b - 1), base = (int64_t)1 << (e >> 16);
  int64_t x = base + ((base * (e & 0xffff)) >> 16);
  return x < lo ? lo : x > hi ? hi : x;
}

static int32_t node(tree_t *t, int32_t parent, int64_t len) {
  if (t->n_nodes == MAX_NODES) {
    t->overflow = 1;
    return 0;
  }
  t->parent[t->n_nodes] = parent;
  t->len[t->n_nodes] = len < 1 ? 1 : len;
  return t->n_nodes++;
}

static void request(tree_t *t, int32_t u) {
  if (t->n_reqs == MAX_REQS)
    t->overflow = 1;
  else
    t->req[t->n_reqs++] = u;
}

static void doc(tree_t *t, int64_t doc_tokens) {
  int32_t d = node(t, -1, doc_tokens);
  for (int i = 0; i < 128; i++) request(t, node(t, d, log_uniform(t, 20, 300)));
}

static void conversation(tree_t *t) {
  int32_t base = node(t, -1, log_uniform(t, 1000, 4000));
  for (int p = 0; p < 4; p++) {
    int32_t persona = node(t, base, log_uniform(t, 200, 1000));
    for (int c = 0; c < 32; c++) request(t, node(t, persona, log_uniform(t, 500, 8000)));
  }
}

static void thoughts(tree_t *t) {
  int32_t first = node(t, -1, log_uniform(t, 500, 2000)), count = 1;
  for (int level = 0; level < 4; level++) {
    int32_t next = t->n_nodes;
    for (int32_t p = first; p < first + count; p++)
      for (int k = 0; k < 4; k++) node(t, p, log_uniform(t, 64, 512));
    first = next;
    count *= 4;
  }
  for (int32_t u = first; u < first + count; u++) request(t, u);
}

/* Per sequence a context, then 3-6 levels of 1-3 children of 1-4 tokens (at most 16 a
 * level); the requests are the tree's leaves. */
static void speculative(tree_t *t) {
  for (int s = 0; s < 16; s++) {
    int32_t frontier[16], nf = 1, next[16];
    frontier[0] = node(t, -1, log_uniform(t, 1000, 16000));
    int levels = (int)uniform(t, 3, 6);
    for (int l = 0; l < levels; l++) {
      int32_t nn = 0;
      for (int32_t i = 0; i < nf; i++) {
        int kids = (int)uniform(t, 1, 3), made = 0;
        for (int k = 0; k < kids && nn < 16; k++, made++)
          next[nn++] = node(t, frontier[i], uniform(t, 1, 4));
        if (!made) request(t, frontier[i]); /* the level is full: this one stays a leaf */
      }
      memcpy(frontier, next, (size_t)nn * sizeof *next);
      nf = nn;
    }
    for (int32_t i = 0; i < nf; i++) request(t, frontier[i]);
  }
}

av_workload_t *av_bench_batch_build(const av_bench_batch_t *b, av_error_t *err) {
  tree_t *t = calloc(1, sizeof *t);
  if (!t) {
    av_error_set(err, AV_ERR_NOMEM, "bench", b->name, "out of memory building the batch");
    return NULL;
  }
  t->rng = b->seed;
  switch (b->family) {
    case AV_BENCH_DOC: doc(t, b->doc_tokens); break;
    case AV_BENCH_CONVERSATION: conversation(t); break;
    case AV_BENCH_THOUGHTS: thoughts(t); break;
    case AV_BENCH_SPECULATIVE: speculative(t); break;
  }
  av_workload_t *w = t->overflow ? NULL : av_workload_create(t->n_nodes, t->n_reqs);
  if (w) {
    snprintf(w->name, sizeof w->name, "%s", b->name);
    for (int32_t u = 0; u < t->n_nodes; u++) {
      w->nodes[u].parent = t->parent[u];
      w->nodes[u].kv_len_tokens = t->len[u];
    }
    memcpy(w->request_node, t->req, (size_t)t->n_reqs * sizeof *t->req);
    if (av_workload_finalize(w, err)) {
      av_workload_destroy(w);
      w = NULL;
    }
  } else {
    av_error_set(err, t->overflow ? AV_ERR_INTERNAL : AV_ERR_NOMEM, "bench", b->name,
                 t->overflow ? "the batch outgrew the builder's tables"
                             : "out of memory building the batch");
  }
  free(t);
  return w;
}
