/* Block tables <-> forests. A serving engine (vLLM, SGLang) holds, per request, the list of
 * physical KV block ids; requests that share a prefix share its blocks. The forest is the
 * radix tree of those id sequences (PAT §4 builds its prefix tree the same way): a trie
 * of block ids, cut where a request ends part-way into a block, with every chain that
 * neither branches nor ends a request merged into one node. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"
#include "core/workload_internal.h"

/* The block ids: request r's j-th id is lists[r][j], or table[r * stride + j] when the ids
 * are the rows of a serving engine's int32 table, read in place. */
static int64_t bt_id(const av__bt_ids_t *x, int32_t r, int32_t j) {
  return x->lists ? x->lists[r][j] : x->table[(int64_t)r * x->stride + j];
}

typedef struct bt {
  const av__bt_ids_t *ids;
  /* Trie of block ids: node t is one physical block, created in first-use order, so a
   * parent always precedes its children. */
  int32_t n_trie;
  int64_t *id;
  int32_t *tparent, *fill, *nchild;
  unsigned char *full_end; /* a request ends at the block's last used token */
  /* id -> trie index + 1 (0 = empty slot), open addressing from the id's Fibonacci hash
   * (its top `bits` bits); the key is id[index]. */
  uint64_t mask;
  int bits;
  int32_t *vals;
  /* Per request: blocks shared with its predecessor, where it ends (trie node and tokens
   * used of that block). */
  int32_t *same, *end_t, *end_k;
  /* Cuts inside blocks (requests ending part-way), grouped by trie node. */
  int32_t *cut_off, *cuts;
  /* Radix nodes: parent, length, ordering key (first block id, offset in it). */
  int32_t n_radix;
  int32_t *rparent, *seg0, *first_new, *last_seg, *req_radix;
  int64_t *rlen, *rkey_id, *rkey_off;
} bt_t;

/* The arrays share six allocations: per request (same, end_t, end_k); per id slot and trie
 * node, zeroed (vals, fill, nchild, full_end); per trie node (id, tparent, the walk's path);
 * the cuts (cut_off; cuts); per radix and trie node (rlen and the rest). */
static void bt_free(bt_t *b) {
  free(b->same);
  free(b->vals);
  free(b->id);
  free(b->cut_off);
  free(b->cuts);
  free(b->rlen);
}

/* Slot of `key`: its own, or the empty one where it would go. */
static uint64_t slot_of(const bt_t *b, int64_t key) {
  uint64_t s = ((uint64_t)key * 0x9e3779b97f4a7c15ull) >> (64 - b->bits);
  while (b->vals[s] && b->id[b->vals[s] - 1] != key) s = (s + 1) & b->mask;
  return s;
}

static void id_path(const av__wloc_t *loc, int32_t r, int32_t j, char *rel, size_t size) {
  if (loc->bt_object_form && loc->bt_object_form[r])
    snprintf(rel, size, "requests[%" PRId32 "].blocks[%" PRId32 "]", r, j);
  else
    snprintf(rel, size, "requests[%" PRId32 "][%" PRId32 "]", r, j);
}

/* Where `id` is first used, requests and blocks in order: where its trie node was made
 * (error messages only). */
static void first_use(const bt_t *b, const int32_t *n_blocks, int64_t id, int32_t *r,
                      int32_t *j) {
  for (*r = 0;; ++*r)
    for (*j = 0; *j < n_blocks[*r]; ++*j)
      if (bt_id(b->ids, *r, *j) == id) return;
}

static int check_input(const int32_t *n_blocks, int32_t n_requests, int block_size,
                       const int32_t *lbt, const av__wloc_t *loc, int64_t *total) {
  char rel[96];
  if (n_requests < 1)
    return av__wl_error(loc, AV_ERR_SCHEMA, "requests",
                        "empty batch: no requests; expected at least one block list");
  if (n_requests > AV_WL_MAX_REQUESTS)
    return av__wl_error(loc, AV_ERR_RANGE, "requests",
                        "%" PRId32 " requests; at most %d are supported", n_requests,
                        AV_WL_MAX_REQUESTS);
  if (block_size < 1 || block_size > AV_WL_MAX_BLOCK_SIZE)
    return av__wl_error(loc, AV_ERR_RANGE, "block_size",
                        "block size %d is out of range; expected an integer in [1, %d]",
                        block_size, AV_WL_MAX_BLOCK_SIZE);
  *total = 0;
  for (int32_t r = 0; r < n_requests; r++) {
    if (n_blocks[r] < 1) {
      snprintf(rel, sizeof rel, "requests[%" PRId32 "]", r);
      return av__wl_error(loc, AV_ERR_SCHEMA, rel,
                          "request %" PRId32 " has no blocks; expected at least one block id",
                          r);
    }
    *total += n_blocks[r];
    if (*total > AV_WL_MAX_BLOCKS)
      return av__wl_error(loc, AV_ERR_RANGE, "requests",
                          "the block table has more than %d entries; at most %d are supported",
                          AV_WL_MAX_BLOCKS, AV_WL_MAX_BLOCKS);
    if (lbt && (lbt[r] < 0 || lbt[r] > block_size)) {
      snprintf(rel, sizeof rel, "requests[%" PRId32 "].last_block_tokens", r);
      return av__wl_error(loc, AV_ERR_RANGE, rel,
                          "%" PRId32 " tokens in the last block is out of range; expected "
                          "0 (full) to %d",
                          lbt[r], block_size);
    }
  }
  return AV_OK;
}

static int nomem(const av__wloc_t *loc) {
  return av__wl_error(loc, AV_ERR_NOMEM, NULL, "out of memory building the block-table forest");
}

/* Trie node of block j of request r (prev: the node of block j-1, -1 for j = 0): found by id,
 * or added. On an id seen after another prefix: minus the error's code. */
static int32_t trie_node(bt_t *b, const int32_t *n_blocks, int64_t id, int32_t r, int32_t j,
                         int32_t prev, const av__wloc_t *loc) {
  uint64_t s = slot_of(b, id);
  if (b->vals[s]) {
    int32_t t = b->vals[s] - 1, r0, j0;
    if (b->tparent[t] == prev) return t;
    char rel[96], was[96], now[64];
    first_use(b, n_blocks, id, &r0, &j0);
    id_path(loc, r, j, rel, sizeof rel);
    id_path(loc, r0, j0, was, sizeof was);
    if (prev < 0)
      snprintf(now, sizeof now, "starts the sequence");
    else
      snprintf(now, sizeof now, "follows block %" PRId64, b->id[prev]);
    return -av__wl_error(loc, AV_ERR_MISMATCH, rel,
                         "block %" PRId64 " %s here but has a different prefix at %s; a "
                         "physical block holds one prefix's KV, so the table is inconsistent",
                         id, now, was);
  }
  int32_t t = b->n_trie++;  /* build_trie sized the arrays for every id it may add */
  b->vals[s] = t + 1;
  b->id[t] = id;
  b->tparent[t] = prev;
  if (prev >= 0) b->nchild[prev]++;
  return t;
}

/* Length of the common prefix of a[0..m) and b[0..m), `elem` (4 or 8) bytes an element:
 * memcmp over long runs, then 8-byte words, then the elements of the word that differs. */
static inline int32_t common_prefix(const char *a, const char *b, int32_t m, size_t elem) {
  size_t n = (size_t)m * elem, k = 0;
  while (k + 256 <= n && memcmp(a + k, b + k, 256) == 0) k += 256;
  for (uint64_t x, y; k + 8 <= n; k += 8) {
    memcpy(&x, a + k, 8);
    memcpy(&y, b + k, 8);
    if (x != y) break;
  }
  while (k < n && memcmp(a + k, b + k, elem) == 0) k += elem;
  return (int32_t)(k / elem);
}

/* How many leading blocks request r shares with request r-1 (0 for the first). */
static int32_t shared_with_previous(const av__bt_ids_t *x, const int32_t *n_blocks, int32_t r) {
  if (r == 0) return 0;
  int32_t m = n_blocks[r] < n_blocks[r - 1] ? n_blocks[r] : n_blocks[r - 1];
  if (x->lists)
    return common_prefix((const char *)x->lists[r], (const char *)x->lists[r - 1], m,
                         sizeof **x->lists);
  const int32_t *row = x->table + (int64_t)r * x->stride;
  return common_prefix((const char *)row, (const char *)(row - x->stride), m, sizeof *row);
}

/* Sizes the trie for the blocks no request shares with its predecessor (a bound on the
 * distinct ids) in two allocations: zeroed (id slots, fill, child counts, full ends) and
 * not (ids, parents, the walk's path). */
static int alloc_trie(bt_t *b, int64_t fresh, int32_t longest, int32_t **path) {
  for (b->bits = 4; ((uint64_t)1 << b->bits) < 2 * (uint64_t)fresh; b->bits++) {}
  b->mask = ((uint64_t)1 << b->bits) - 1;
  size_t n = (size_t)fresh, slots = b->mask + 1;
  b->vals = calloc(1, (slots + 2 * n) * sizeof(int32_t) + n);
  b->id = malloc(n * (sizeof(int64_t) + sizeof(int32_t)) +
                 (size_t)(longest ? longest : 1) * sizeof(int32_t));
  if (!b->vals || !b->id) return -1;
  b->fill = b->vals + slots;
  b->nchild = b->fill + n;
  b->full_end = (unsigned char *)(b->nchild + n);
  b->tparent = (int32_t *)(b->id + n);
  *path = b->tparent + n;
  return 0;
}

static int build_trie(bt_t *b, const int32_t *n_blocks, int32_t n_req, int bs,
                      const int32_t *lbt, const av__wloc_t *loc) {
  /* A request repeating its predecessor's first blocks (the usual order of a serving batch)
   * walks them along the predecessor's trie path without looking ids up; the rest bound the
   * distinct ids, which size the id table and the per-node arrays. */
  b->same = malloc((size_t)n_req * 3 * sizeof *b->same);
  if (!b->same) return nomem(loc);
  b->end_t = b->same + n_req;
  b->end_k = b->end_t + n_req;
  int64_t fresh = 0;
  int32_t longest = 0, *path = NULL;
  for (int32_t r = 0; r < n_req; r++) {
    b->same[r] = shared_with_previous(b->ids, n_blocks, r);
    if (b->ids->shared) b->ids->shared[r] = b->same[r];
    fresh += n_blocks[r] - b->same[r];
    longest = n_blocks[r] > longest ? n_blocks[r] : longest;
  }
  if (alloc_trie(b, fresh, longest, &path)) return nomem(loc);
  for (int32_t r = 0; r < n_req; r++) {
    /* Blocks before the last one shared with the predecessor are full, inner blocks of both
     * (their fill is already the block size): nothing to do for them. */
    int32_t same = b->same[r], j0 = same > 1 ? same - 1 : 0, last = n_blocks[r] - 1;
    int32_t prev = j0 ? path[j0 - 1] : -1;
    const int64_t *l64 = b->ids->lists ? b->ids->lists[r] : NULL;
    const int32_t *l32 = l64 ? NULL : b->ids->table + (int64_t)r * b->ids->stride;
    for (int32_t j = j0; j <= last; j++) {
      int32_t t = j < same ? path[j]
                           : trie_node(b, n_blocks, l64 ? l64[j] : l32[j], r, j, prev, loc);
      if (t < 0) return -t;
      path[j] = t;
      if (b->fill[t] < bs) {
        int32_t used = j == last && lbt && lbt[r] ? lbt[r] : bs;
        if (used > b->fill[t]) b->fill[t] = used;
      }
      prev = t;
    }
    b->end_t[r] = prev;
    b->end_k[r] = lbt && lbt[r] ? lbt[r] : bs;
  }
  return AV_OK;
}

static int cmp_pair(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Distinct part-way ends per block, as sorted cut offsets grouped by trie node. */
static int collect_cuts(bt_t *b, int32_t n_req, const av__wloc_t *loc) {
  int64_t *pairs = NULL;
  b->cut_off = calloc((size_t)b->n_trie + 1, sizeof *b->cut_off);
  b->cuts = malloc((size_t)n_req * sizeof *b->cuts);
  if (!b->cut_off || !b->cuts) return nomem(loc);
  int32_t np = 0;
  for (int32_t r = 0; r < n_req; r++) {
    int32_t t = b->end_t[r];
    if (b->end_k[r] == b->fill[t]) {
      b->full_end[t] = 1;
    } else {
      if (!pairs && !(pairs = malloc((size_t)n_req * 2 * sizeof *pairs))) return nomem(loc);
      pairs[2 * np] = t;
      pairs[2 * np + 1] = b->end_k[r];
      np++;
    }
  }
  if (np == 0) return AV_OK; /* no cuts: every offset stays 0 */
  qsort(pairs, (size_t)np, 2 * sizeof *pairs, cmp_pair);
  int32_t nc = 0;
  for (int32_t i = 0; i < np; i++) {
    if (i && pairs[2 * i] == pairs[2 * i - 2] && pairs[2 * i + 1] == pairs[2 * i - 1]) continue;
    b->cut_off[pairs[2 * i] + 1]++;
    b->cuts[nc++] = (int32_t)pairs[2 * i + 1];
  }
  for (int32_t t = 0; t < b->n_trie; t++) b->cut_off[t + 1] += b->cut_off[t];
  free(pairs);
  return AV_OK;
}

/* Radix node of trie node t's segment s (segment s ends at cut s, the last at fill). */
static int32_t seg_radix(const bt_t *b, int32_t t, int32_t s) {
  return s == 0 ? b->seg0[t] : b->first_new[t] + s - 1;
}

static int32_t new_radix(bt_t *b, int32_t parent, int64_t key_id, int64_t key_off) {
  int32_t v = b->n_radix++;
  b->rparent[v] = parent;
  b->rlen[v] = 0;
  b->rkey_id[v] = key_id;
  b->rkey_off[v] = key_off;
  return v;
}

static int too_long(const bt_t *b, const int32_t *n_blocks, int32_t t, const av__wloc_t *loc) {
  char rel[64];
  int32_t r, j;
  first_use(b, n_blocks, b->id[t], &r, &j);
  snprintf(rel, sizeof rel, "requests[%" PRId32 "]", r);
  return av__wl_error(loc, AV_ERR_RANGE, rel,
                      "a run of blocks without a branch holds more than %d tokens; at most %d "
                      "are supported per node",
                      AV_WL_MAX_NODE_TOKENS, AV_WL_MAX_NODE_TOKENS);
}

/* Radix node of each request's end: its block's segment that ends at the request's token. */
static void request_ends(bt_t *b, int32_t n_req) {
  for (int32_t r = 0; r < n_req; r++) {
    int32_t t = b->end_t[r], lo = b->cut_off[t], m = b->cut_off[t + 1] - lo, s = m;
    if (b->end_k[r] != b->fill[t]) /* binary search among t's cuts */
      for (int32_t a = 0, z = m - 1; a <= z;) {
        int32_t mid = (a + z) / 2;
        if (b->cuts[lo + mid] == b->end_k[r]) {
          s = mid;
          break;
        }
        if (b->cuts[lo + mid] < b->end_k[r]) a = mid + 1; else z = mid - 1;
      }
    b->req_radix[r] = seg_radix(b, t, s);
  }
}

/* Walks the trie in creation order, starting a radix node where the previous block's
 * node branches, ends a request, or where a request ends part-way into this block. */
static int build_radix(bt_t *b, const int32_t *n_blocks, int32_t n_req,
                       const av__wloc_t *loc) {
  size_t cap = (size_t)b->n_trie + (size_t)b->cut_off[b->n_trie], nt = (size_t)b->n_trie;
  b->rlen = malloc(cap * 3 * sizeof(int64_t) + (cap + 3 * nt + (size_t)n_req) * sizeof(int32_t));
  if (!b->rlen) return nomem(loc);
  b->rkey_id = b->rlen + cap;
  b->rkey_off = b->rkey_id + cap;
  b->rparent = (int32_t *)(b->rkey_off + cap);
  b->seg0 = b->rparent + cap;
  b->first_new = b->seg0 + nt;
  b->last_seg = b->first_new + nt;
  b->req_radix = b->last_seg + nt;
  for (int32_t t = 0; t < b->n_trie; t++) {
    const int32_t *cut = b->cuts + b->cut_off[t];
    int32_t m = b->cut_off[t + 1] - b->cut_off[t], p = b->tparent[t], v;
    if (p < 0) {
      v = new_radix(b, -1, b->id[t], 0);
    } else {
      int32_t pend = b->last_seg[p];
      v = b->full_end[p] || b->nchild[p] != 1 ? new_radix(b, pend, b->id[t], 0) : pend;
    }
    b->seg0[t] = v;
    b->first_new[t] = b->n_radix;
    for (int32_t s = 0; s <= m; s++) { /* m = 0, one segment, is the usual block */
      if (s > 0) v = new_radix(b, v, b->id[t], cut[s - 1]);
      b->rlen[v] += (s < m ? cut[s] : b->fill[t]) - (s > 0 ? cut[s - 1] : 0);
      if (b->rlen[v] > AV_WL_MAX_NODE_TOKENS) return too_long(b, n_blocks, t, loc);
    }
    b->last_seg[t] = v;
  }
  request_ends(b, n_req);
  return AV_OK;
}

static int key_less(const bt_t *b, int32_t u, int32_t v) {
  if (b->rkey_id[u] != b->rkey_id[v]) return b->rkey_id[u] < b->rkey_id[v];
  return b->rkey_off[u] < b->rkey_off[v];
}

static void heap_push(const bt_t *b, int32_t *h, int32_t *n, int32_t v) {
  int32_t i = (*n)++;
  while (i > 0 && key_less(b, v, h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static int32_t heap_pop(const bt_t *b, int32_t *h, int32_t *n) {
  int32_t top = h[0], v = h[--(*n)], i = 0;
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && key_less(b, h[c + 1], h[c])) c++;
    if (!key_less(b, h[c], v)) break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0) h[i] = v;
  return top;
}

/* Numbers radix nodes by (first block id, offset) among those whose parent is numbered
 * (Kahn's order with a min-heap): parents precede children, and a table whose ids are
 * node-major, as av_workload_to_block_table writes them, gets its forest's order back. */
static av_workload_t *emit(bt_t *b, int32_t n_req, const av_heads_t *heads,
                           const av__wloc_t *loc) {
  int32_t n = b->n_radix, *off = calloc((size_t)n * 4 + 1, sizeof(int32_t));
  int32_t *kids = off ? off + n + 1 : NULL, *heap = off ? kids + n : NULL;
  int32_t *newid = off ? heap + n : NULL;
  av_workload_t *w = n <= AV_WL_MAX_NODES ? av_workload_create(n, n_req) : NULL;
  if (!off || !w) {
    if (n > AV_WL_MAX_NODES)
      av__wl_error(loc, AV_ERR_RANGE, "requests",
                   "the block table makes %" PRId32 " nodes; at most %d are supported", n,
                   AV_WL_MAX_NODES);
    else
      nomem(loc);
    av_workload_destroy(w);
    w = NULL;
    goto done;
  }
  for (int32_t v = 0; v < n; v++)
    if (b->rparent[v] >= 0) off[b->rparent[v] + 1]++;
  for (int32_t v = 0; v < n; v++) off[v + 1] += off[v];
  for (int32_t v = 0; v < n; v++) heap[v] = off[v]; /* heap as fill cursors first */
  for (int32_t v = 0; v < n; v++)
    if (b->rparent[v] >= 0) kids[heap[b->rparent[v]]++] = v;
  int32_t hn = 0, next = 0;
  for (int32_t v = 0; v < n; v++)
    if (b->rparent[v] < 0) heap_push(b, heap, &hn, v);
  while (hn > 0) {
    int32_t v = heap_pop(b, heap, &hn);
    newid[v] = next++;
    for (int32_t k = off[v]; k < off[v + 1]; k++) heap_push(b, heap, &hn, kids[k]);
  }
  w->heads = *heads;
  for (int32_t v = 0; v < n; v++) {
    av_node_t *u = &w->nodes[newid[v]];
    u->parent = b->rparent[v] < 0 ? -1 : newid[b->rparent[v]];
    u->kv_len_tokens = b->rlen[v];
  }
  for (int32_t r = 0; r < n_req; r++) w->request_node[r] = newid[b->req_radix[r]];
done:
  free(off);
  return w;
}

av_workload_t *av__workload_block_table(const av__bt_ids_t *ids, const int32_t *n_blocks,
                                        int32_t n_requests, int block_size,
                                        const int32_t *last_block_tokens,
                                        const av_heads_t *heads, const av__wloc_t *loc) {
  int64_t total = 0;
  if (check_input(n_blocks, n_requests, block_size, last_block_tokens, loc, &total) ||
      av__heads_check(heads, loc))
    return NULL;
  bt_t b;
  memset(&b, 0, sizeof b);
  b.ids = ids;
  av_workload_t *w = NULL;
  if (!build_trie(&b, n_blocks, n_requests, block_size, last_block_tokens, loc) &&
      !collect_cuts(&b, n_requests, loc) && !build_radix(&b, n_blocks, n_requests, loc))
    w = emit(&b, n_requests, heads, loc);
  bt_free(&b);
  if (!w) return NULL;
  w->block_size_tokens = block_size;
  if (av__workload_finalize(w, loc)) {
    av_workload_destroy(w);
    return NULL;
  }
  av__workload_set_name(w, "block_table %" PRId32 " requests %" PRId32 " nodes", n_requests,
                        w->n_nodes);
  return w;
}

av_workload_t *av_workload_from_block_table(const int64_t *const *blocks,
                                            const int32_t *n_blocks, int32_t n_requests,
                                            int block_size, const int32_t *last_block_tokens,
                                            const av_heads_t *heads, av_error_t *err) {
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  if (n_requests > 0 && (!blocks || !n_blocks)) {
    av__wl_error(&loc, AV_ERR_INTERNAL, NULL, "no block lists given");
    return NULL;
  }
  av__bt_ids_t ids = {.lists = blocks};
  return av__workload_block_table(&ids, n_blocks, n_requests, block_size, last_block_tokens,
                                  av__heads_or_default(heads, &hbuf), &loc);
}

av_workload_t *av_workload_from_block_rows(const av_block_rows_t *rows, int block_size,
                                           const int32_t *last_block_tokens,
                                           const av_heads_t *heads, int32_t *shared,
                                           av_error_t *err) {
  const int32_t *table = rows->table, *n_blocks = rows->n_blocks;
  const int64_t row_stride = rows->row_stride;
  const int32_t n_requests = rows->n_requests;
  av__wloc_t loc = {.source = NULL, .path = "", .err = err};
  av_heads_t hbuf;
  if (n_requests > 0 && (!table || !n_blocks)) {
    av__wl_error(&loc, AV_ERR_INTERNAL, NULL, "no block table given");
    return NULL;
  }
  for (int32_t r = 0; r < n_requests; r++) {
    if (n_blocks[r] > row_stride) {
      av__wl_error(&loc, AV_ERR_INTERNAL, NULL, "request %" PRId32 " has %" PRId32 " blocks "
                   "but the rows hold %" PRId64, r, n_blocks[r], row_stride);
      return NULL;
    }
    /* ids are opaque but index a serving engine's KV cache: a negative one among the blocks
     * a request uses is a hole in its table (padding after them is never read). A planner
     * reads only new blocks between builds and builds anew on a negative one, so every id
     * it plans with has passed here. */
    const int32_t *row = table + (int64_t)r * row_stride;
    int32_t any = 0;
    for (int32_t j = 0; j < n_blocks[r]; j++) any |= row[j];
    for (int32_t j = 0; any < 0 && j < n_blocks[r]; j++)
      if (row[j] < 0) {
        char at[64];
        snprintf(at, sizeof at, "block_table[%" PRId32 "][%" PRId32 "]", r, j);
        av__wl_error(&loc, AV_ERR_RANGE, at, "block id %" PRId32 " is negative; expected ids "
                     ">= 0 in the %" PRId32 " blocks request %" PRId32 " uses", row[j],
                     n_blocks[r], r);
        return NULL;
      }
  }
  av__bt_ids_t ids = {.table = table, .stride = row_stride, .shared = shared};
  return av__workload_block_table(&ids, n_blocks, n_requests, block_size, last_block_tokens,
                                  av__heads_or_default(heads, &hbuf), &loc);
}

/* Node-major sequential block ids: node u owns ids start[u] .. start[u] + ceil(len/bs) - 1.
 * Only a request's last block may be part-full, so every node with children must hold a
 * whole number of blocks. */
int av_workload_to_block_table(const av_workload_t *w, int block_size, int64_t ***blocks,
                               int32_t **n_blocks, int32_t **last_block_tokens,
                               av_error_t *err) {
  *blocks = NULL;
  *n_blocks = NULL;
  *last_block_tokens = NULL;
  if (!w || !w->request_kv_tokens)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "workload is not finalized");
  if (block_size < 1 || block_size > AV_WL_MAX_BLOCK_SIZE)
    return av_error_set(err, AV_ERR_RANGE, NULL, "block_size",
                        "block size %d is out of range; expected an integer in [1, %d]",
                        block_size, AV_WL_MAX_BLOCK_SIZE);
  int64_t total = 0;
  for (int32_t u = 0; u < w->n_nodes; u++) {
    const av_node_t *nd = &w->nodes[u];
    if (nd->first_child >= 0 && nd->kv_len_tokens % block_size != 0) {
      char rel[64];
      snprintf(rel, sizeof rel, "nodes[%" PRId32 "]", u);
      return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, rel,
                          "node %" PRId32 " has children and %" PRId64 " tokens, not a multiple "
                          "of the block size %d; a block table can only leave a request's "
                          "last block part-full",
                          u, nd->kv_len_tokens, block_size);
    }
  }
  for (int32_t r = 0; r < w->n_requests; r++)
    total += (w->request_kv_tokens[r] + block_size - 1) / block_size;
  if (total > AV_WL_MAX_BLOCKS)
    return av_error_set(err, AV_ERR_RANGE, NULL, NULL,
                        "the block table would have %" PRId64 " entries; at most %d are "
                        "supported",
                        total, AV_WL_MAX_BLOCKS);
  int64_t *start = malloc((size_t)w->n_nodes * sizeof *start);
  int64_t **lists = calloc((size_t)w->n_requests, sizeof *lists);
  int32_t *nb = malloc((size_t)w->n_requests * sizeof *nb);
  int32_t *lbt = malloc((size_t)w->n_requests * sizeof *lbt);
  int bad = !start || !lists || !nb || !lbt;
  int64_t next = 0;
  for (int32_t u = 0; !bad && u < w->n_nodes; u++) {
    start[u] = next;
    next += ((w->nodes[u].kv_len_tokens + block_size - 1) / block_size);
  }
  for (int32_t r = 0; !bad && r < w->n_requests; r++) {
    int32_t last = w->request_node[r];
    nb[r] = (int32_t)((w->request_kv_tokens[r] + block_size - 1) / block_size);
    lbt[r] = (int32_t)(w->nodes[last].kv_len_tokens % block_size);
    lists[r] = malloc((size_t)nb[r] * sizeof **lists);
    if (!lists[r]) {
      bad = 1;
      break;
    }
    /* Fill from the end: the last node's blocks, then its ancestors'. */
    int32_t pos = nb[r];
    for (int32_t u = last; u >= 0; u = w->nodes[u].parent) {
      int32_t k = (int32_t)((w->nodes[u].kv_len_tokens + block_size - 1) / block_size);
      for (int32_t i = k - 1; i >= 0; i--) lists[r][--pos] = start[u] + i;
    }
  }
  free(start);
  if (bad) {
    for (int32_t r = 0; lists && r < w->n_requests; r++) free(lists[r]);
    free(lists);
    free(nb);
    free(lbt);
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory writing the block table");
  }
  *blocks = lists;
  *n_blocks = nb;
  *last_block_tokens = lbt;
  return AV_OK;
}
