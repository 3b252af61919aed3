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

typedef struct bt {
  /* Trie of block ids: node t is one physical block, created in first-use order, so a
   * parent always precedes its children. */
  int32_t n_trie;
  int64_t *id;
  int32_t *tparent, *fill, *nchild, *first_req, *first_pos;
  unsigned char *full_end; /* a request ends at the block's last used token */
  /* id -> trie index + 1 (0 = empty slot), open addressing. */
  uint64_t mask;
  int64_t *keys;
  int32_t *vals;
  /* Where each request ends: trie node and tokens used of that block. */
  int32_t *end_t, *end_k;
  /* Cuts inside blocks (requests ending part-way), grouped by trie node. */
  int32_t *cut_off, *cuts;
  /* Radix nodes: parent, length, ordering key (first block id, offset in it). */
  int32_t n_radix;
  int32_t *rparent, *seg0, *first_new, *req_radix;
  int64_t *rlen, *rkey_id, *rkey_off;
} bt_t;

static void bt_free(bt_t *b) {
  void *p[] = {b->id,   b->tparent, b->fill,    b->nchild,  b->first_req, b->first_pos,
               b->full_end, b->keys, b->vals,   b->end_t,   b->end_k,     b->cut_off,
               b->cuts, b->rparent, b->seg0,    b->first_new, b->req_radix, b->rlen,
               b->rkey_id, b->rkey_off};
  for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Slot of `key`: its own, or the empty one where it would go. */
static uint64_t slot_of(const bt_t *b, int64_t key) {
  uint64_t s = mix((uint64_t)key) & b->mask;
  while (b->vals[s] && b->keys[s] != key) s = (s + 1) & b->mask;
  return s;
}

static void id_path(const av__wloc_t *loc, int32_t r, int32_t j, char *rel, size_t size) {
  if (loc->bt_object_form && loc->bt_object_form[r])
    snprintf(rel, size, "requests[%" PRId32 "].blocks[%" PRId32 "]", r, j);
  else
    snprintf(rel, size, "requests[%" PRId32 "][%" PRId32 "]", r, j);
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
    snprintf(rel, sizeof rel, "requests[%" PRId32 "]", r);
    if (n_blocks[r] < 1)
      return av__wl_error(loc, AV_ERR_SCHEMA, rel,
                          "request %" PRId32 " has no blocks; expected at least one block id",
                          r);
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

/* Inserts every request's id sequence; a known id must be reached from the same prefix. */
/* Trie node of block j of request r (prev: the node of block j-1, -1 for j = 0): found by id,
 * or added. On an id seen after another prefix: minus the error's code. */
static int32_t trie_node(bt_t *b, const int64_t *const *blocks, int32_t r, int32_t j,
                         int32_t prev, const av__wloc_t *loc) {
  uint64_t s = slot_of(b, blocks[r][j]);
  if (b->vals[s]) {
    int32_t t = b->vals[s] - 1;
    if (b->tparent[t] == prev) return t;
    char rel[96], was[96], now[64];
    id_path(loc, r, j, rel, sizeof rel);
    id_path(loc, b->first_req[t], b->first_pos[t], was, sizeof was);
    if (prev < 0)
      snprintf(now, sizeof now, "starts the sequence");
    else
      snprintf(now, sizeof now, "follows block %" PRId64, b->id[prev]);
    return -av__wl_error(loc, AV_ERR_MISMATCH, rel,
                         "block %" PRId64 " %s here but has a different prefix at %s; a "
                         "physical block holds one prefix's KV, so the table is inconsistent",
                         blocks[r][j], now, was);
  }
  int32_t t = b->n_trie++;  /* build_trie sized the arrays for every id it may add */
  b->keys[s] = blocks[r][j];
  b->vals[s] = t + 1;
  b->id[t] = blocks[r][j];
  b->tparent[t] = prev;
  b->first_req[t] = r;
  b->first_pos[t] = j;
  if (prev >= 0) b->nchild[prev]++;
  return t;
}

/* How many leading blocks request r shares with request r-1 (0 for the first). */
static int32_t shared_with_previous(const int64_t *const *blocks, const int32_t *n_blocks,
                                    int32_t r) {
  if (r == 0) return 0;
  int32_t m = n_blocks[r] < n_blocks[r - 1] ? n_blocks[r] : n_blocks[r - 1], same = 0;
  while (same + 16 <= m &&
         memcmp(blocks[r] + same, blocks[r - 1] + same, 16 * sizeof **blocks) == 0)
    same += 16;
  while (same < m && blocks[r][same] == blocks[r - 1][same]) same++;
  return same;
}

static int build_trie(bt_t *b, const int64_t *const *blocks, const int32_t *n_blocks,
                      int32_t n_req, int bs, const int32_t *lbt, const av__wloc_t *loc) {
  /* A request repeating its predecessor's first blocks (the usual order of a serving batch)
   * walks them along the predecessor's trie path without looking ids up; the rest bound the
   * distinct ids, which size the id table and the per-node arrays. */
  int32_t *same = malloc((size_t)n_req * sizeof *same);
  if (!same) return nomem(loc);
  int64_t fresh = 0;
  int32_t longest = 0;
  for (int32_t r = 0; r < n_req; r++) {
    same[r] = shared_with_previous(blocks, n_blocks, r);
    fresh += n_blocks[r] - same[r];
    longest = n_blocks[r] > longest ? n_blocks[r] : longest;
  }
  b->mask = 15;
  while (b->mask + 1 < 2 * (uint64_t)fresh) b->mask = 2 * b->mask + 1;
  b->keys = malloc((b->mask + 1) * sizeof *b->keys);
  b->vals = calloc(b->mask + 1, sizeof *b->vals);
  size_t n = (size_t)fresh;
  b->id = malloc(n * sizeof *b->id);
  b->tparent = malloc(n * sizeof(int32_t));
  b->fill = calloc(n, sizeof(int32_t));
  b->nchild = calloc(n, sizeof(int32_t));
  b->first_req = malloc(n * sizeof(int32_t));
  b->first_pos = malloc(n * sizeof(int32_t));
  b->full_end = calloc(n, 1);
  b->end_t = malloc((size_t)n_req * sizeof(int32_t));
  b->end_k = malloc((size_t)n_req * sizeof(int32_t));
  int32_t *path = malloc((size_t)(longest ? longest : 1) * sizeof *path);
  int rc = AV_OK;
  if (!b->keys || !b->vals || !b->id || !b->tparent || !b->fill || !b->nchild ||
      !b->first_req || !b->first_pos || !b->full_end || !b->end_t || !b->end_k || !path)
    rc = nomem(loc);
  for (int32_t r = 0; !rc && r < n_req; r++) {
    /* Blocks before the last one shared with the predecessor are full, inner blocks of both
     * (their fill is already the block size): nothing to do for them. */
    int32_t j0 = same[r] > 1 ? same[r] - 1 : 0;
    int32_t prev = j0 ? path[j0 - 1] : -1;
    for (int32_t j = j0; !rc && j < n_blocks[r]; j++) {
      int32_t t = j < same[r] ? path[j] : trie_node(b, blocks, r, j, prev, loc);
      if (t < 0) {
        rc = -t;
        break;
      }
      path[j] = t;
      int last = j == n_blocks[r] - 1;
      int32_t used = last && lbt && lbt[r] ? lbt[r] : bs;
      if (used > b->fill[t]) b->fill[t] = used;
      if (last) {
        b->end_t[r] = t;
        b->end_k[r] = used;
      }
      prev = t;
    }
  }
  free(path);
  free(same);
  return rc;
}

static int cmp_pair(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Distinct part-way ends per block, as sorted cut offsets grouped by trie node. */
static int collect_cuts(bt_t *b, int32_t n_req, const av__wloc_t *loc) {
  int64_t *pairs = malloc((size_t)n_req * 2 * sizeof *pairs);
  b->cut_off = calloc((size_t)b->n_trie + 1, sizeof *b->cut_off);
  b->cuts = malloc((size_t)n_req * sizeof *b->cuts);
  if (!pairs || !b->cut_off || !b->cuts) {
    free(pairs);
    return nomem(loc);
  }
  int32_t np = 0;
  for (int32_t r = 0; r < n_req; r++) {
    int32_t t = b->end_t[r];
    if (b->end_k[r] == b->fill[t]) {
      b->full_end[t] = 1;
    } else {
      pairs[2 * np] = t;
      pairs[2 * np + 1] = b->end_k[r];
      np++;
    }
  }
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

/* Walks the trie in creation order, starting a radix node where the previous block's
 * node branches, ends a request, or where a request ends part-way into this block. */
static int build_radix(bt_t *b, int32_t n_req, const av__wloc_t *loc) {
  size_t cap = (size_t)b->n_trie + (size_t)b->cut_off[b->n_trie];
  b->rparent = malloc(cap * sizeof(int32_t));
  b->rlen = malloc(cap * sizeof(int64_t));
  b->rkey_id = malloc(cap * sizeof(int64_t));
  b->rkey_off = malloc(cap * sizeof(int64_t));
  b->seg0 = malloc((size_t)b->n_trie * sizeof(int32_t));
  b->first_new = malloc((size_t)b->n_trie * sizeof(int32_t));
  b->req_radix = malloc((size_t)n_req * sizeof(int32_t));
  if (!b->rparent || !b->rlen || !b->rkey_id || !b->rkey_off || !b->seg0 || !b->first_new ||
      !b->req_radix)
    return nomem(loc);
  for (int32_t t = 0; t < b->n_trie; t++) {
    const int32_t *cut = b->cuts + b->cut_off[t];
    int32_t m = b->cut_off[t + 1] - b->cut_off[t], p = b->tparent[t];
    if (p < 0) {
      b->seg0[t] = new_radix(b, -1, b->id[t], 0);
    } else {
      int32_t pend = seg_radix(b, p, b->cut_off[p + 1] - b->cut_off[p]);
      b->seg0[t] = b->full_end[p] || b->nchild[p] != 1 ? new_radix(b, pend, b->id[t], 0) : pend;
    }
    b->first_new[t] = b->n_radix;
    for (int32_t s = 0; s <= m; s++) {
      if (s > 0) new_radix(b, seg_radix(b, t, s - 1), b->id[t], cut[s - 1]);
      int32_t v = seg_radix(b, t, s);
      b->rlen[v] += (s < m ? cut[s] : b->fill[t]) - (s > 0 ? cut[s - 1] : 0);
      if (b->rlen[v] > AV_WL_MAX_NODE_TOKENS) {
        char rel[64];
        snprintf(rel, sizeof rel, "requests[%" PRId32 "]", b->first_req[t]);
        return av__wl_error(loc, AV_ERR_RANGE, rel,
                            "a run of blocks without a branch holds more than %d tokens; at "
                            "most %d are supported per node",
                            AV_WL_MAX_NODE_TOKENS, AV_WL_MAX_NODE_TOKENS);
      }
    }
  }
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
  int32_t n = b->n_radix, *off = calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *kids = malloc((size_t)n * sizeof(int32_t)), *heap = malloc((size_t)n * sizeof(int32_t));
  int32_t *newid = malloc((size_t)n * sizeof(int32_t));
  av_workload_t *w = n <= AV_WL_MAX_NODES ? av_workload_create(n, n_req) : NULL;
  if (!off || !kids || !heap || !newid || !w) {
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
  free(kids);
  free(heap);
  free(newid);
  return w;
}

av_workload_t *av__workload_block_table(const int64_t *const *blocks, const int32_t *n_blocks,
                                        int32_t n_requests, int block_size,
                                        const int32_t *last_block_tokens,
                                        const av_heads_t *heads, const av__wloc_t *loc) {
  int64_t total = 0;
  if (check_input(n_blocks, n_requests, block_size, last_block_tokens, loc, &total) ||
      av__heads_check(heads, loc))
    return NULL;
  bt_t b;
  memset(&b, 0, sizeof b);
  av_workload_t *w = NULL;
  if (!build_trie(&b, blocks, n_blocks, n_requests, block_size, last_block_tokens, loc) &&
      !collect_cuts(&b, n_requests, loc) && !build_radix(&b, n_requests, loc))
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
  return av__workload_block_table(blocks, n_blocks, n_requests, block_size, last_block_tokens,
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
