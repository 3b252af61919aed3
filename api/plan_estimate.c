/* The drift rule's cheap estimate of a plan's time (plan_patch.h): per item a line in its KV
 * tokens fitted to the cost model, carried through patches so that a step pays cost-model
 * calls only for the items whose queries it changed; per CTA (an item, or a persistent CTA's
 * queue) the sum of its items, and per plan the larger of the longest CTA and the sum over
 * the GPU's SMs. */
#include <stdlib.h>

#include "api/plan_patch.h"

void av__est_free(av__est_t *e) {
  free(e->a);
  free(e->b);
  free(e->a2);
  free(e->b2);
  free(e->unit);
}

int64_t av__item_tokens(const av_plan_t *p, const av_item_t *it) {
  int64_t t = 0;
  for (int32_t k = 0; k < it->n_seg; k++)
    t += p->segments[it->seg_begin + k].end - p->segments[it->seg_begin + k].begin;
  return t;
}

/* Grows a pair of per-item arrays to n (one capacity for both). */
static int reserve_pair(double **a, double **b, size_t *cap, size_t n) {
  size_t ca = *cap, cb = *cap;
  if (av__reserve(a, &ca, n, sizeof **a) || av__reserve(b, &cb, n, sizeof **b)) return -1;
  *cap = ca < cb ? ca : cb;
  return 0;
}

/* Item i's line: the cost model at its KV tokens and 1,024 tokens further. */
static void fit_item(double *a, double *b, const av_plan_t *p, int32_t i,
                     const av_costmodel_t *cost) {
  const av_item_t *it = &p->items[i];
  av_cost_query_t q = {.n_q = it->n_q, .rows = it->n_q * av_heads_group(&p->heads),
                       .kv_tokens = av__item_tokens(p, it),
                       .tile = p->launches[it->launch].tile, .output = it->output};
  av_item_cost_t c0, c1;
  av_costmodel_estimate(cost, &q, &c0);
  q.kv_tokens += 1024;
  av_costmodel_estimate(cost, &q, &c1);
  b[i] = (c1.time_us - c0.time_us) / 1024.0;
  a[i] = c0.time_us - b[i] * (double)(q.kv_tokens - 1024);
}

int av__est_fit(av__est_t *e, const av_plan_t *p, const av_costmodel_t *cost) {
  if (reserve_pair(&e->a, &e->b, &e->cap_items, (size_t)p->n_items)) return -1;
  for (int32_t i = 0; i < p->n_items; i++) fit_item(e->a, e->b, p, i, cost);
  return 0;
}

int av__est_carry(av__est_t *e, const av_plan_t *p, const int32_t *src,
                  const av_costmodel_t *cost) {
  if (reserve_pair(&e->a2, &e->b2, &e->cap_items2, (size_t)p->n_items)) return -1;
  for (int32_t k = 0; k < p->n_items; k++) {
    if (src[k] < 0) {
      fit_item(e->a2, e->b2, p, k, cost);
      continue;
    }
    e->a2[k] = e->a[src[k]];
    e->b2[k] = e->b[src[k]];
  }
  double *t = e->a;
  e->a = e->a2;
  e->a2 = t;
  t = e->b;
  e->b = e->b2;
  e->b2 = t;
  size_t c = e->cap_items;
  e->cap_items = e->cap_items2;
  e->cap_items2 = c;
  return 0;
}

int av__est_time(av__est_t *e, const av_plan_t *p, int sm_count, double *time_us,
                 double *tokens_read) {
  size_t n_units = 0;
  for (int32_t l = 0; l < p->n_launches; l++) n_units += (size_t)p->launches[l].persistent_ctas;
  if (av__reserve(&e->unit, &e->cap_unit, n_units + (size_t)p->n_launches, sizeof *e->unit))
    return -1;
  double *base = e->unit + n_units, sum = 0, top = 0, read = 0;
  size_t at = 0;
  for (int32_t l = 0; l < p->n_launches; l++) {
    base[l] = (double)at;
    at += (size_t)p->launches[l].persistent_ctas;
  }
  for (size_t k = 0; k < n_units; k++) e->unit[k] = 0;
  for (int32_t i = 0; i < p->n_items; i++) {
    const av_item_t *it = &p->items[i];
    double kv = (double)av__item_tokens(p, it), t = e->a[i] + e->b[i] * kv;
    read += kv;
    sum += t;
    if (p->launches[it->launch].persistent_ctas > 0) {
      double *u = &e->unit[(size_t)base[it->launch] + (size_t)it->cta];
      *u += t;
      t = *u;
    }
    top = t > top ? t : top;
  }
  double spread = sum / (sm_count > 0 ? sm_count : 1);
  *time_us = e->time_us = top > spread ? top : spread;
  if (tokens_read) *tokens_read = read;
  return 0;
}
