/* Seeded random forests for property tests and sweeps. Everything is integer arithmetic on
 * a splitmix64 stream (no rand(), no libm), so a seed gives the same forest on every
 * machine. The forests are radix-canonical: a node with a single child always has a
 * request ending at it, so its block table rebuilds the very same forest. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"
#include "core/workload_internal.h"

#define CAP_SAT ((int64_t)1 << 40) /* capacities saturate here */

typedef struct gen {
  uint64_t state;
  const av_random_spec_t *spec;
  int depth;            /* target depth D: the first root's first-child chain reaches it */
  int64_t cap[AV_WL_MAX_DEPTH + 1]; /* most requests a subtree rooted at level l can hold */
  int32_t n_nodes, n_requests;
  int32_t *parent, *req_node;
  int64_t *len;
  int nomem;
} gen_t;

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, passes BigCrush, trivially
 * portable. */
static uint64_t next_u64(gen_t *g) {
  uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi] without modulo bias (rejection of the incomplete last bucket). */
static int64_t uniform(gen_t *g, int64_t lo, int64_t hi) {
  uint64_t n = (uint64_t)(hi - lo) + 1;
  if (n == 0) return (int64_t)next_u64(g);
  uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
  do x = next_u64(g);
  while (x >= limit);
  return lo + (int64_t)(x % n);
}

static int floor_log2(uint64_t x) {
  int k = 0;
  while (x >>= 1) k++;
  return k;
}

/* Log-uniform over [lo, hi] in integers: a uniform octave, then uniform within it. */
static int64_t log_uniform(gen_t *g, int64_t lo, int64_t hi) {
  int k = (int)uniform(g, floor_log2((uint64_t)lo), floor_log2((uint64_t)hi));
  int64_t a = (int64_t)1 << k, b = ((int64_t)2 << k) - 1;
  return uniform(g, a > lo ? a : lo, b < hi ? b : hi);
}

/* Splits `total` requests over c subtrees of capacity cap each, the first getting at
 * least `first_min`; the caller guarantees c <= total - first_min + 1 and total <= c*cap. */
static void split(gen_t *g, int64_t *shares, int c, int64_t total, int64_t first_min,
                  int64_t cap) {
  int64_t left = total - first_min - (c - 1);
  for (int i = 0; i < c; i++) shares[i] = i ? 1 : first_min;
  /* Hand out the rest in random lumps, so subtrees come out unbalanced as often as not. */
  while (left > 0) {
    int i = (int)uniform(g, 0, c - 1);
    int64_t lump = uniform(g, 1, left);
    for (int k = 0; k < c && lump > 0; k++, i = (i + 1) % c) {
      int64_t take = cap - shares[i] < lump ? cap - shares[i] : lump;
      shares[i] += take;
      lump -= take;
      left -= take;
    }
  }
}

static int32_t add_node(gen_t *g, int32_t parent) {
  int32_t u = g->n_nodes++;
  g->parent[u] = parent;
  g->len[u] = log_uniform(g, g->spec->min_len, g->spec->max_len);
  return u;
}

/* Children of a node at `level` (-1 = the forest's roots) sharing `rest` requests; the
 * spine's first child must still reach the target depth. */
static void gen_children(gen_t *g, int32_t parent, int level, int64_t rest, int spine,
                         int here);

/* A subtree at `level` holding exactly r requests (1 <= r <= cap[level]). */
static void gen_subtree(gen_t *g, int32_t parent, int level, int64_t r, int spine) {
  int32_t u = add_node(g, parent);
  if (level == g->depth - 1 || r == 1) {
    g->req_node[g->n_requests++] = u;
    return;
  }
  int64_t cap = g->cap[level + 1], mc = g->spec->max_children;
  /* Without a request here the node needs >= 2 children to be a real branch. */
  int can_skip = mc >= 2 && (r + cap - 1) / cap <= mc;
  int here = !can_skip || uniform(g, 0, 3) == 0;
  if (here) g->req_node[g->n_requests++] = u;
  gen_children(g, u, level, r - here, spine, here);
}

static void gen_children(gen_t *g, int32_t parent, int level, int64_t rest, int spine,
                         int here) {
  int64_t cap = g->cap[level + 1], mc = g->spec->max_children;
  int64_t need = spine ? g->depth - (level + 1) : 1; /* a chain down to depth D */
  int64_t cmin = (rest + cap - 1) / cap, cmax = rest - need + 1;
  if (!here && cmin < 2) cmin = 2; /* roots come with here = 1: any count of them */
  if (cmax > mc) cmax = mc;
  int64_t c = level < 0 && cmin <= 1 && uniform(g, 0, 1) == 0 ? 1 : uniform(g, cmin, cmax);
  int64_t *shares = malloc((size_t)c * sizeof *shares);
  if (!shares) {
    g->nomem = 1;
    return;
  }
  split(g, shares, (int)c, rest, need, cap);
  for (int64_t i = 0; i < c && !g->nomem; i++)
    gen_subtree(g, parent, level + 1, shares[i], spine && i == 0);
  free(shares);
}

static int check_spec(const av_random_spec_t *s, const av__wloc_t *loc) {
  if (s->min_depth < 1 || s->max_depth > AV_WL_MAX_DEPTH || s->min_depth > s->max_depth)
    return av__wl_error(loc, AV_ERR_RANGE, "max_depth",
                        "depth range [%d, %d] is invalid; expected 1 <= min_depth <= max_depth "
                        "<= %d",
                        s->min_depth, s->max_depth, AV_WL_MAX_DEPTH);
  if (s->max_requests < 1 || s->max_requests > AV_WL_MAX_REQUESTS)
    return av__wl_error(loc, AV_ERR_RANGE, "max_requests",
                        "max_requests %d is out of range; expected an integer in [1, %d]",
                        s->max_requests, AV_WL_MAX_REQUESTS);
  if (s->max_children < 1 || s->max_children > (1 << 16))
    return av__wl_error(loc, AV_ERR_RANGE, "max_children",
                        "max_children %d is out of range; expected an integer in [1, %d]",
                        s->max_children, 1 << 16);
  if (s->min_len < 1 || s->max_len > AV_WL_MAX_NODE_TOKENS || s->min_len > s->max_len)
    return av__wl_error(loc, AV_ERR_RANGE, "max_len",
                        "length range [%" PRId64 ", %" PRId64 "] is invalid; expected 1 <= "
                        "min_len <= max_len <= %d",
                        s->min_len, s->max_len, AV_WL_MAX_NODE_TOKENS);
  return AV_OK;
}

/* Draws the shape, then the forest: target depth D uniform in [min_depth, max_depth]
 * (at most max_requests, since a radix-canonical chain needs a request per level),
 * request count uniform in [D, max_requests], split recursively over random subtrees. */
av_workload_t *av__workload_random(const av_random_spec_t *spec, const av_heads_t *heads,
                                   const av__wloc_t *loc) {
  if (check_spec(spec, loc) || av__heads_check(heads, loc)) return NULL;
  gen_t g = {.state = spec->seed, .spec = spec};
  g.depth = (int)uniform(&g, spec->min_depth, spec->max_depth);
  if (g.depth > spec->max_requests) g.depth = spec->max_requests;
  g.cap[g.depth - 1] = 1;
  for (int l = g.depth - 2; l >= 0; l--) {
    int64_t c = g.cap[l + 1] > CAP_SAT / spec->max_children ? CAP_SAT
                                                            : 1 + spec->max_children * g.cap[l + 1];
    g.cap[l] = c < CAP_SAT ? c : CAP_SAT;
  }
  int64_t most = g.cap[0] > CAP_SAT / spec->max_children ? CAP_SAT : g.cap[0] * spec->max_children;
  if (most > spec->max_requests) most = spec->max_requests;
  int64_t R = uniform(&g, g.depth, most);
  /* A radix-canonical forest has at most 2R - 1 nodes (see the file comment). */
  g.parent = malloc((size_t)(2 * R) * sizeof *g.parent);
  g.len = malloc((size_t)(2 * R) * sizeof *g.len);
  g.req_node = malloc((size_t)R * sizeof *g.req_node);
  av_workload_t *w = NULL;
  if (g.parent && g.len && g.req_node) {
    gen_children(&g, -1, -1, R, 1, 1);
    if (!g.nomem) w = av_workload_create(g.n_nodes, g.n_requests);
  }
  if (w) {
    w->heads = *heads;
    for (int32_t i = 0; i < g.n_nodes; i++) {
      w->nodes[i].parent = g.parent[i];
      w->nodes[i].kv_len_tokens = g.len[i];
    }
    /* Shuffle the request order (Fisher-Yates) so no consumer relies on tree order. */
    for (int32_t r = g.n_requests - 1; r > 0; r--) {
      int32_t j = (int32_t)uniform(&g, 0, r), t = g.req_node[r];
      g.req_node[r] = g.req_node[j];
      g.req_node[j] = t;
    }
    memcpy(w->request_node, g.req_node, (size_t)g.n_requests * sizeof *g.req_node);
  } else {
    av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory building a random forest");
  }
  free(g.parent);
  free(g.len);
  free(g.req_node);
  if (w && av__workload_finalize(w, loc)) {
    av_workload_destroy(w);
    return NULL;
  }
  if (w)
    av__workload_set_name(w, "random seed %" PRIu64 " depth %d requests %" PRId32, spec->seed,
                          g.depth, w->n_requests);
  return w;
}

av_workload_t *av_workload_random(const av_random_spec_t *spec, const av_heads_t *heads,
                                  av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  if (!spec) {
    av__wl_error(&loc, AV_ERR_INTERNAL, NULL, "no random spec");
    return NULL;
  }
  return av__workload_random(spec, av__heads_or_default(heads, &hbuf), &loc);
}
