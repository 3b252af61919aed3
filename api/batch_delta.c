/* What changed in a serving engine's block table since a planner's last step, read against
 * the planner's index of its batch, and the batch's forest edited to match (plan_patch.h).
 * Each row is read once: its own blocks against the ids the index kept for its request,
 * its shared blocks against its parent's path, which stays in cache from row to row. */
#include <stdlib.h>
#include <string.h>

#include "api/plan_patch.h"

#define LOOKAHEAD 8            /* finished requests skipped over at one row */
#define MAX_ID ((int64_t)1 << 30)

int av__reserve(void *pp, size_t *cap, size_t n, size_t elem) {
  if (n <= *cap && *(void **)pp) return 0;
  size_t want = n + n / 2 + 16;
  void *q = realloc(*(void **)pp, want * elem);
  if (!q) return -1;
  *(void **)pp = q;
  *cap = want;
  return 0;
}

void av__delta_free(av__delta_t *d) {
  free(d->noff);
  free(d->nchild);
  free(d->nid);
  free(d->nb);
  free(d->pb);
  free(d->tok);
  free(d->row_of);
  free(d->kept);
  free(d->free_rows);
  free(d->bits);
  free(d->scratch);
  free(d->ch.new_of);
  free(d->ch.old_of);
  free(d->ch.arr_row);
  free(d->ch.arr_sib);
  free(d->ch.arr_leaf);
  free(d->ch.arr_par);
  free(d->ch.nmap);
  free(d->ch.old_len);
  free(d->ch.new_len);
}

static int bit_get(const av__delta_t *d, int32_t id) {
  size_t w = (size_t)id >> 6;
  return w < d->cap_bits && (d->bits[w] >> (id & 63) & 1);
}

static int bit_set(av__delta_t *d, int32_t id) {
  size_t w = (size_t)id >> 6, old = d->cap_bits;
  if (w >= old) {
    if (av__reserve(&d->bits, &d->cap_bits, w + 1, sizeof *d->bits)) return -1;
    memset(d->bits + old, 0, (d->cap_bits - old) * sizeof *d->bits);
  }
  d->bits[w] |= (uint64_t)1 << (id & 63);
  return 0;
}

static void bit_clear(av__delta_t *d, int32_t id) {
  size_t w = (size_t)id >> 6;
  if (w < d->cap_bits) d->bits[w] &= ~((uint64_t)1 << (id & 63));
}

static int32_t blocks_of(int64_t tokens, int bs) { return (int32_t)((tokens + bs - 1) / bs); }

static int32_t *kept_row(const av__delta_t *d, int32_t r) {
  return d->kept + (int64_t)d->row_of[r] * d->kstride;
}

/* Is the shape one patching handles: each request on a leaf of its own that starts at a
 * block boundary, each inner node whole blocks? */
static int patchable(const av_workload_t *w) {
  int bs = w->block_size_tokens;
  for (int32_t r = 0; r < w->n_requests; r++) {
    const av_node_t *u = &w->nodes[w->request_node[r]];
    if (u->first_child != -1 || u->share != 1 || u->path_offset_tokens % bs) return 0;
  }
  for (int32_t u = 0; u < w->n_nodes; u++)
    if (w->nodes[u].first_child != -1 && w->nodes[u].kv_len_tokens % bs) return 0;
  return 1;
}

static int index_nodes(av__delta_t *d, const av_workload_t *w, const int32_t *table,
                       int64_t stride) {
  int32_t nn = w->n_nodes, total = 0;
  if (av__reserve(&d->noff, &d->cap_noff, (size_t)nn + 1, sizeof *d->noff) ||
      av__reserve(&d->nchild, &d->cap_nchild, (size_t)nn, sizeof *d->nchild))
    return -1;
  for (int32_t u = 0; u < nn; u++) {
    const av_node_t *x = &w->nodes[u];
    d->noff[u] = total;
    d->nchild[u] = 0;
    if (x->first_child != -1) total += (int32_t)(x->kv_len_tokens / d->bs);
  }
  d->noff[nn] = total;
  if (av__reserve(&d->nid, &d->cap_nid, (size_t)total + 1, sizeof *d->nid)) return -1;
  for (int32_t u = 0; u < nn; u++) {
    const av_node_t *x = &w->nodes[u];
    if (x->parent >= 0) d->nchild[x->parent]++;
    if (x->first_child == -1) continue;
    int32_t r = w->node_reqs[w->node_req_offsets[u]];
    memcpy(d->nid + d->noff[u], table + (int64_t)r * stride + x->path_offset_tokens / d->bs,
           (size_t)(d->noff[u + 1] - d->noff[u]) * sizeof *d->nid);
    for (int32_t k = d->noff[u]; k < d->noff[u + 1]; k++)
      if (d->nid[k] < 0 || d->nid[k] >= MAX_ID || bit_set(d, d->nid[k])) return 1;
  }
  return 0;
}

int av__delta_reserve_requests(av__delta_t *d, size_t n) {
  size_t c = d->cap_req;
  if (av__reserve(&d->nb, &c, n, sizeof(int32_t))) return -1;
  c = d->cap_req;
  if (av__reserve(&d->pb, &c, n, sizeof(int32_t))) return -1;
  c = d->cap_req;
  if (av__reserve(&d->tok, &c, n, sizeof(int32_t))) return -1;
  c = d->cap_req;
  if (av__reserve(&d->row_of, &c, n, sizeof(int32_t))) return -1;
  d->cap_req = c;
  return 0;
}

int av__delta_index(av__delta_t *d, av_workload_t *w, const int32_t *table, int64_t stride,
                    const int32_t *tokens) {
  d->ok = 0;
  d->bs = w->block_size_tokens;
  d->kstride = stride;
  if (!patchable(w)) return 0;
  if (d->bits) memset(d->bits, 0, d->cap_bits * sizeof *d->bits);
  int rc = index_nodes(d, w, table, stride);
  if (rc) return rc < 0 ? -1 : 0;
  int32_t n = w->n_requests;
  if (av__delta_reserve_requests(d, (size_t)n)) return -1;
  int32_t rows = n + n / 4 + 8;
  if (av__reserve(&d->kept, &d->cap_kept, (size_t)rows * (size_t)stride, sizeof *d->kept) ||
      av__reserve(&d->free_rows, &d->cap_free, (size_t)rows, sizeof *d->free_rows))
    return -1;
  d->n_rows = rows;
  d->n_free = 0;
  for (int32_t k = rows - 1; k >= n; k--) d->free_rows[d->n_free++] = k;
  for (int32_t r = 0; r < n; r++) {
    const av_node_t *u = &w->nodes[w->request_node[r]];
    d->tok[r] = tokens[r];
    d->nb[r] = blocks_of(tokens[r], d->bs);
    d->pb[r] = (int32_t)(u->path_offset_tokens / d->bs);
    d->row_of[r] = r;
    const int32_t *row = table + (int64_t)r * stride;
    int32_t *kr = kept_row(d, r);
    for (int32_t j = d->pb[r]; j < d->nb[r]; j++) {
      if (row[j] < 0 || row[j] >= MAX_ID || bit_get(d, row[j])) return 0;
      kr[j] = row[j];
      if (bit_set(d, row[j])) return -1;
    }
  }
  /* The forest's arrays were sized to the batch by its builder. */
  d->cap_w_nodes = (size_t)w->n_nodes;
  d->cap_w_off = (size_t)w->n_nodes + 1;
  d->cap_w_req = d->cap_w_kv = (size_t)n;
  d->cap_w_reqs = (size_t)w->node_req_offsets[w->n_nodes];
  d->ok = 1;
  return 0;
}

/* Does `row` hold the blocks of node u's path (u >= 0 an inner node)? */
static int path_is(const av__delta_t *d, const av_workload_t *w, int32_t u, const int32_t *row) {
  for (; u >= 0; u = w->nodes[u].parent) {
    const int32_t *ids = d->nid + d->noff[u];
    int64_t at = w->nodes[u].path_offset_tokens / d->bs;
    if (memcmp(row + at, ids, (size_t)(d->noff[u + 1] - d->noff[u]) * sizeof *ids) != 0)
      return 0;
  }
  return 1;
}

/* Is row (with `tok` tokens) request i's, grown or not? Own blocks first: another request's
 * row differs there at once. */
static int same_request(const av__delta_t *d, const av_workload_t *w, int32_t i,
                        const int32_t *row, int32_t tok) {
  if (tok < d->tok[i] || blocks_of(tok, d->bs) > d->kstride) return 0;
  const int32_t *kr = kept_row(d, i);
  int32_t pb = d->pb[i];
  if (memcmp(row + pb, kr + pb, (size_t)(d->nb[i] - pb) * sizeof *row) != 0) return 0;
  return path_is(d, w, w->nodes[w->request_node[i]].parent, row);
}

static int reserve_changes(av__changes_t *c, int32_t n_old, int32_t n_new) {
  size_t co = c->cap_old, cn = c->cap_new;
  if (av__reserve(&c->new_of, &co, (size_t)n_old, sizeof(int32_t))) return -1;
  c->cap_old = co;
  int32_t **arrs[] = {&c->old_of, &c->arr_row, &c->arr_sib, &c->arr_leaf, &c->arr_par};
  for (int k = 0; k < 5; k++) {
    cn = c->cap_new;
    if (av__reserve(arrs[k], &cn, (size_t)n_new, sizeof(int32_t))) return -1;
  }
  c->cap_new = cn;
  return 0;
}

/* The old request an arrival at row j hangs beside: the nearest kept row's, when the arrival
 * starts with that request's parent path and has blocks of its own below it. */
static int32_t sibling_of(const av__delta_t *d, const av_workload_t *w, int32_t j,
                          const int32_t *row, int32_t tok) {
  const av__changes_t *c = &d->ch;
  for (int side = 0; side < 2; side++)
    for (int32_t k = side ? j + 1 : j - 1; k >= 0 && k < c->n_new; k += side ? 1 : -1) {
      int32_t s = c->old_of[k];
      if (s < 0) continue;
      int32_t p = w->nodes[w->request_node[s]].parent;
      if (p >= 0 && blocks_of(tok, d->bs) > d->pb[s] && path_is(d, w, p, row)) return s;
      break;
    }
  return -1;
}

static int32_t match_rows(av__delta_t *d, const av_workload_t *w, const int32_t *table,
                          int64_t stride, const int32_t *tokens) {
  av__changes_t *c = &d->ch;
  int32_t i = 0, n_old = c->n_old;
  for (int32_t k = 0; k < n_old; k++) c->new_of[k] = -1;
  for (int32_t j = 0; j < c->n_new; j++) {
    const int32_t *row = table + (int64_t)j * stride;
    int32_t hit = -1;
    for (int32_t k = i; k < n_old && k <= i + LOOKAHEAD && hit < 0; k++)
      if (same_request(d, w, k, row, tokens[j])) hit = k;
    c->old_of[j] = hit;
    if (hit < 0) continue;
    c->new_of[hit] = j;
    c->n_fin += hit - i;
    c->n_newblocks += blocks_of(tokens[j], d->bs) - d->nb[hit];
    i = hit + 1;
  }
  c->n_fin += n_old - i;
  return 0;
}

int av__delta_match(av__delta_t *d, const av_workload_t *w, const int32_t *table,
                    int64_t stride, const int32_t *tokens, int32_t n) {
  av__changes_t *c = &d->ch;
  if (!d->ok || stride > d->kstride || reserve_changes(c, w->n_requests, n)) return -1;
  c->n_old = w->n_requests;
  c->n_new = n;
  c->n_fin = c->n_arr = c->n_newblocks = 0;
  match_rows(d, w, table, stride, tokens);
  for (int32_t j = 0; j < n; j++) {
    if (c->old_of[j] >= 0) continue;
    int32_t s = sibling_of(d, w, j, table + (int64_t)j * stride, tokens[j]);
    if (s < 0) return -1;
    c->arr_row[c->n_arr] = j;
    c->arr_par[c->n_arr] = w->nodes[w->request_node[s]].parent;
    c->arr_sib[c->n_arr++] = s;
  }
  if (c->n_arr + c->n_fin == 0) return 0;
  /* Every inner node that loses or gains a leaf must keep two children, or the radix tree
   * would merge it into its last child (or drop it). */
  for (int32_t k = 0; k < c->n_old; k++)
    if (c->new_of[k] < 0) {
      int32_t p = w->nodes[w->request_node[k]].parent;
      if (p >= 0) d->nchild[p]--;
    }
  for (int32_t a = 0; a < c->n_arr; a++) d->nchild[c->arr_par[a]]++;
  int bad = 0;
  for (int32_t k = 0; k < c->n_old; k++)
    if (c->new_of[k] < 0) {
      int32_t p = w->nodes[w->request_node[k]].parent;
      bad |= p >= 0 && d->nchild[p] < 2;
    }
  /* Counts back as they were: av__delta_apply recounts. */
  for (int32_t k = 0; k < c->n_old; k++)
    if (c->new_of[k] < 0) {
      int32_t p = w->nodes[w->request_node[k]].parent;
      if (p >= 0) d->nchild[p]++;
    }
  for (int32_t a = 0; a < c->n_arr; a++) d->nchild[c->arr_par[a]]--;
  return bad ? -1 : 0;
}

int av__delta_claim(av__delta_t *d, const av_workload_t *w, const int32_t *table,
                    int64_t stride, const int32_t *tokens) {
  const av__changes_t *c = &d->ch;
  for (int32_t k = 0; k < c->n_old; k++) /* a finished request's blocks may be reused now */
    if (c->new_of[k] < 0) {
      const int32_t *kr = kept_row(d, k);
      for (int32_t j = d->pb[k]; j < d->nb[k]; j++) bit_clear(d, kr[j]);
    }
  for (int32_t j = 0; j < c->n_new; j++) {
    int32_t i = c->old_of[j], from;
    if (i >= 0) {
      from = d->nb[i];
    } else {
      int32_t s = -1;
      for (int32_t a = 0; a < c->n_arr; a++)
        if (c->arr_row[a] == j) s = c->arr_sib[a];
      from = d->pb[s];
    }
    const int32_t *row = table + (int64_t)j * stride;
    for (int32_t b = from, nb = blocks_of(tokens[j], d->bs); b < nb; b++)
      if (row[b] < 0 || row[b] >= MAX_ID || bit_get(d, row[b]) || bit_set(d, row[b])) return -1;
  }
  (void)w;
  return 0;
}
