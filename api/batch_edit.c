/* The planner's batch edited in place into the step's (plan_patch.h): finished requests'
 * leaves removed, arrivals' leaves appended under their parents, leaves grown, and the
 * derived fields recomputed into the arrays the planner keeps, so a step allocates nothing
 * once the batch has reached its size. */
#include <stdlib.h>
#include <string.h>

#include "api/plan_patch.h"
#include "core/workload_internal.h"

static int32_t blocks_of(int64_t tokens, int bs) { return (int32_t)((tokens + bs - 1) / bs); }

static int32_t arrival_at(const av__changes_t *c, int32_t j) {
  for (int32_t a = 0; a < c->n_arr; a++)
    if (c->arr_row[a] == j) return a;
  return -1;
}

int av__delta_maps(av__delta_t *d, const av_workload_t *w, const int32_t *tokens) {
  av__changes_t *c = &d->ch;
  int32_t nn = w->n_nodes, k = 0;
  size_t cn = c->cap_nodes;
  if (av__reserve(&c->nmap, &cn, (size_t)nn, sizeof *c->nmap)) return -1;
  cn = c->cap_nodes;
  if (av__reserve(&c->old_len, &cn, (size_t)nn, sizeof *c->old_len)) return -1;
  c->cap_nodes = cn;
  c->n_new_nodes = nn - c->n_fin + c->n_arr;
  if (av__reserve(&c->new_len, &c->cap_new_nodes, (size_t)c->n_new_nodes, sizeof *c->new_len))
    return -1;
  for (int32_t u = 0; u < nn; u++) {
    c->nmap[u] = 0;
    c->old_len[u] = w->nodes[u].kv_len_tokens;
  }
  for (int32_t i = 0; i < c->n_old; i++)
    if (c->new_of[i] < 0) c->nmap[w->request_node[i]] = -1;
  for (int32_t u = 0; u < nn; u++)
    if (c->nmap[u] >= 0) {
      c->nmap[u] = k;
      c->new_len[k++] = w->nodes[u].kv_len_tokens;
    }
  for (int32_t i = 0; i < c->n_old; i++) /* grown leaves */
    if (c->new_of[i] >= 0)
      c->new_len[c->nmap[w->request_node[i]]] = tokens[c->new_of[i]] - (int64_t)d->pb[i] * d->bs;
  for (int32_t a = 0; a < c->n_arr; a++) {
    c->arr_leaf[a] = k + a;
    c->new_len[k + a] = tokens[c->arr_row[a]] - (int64_t)d->pb[c->arr_sib[a]] * d->bs;
  }
  return 0;
}

/* Depths, path offsets, children, shares and the per-node request lists of w, into the
 * arrays kept in d (av__workload_finalize's fields, without its allocations). */
static int derive(av__delta_t *d, av_workload_t *w) {
  int32_t nn = w->n_nodes, n = w->n_requests;
  w->max_depth = 0;
  for (int32_t i = 0; i < nn; i++) {
    av_node_t *u = &w->nodes[i];
    u->first_child = u->next_sibling = -1;
    u->share = 0;
    const av_node_t *p = u->parent >= 0 ? &w->nodes[u->parent] : NULL;
    u->depth = p ? p->depth + 1 : 0;
    u->path_offset_tokens = p ? p->path_offset_tokens + p->kv_len_tokens : 0;
    if (u->path_offset_tokens + u->kv_len_tokens > AV_WL_MAX_PATH_TOKENS) return -1;
    if (u->depth + 1 > w->max_depth) w->max_depth = u->depth + 1;
  }
  for (int32_t i = nn - 1; i >= 0; i--) {
    av_node_t *u = &w->nodes[i];
    if (u->parent < 0) continue;
    u->next_sibling = w->nodes[u->parent].first_child;
    w->nodes[u->parent].first_child = i;
  }
  int64_t share_sum = 0;
  for (int32_t r = 0; r < n; r++) share_sum += w->nodes[w->request_node[r]].depth + 1;
  if (share_sum > AV_WL_MAX_SHARE_SUM ||
      av__reserve(&w->request_kv_tokens, &d->cap_w_kv, (size_t)n, sizeof(int64_t)) ||
      av__reserve(&w->node_req_offsets, &d->cap_w_off, (size_t)nn + 1, sizeof(int32_t)) ||
      av__reserve(&w->node_reqs, &d->cap_w_reqs, (size_t)share_sum, sizeof(int32_t)) ||
      av__reserve(&d->scratch, &d->cap_scratch, (size_t)nn, sizeof(int32_t)))
    return -1;
  for (int32_t r = 0; r < n; r++) {
    const av_node_t *last = &w->nodes[w->request_node[r]];
    w->request_kv_tokens[r] = last->path_offset_tokens + last->kv_len_tokens;
    for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) w->nodes[u].share++;
  }
  int32_t *off = w->node_req_offsets, *cur = d->scratch;
  off[0] = 0;
  for (int32_t i = 0; i < nn; i++) {
    if (w->nodes[i].share == 0) return -1;
    off[i + 1] = off[i] + w->nodes[i].share;
    cur[i] = off[i];
  }
  for (int32_t r = 0; r < n; r++)
    for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent)
      w->node_reqs[cur[u]++] = r;
  return 0;
}

/* The forest's nodes and request nodes renumbered (d->ch's maps), arrivals' leaves added. */
static int edit_forest(av__delta_t *d, av_workload_t *w) {
  const av__changes_t *c = &d->ch;
  int32_t nn = w->n_nodes, n = c->n_new;
  if (av__reserve(&w->nodes, &d->cap_w_nodes, (size_t)c->n_new_nodes, sizeof *w->nodes) ||
      av__reserve(&d->scratch, &d->cap_scratch, (size_t)n, sizeof(int32_t)))
    return -1;
  for (int32_t j = 0; j < n; j++) {
    int32_t i = c->old_of[j];
    d->scratch[j] = i >= 0 ? c->nmap[w->request_node[i]] : c->arr_leaf[arrival_at(c, j)];
  }
  for (int32_t u = 0; u < nn; u++) {
    int32_t v = c->nmap[u];
    if (v < 0) continue;
    w->nodes[v] = w->nodes[u];
    w->nodes[v].parent = w->nodes[u].parent >= 0 ? c->nmap[w->nodes[u].parent] : -1;
  }
  for (int32_t a = 0; a < c->n_arr; a++) {
    av_node_t *x = &w->nodes[c->arr_leaf[a]];
    memset(x, 0, sizeof *x);
    x->parent = c->nmap[c->arr_par[a]];
  }
  for (int32_t v = 0; v < c->n_new_nodes; v++) w->nodes[v].kv_len_tokens = c->new_len[v];
  if (av__reserve(&w->request_node, &d->cap_w_req, (size_t)n, sizeof *w->request_node))
    return -1;
  memcpy(w->request_node, d->scratch, (size_t)n * sizeof *w->request_node);
  w->n_nodes = c->n_new_nodes;
  w->n_requests = n;
  return 0;
}

/* The index's inner nodes renumbered (leaves hold no ids there) and its children recounted. */
static int edit_nodes(av__delta_t *d, const av_workload_t *w, int32_t nn_old) {
  const av__changes_t *c = &d->ch;
  int32_t nn = c->n_new_nodes, total = d->noff[nn_old];
  if (av__reserve(&d->noff, &d->cap_noff, (size_t)nn + 1, sizeof *d->noff) ||
      av__reserve(&d->nchild, &d->cap_nchild, (size_t)nn, sizeof *d->nchild))
    return -1;
  for (int32_t u = 0; u < nn_old; u++)
    if (c->nmap[u] >= 0) d->noff[c->nmap[u]] = d->noff[u];
  for (int32_t v = nn - c->n_arr; v <= nn; v++) d->noff[v] = total;
  for (int32_t v = 0; v < nn; v++) d->nchild[v] = 0;
  for (int32_t v = 0; v < nn; v++)
    if (w->nodes[v].parent >= 0) d->nchild[w->nodes[v].parent]++;
  return 0;
}

static int take_row(av__delta_t *d) {
  if (d->n_free == 0) {
    int32_t more = d->n_rows / 2 + 8;
    if (av__reserve(&d->kept, &d->cap_kept, (size_t)(d->n_rows + more) * (size_t)d->kstride,
                    sizeof *d->kept) ||
        av__reserve(&d->free_rows, &d->cap_free, (size_t)(d->n_rows + more),
                    sizeof *d->free_rows))
      return -1;
    for (int32_t k = d->n_rows + more - 1; k >= d->n_rows; k--) d->free_rows[d->n_free++] = k;
    d->n_rows += more;
  }
  return d->free_rows[--d->n_free];
}

/* The index's per-request figures and kept rows for the step's requests. */
static int edit_requests(av__delta_t *d, const int32_t *table, int64_t stride,
                         const int32_t *tokens) {
  const av__changes_t *c = &d->ch;
  int32_t n = c->n_new;
  if (av__reserve(&d->scratch, &d->cap_scratch, (size_t)n * 3, sizeof(int32_t))) return -1;
  int32_t *pb = d->scratch, *row_of = pb + n, *nb0 = row_of + n;
  for (int32_t i = 0; i < c->n_old; i++)
    if (c->new_of[i] < 0) d->free_rows[d->n_free++] = d->row_of[i];
  for (int32_t j = 0; j < n; j++) {
    int32_t i = c->old_of[j];
    if (i >= 0) {
      pb[j] = d->pb[i];
      row_of[j] = d->row_of[i];
      nb0[j] = d->nb[i];
    } else {
      int32_t s = c->arr_sib[arrival_at(c, j)], row = take_row(d);
      if (row < 0) return -1;
      pb[j] = d->pb[s];
      row_of[j] = row;
      nb0[j] = pb[j];
    }
  }
  if (av__delta_reserve_requests(d, (size_t)n)) return -1;
  for (int32_t j = 0; j < n; j++) {
    d->pb[j] = pb[j];
    d->row_of[j] = row_of[j];
    d->tok[j] = tokens[j];
    d->nb[j] = blocks_of(tokens[j], d->bs);
    const int32_t *row = table + (int64_t)j * stride;
    int32_t *kr = d->kept + (int64_t)row_of[j] * d->kstride;
    if (d->nb[j] > nb0[j])
      memcpy(kr + nb0[j], row + nb0[j], (size_t)(d->nb[j] - nb0[j]) * sizeof *kr);
  }
  return 0;
}

int av__delta_apply(av__delta_t *d, av_workload_t *w, const int32_t *table, int64_t stride,
                    const int32_t *tokens) {
  int32_t nn_old = w->n_nodes;
  if (d->ch.n_fin + d->ch.n_arr == 0) { /* leaves grew: nothing moves */
    for (int32_t i = 0; i < d->ch.n_old; i++) {
      int32_t u = w->request_node[i];
      w->nodes[u].kv_len_tokens = d->ch.new_len[u];
      w->request_kv_tokens[i] = tokens[i];
    }
    return edit_requests(d, table, stride, tokens);
  }
  if (edit_forest(d, w) || edit_nodes(d, w, nn_old) || derive(d, w) ||
      edit_requests(d, table, stride, tokens))
    return -1;
  return 0;
}
