/* The CPU reference executor: runs a plan in fp64 exactly as the GPU would (partial attention
 * per item with an online softmax, then the log-sum-exp merge of partial states in the plan's
 * fixed order) and compares each request's output with direct two-pass softmax attention
 * over its whole KV path. Q, K and V are counter-based hashes of their coordinates, so no
 * tensor is ever stored and any subset of requests can be checked on its own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proofs/proofs.h"

enum { TAG_Q = 1, TAG_K = 2, TAG_V = 3 };

/* splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer. */
static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

#define GOLDEN 0x9e3779b97f4a7c15ULL

/* Key of one row: (seed, tensor, entity, position, head). */
static inline uint64_t row_key(uint64_t seed, uint64_t tag, uint64_t a, uint64_t b,
                               uint64_t c) {
  uint64_t z = mix64(seed + tag * GOLDEN);
  z = mix64(z + a * GOLDEN);
  z = mix64(z + b * GOLDEN);
  return mix64(z + c * GOLDEN);
}

/* Element `dim` of a row: uniform in [-1, 1). */
static void fill_row(uint64_t key, int d, double *out) {
  for (int j = 0; j < d; j++) {
    uint64_t x = mix64(key + (uint64_t)(j + 1) * GOLDEN);
    out[j] = (double)(x >> 11) * 0x1.0p-52 - 1.0;
  }
}

typedef struct ref {
  const av_plan_t *p;
  const av_workload_t *w;
  uint64_t seed;
  int d, g;
  double scale;
  int32_t *sel;          /* request -> index among checked requests, or -1 */
  int32_t n_sel;
  double *q;             /* n_sel x g x d */
  double *out;           /* n_sel x g x d: the plan's outputs */
  int32_t *slot_idx;     /* slot -> index of its stored state, or -1 (request unchecked) */
  double *slot_o;        /* stored partial states: x g x d */
  double *slot_lse;      /*   and x g */
  /* scratch for one item: rows = selected queries x g */
  double *qrows, *m, *l, *acc, *k, *v;
  int32_t *rowq;         /* selected query positions within the item */
} ref_t;

/* Online softmax (FlashAttention's running max and sum) of `rows` query rows over the
 * segments' tokens; leaves normalised O in acc and the log-sum-exp in m. */
static void attend(ref_t *R, const av_segment_t *segs, int32_t n_seg, int32_t rows) {
  int d = R->d;
  for (int32_t r = 0; r < rows; r++) {
    R->m[r] = -INFINITY;
    R->l[r] = 0.0;
    memset(R->acc + (size_t)r * d, 0, (size_t)d * sizeof(double));
  }
  for (int32_t s = 0; s < n_seg; s++)
    for (int64_t t = segs[s].begin; t < segs[s].end; t++) {
      fill_row(row_key(R->seed, TAG_K, (uint64_t)segs[s].node, (uint64_t)t, 0), d, R->k);
      fill_row(row_key(R->seed, TAG_V, (uint64_t)segs[s].node, (uint64_t)t, 0), d, R->v);
      for (int32_t r = 0; r < rows; r++) {
        const double *q = R->qrows + (size_t)r * d;
        double *acc = R->acc + (size_t)r * d;
        double x = 0.0;
        for (int j = 0; j < d; j++) x += q[j] * R->k[j];
        x *= R->scale;
        double e = 1.0;  /* exp(x - m) once x is the new max */
        if (x > R->m[r]) {
          double c = exp(R->m[r] - x);
          R->l[r] *= c;
          for (int j = 0; j < d; j++) acc[j] *= c;
          R->m[r] = x;
        } else {
          e = exp(x - R->m[r]);
        }
        R->l[r] += e;
        for (int j = 0; j < d; j++) acc[j] += e * R->v[j];
      }
    }
  for (int32_t r = 0; r < rows; r++) {
    for (int j = 0; j < d; j++) R->acc[(size_t)r * d + j] /= R->l[r];
    R->m[r] += log(R->l[r]);
  }
}

/* One item: gathers its checked queries' rows, attends, and stores outputs or states. */
static void run_item(ref_t *R, const av_item_t *it) {
  const av_plan_t *p = R->p;
  int d = R->d, g = R->g;
  int32_t nq = 0;
  for (int32_t k = 0; k < it->n_q; k++) {
    int32_t req = p->item_queries[it->q_begin + k];
    if (R->sel[req] < 0) continue;
    memcpy(R->qrows + (size_t)nq * g * d, R->q + (size_t)R->sel[req] * g * d,
           (size_t)g * d * sizeof(double));
    R->rowq[nq++] = k;
  }
  if (nq == 0) return;
  attend(R, p->segments + it->seg_begin, it->n_seg, nq * g);
  for (int32_t i = 0; i < nq; i++) {
    int32_t k = R->rowq[i], req = p->item_queries[it->q_begin + k];
    const double *o = R->acc + (size_t)i * g * d;
    if (it->output == AV_OUT_FINAL) {
      memcpy(R->out + (size_t)R->sel[req] * g * d, o, (size_t)g * d * sizeof(double));
    } else {
      int32_t si = R->slot_idx[it->slot_begin + k];
      memcpy(R->slot_o + (size_t)si * g * d, o, (size_t)g * d * sizeof(double));
      memcpy(R->slot_lse + (size_t)si * g, R->m + (size_t)i * g, (size_t)g * sizeof(double));
    }
  }
}

/* Log-sum-exp composition of partial states (FlashInfer §2.2 "attention states", PAT §4):
 * (O_a, s_a) + (O_b, s_b) = ((e^{s_a} O_a + e^{s_b} O_b) / e^s, s = log(e^{s_a} + e^{s_b})),
 * applied left to right in the merge list's order. */
static void merge_request(ref_t *R, int32_t req) {
  const av_plan_t *p = R->p;
  int d = R->d, g = R->g;
  double *o = R->out + (size_t)R->sel[req] * g * d;
  for (int h = 0; h < g; h++) {
    double lse = -INFINITY;
    double *oh = o + (size_t)h * d;
    memset(oh, 0, (size_t)d * sizeof(double));
    for (int32_t k = p->merge_offsets[req]; k < p->merge_offsets[req + 1]; k++) {
      int32_t si = R->slot_idx[p->merge_slots[k]];
      double sb = R->slot_lse[(size_t)si * g + h];
      const double *ob = R->slot_o + ((size_t)si * g + h) * d;
      double mx = lse > sb ? lse : sb;
      double s = mx + log(exp(lse - mx) + exp(sb - mx));
      double wa = exp(lse - s), wb = exp(sb - s);
      for (int j = 0; j < d; j++) oh[j] = wa * oh[j] + wb * ob[j];
      lse = s;
    }
  }
}

/* Direct attention for one request: all scores of its path, their max, then the weighted
 * sum (two passes, no running rescale: independent of the executor's arithmetic). Returns
 * the worst relative error over its g heads against the plan's output. */
static int direct_request(ref_t *R, int32_t req, double *rel_out) {
  const av_workload_t *w = R->w;
  int d = R->d, g = R->g;
  int64_t len = w->request_kv_tokens[req];
  double *sc = malloc((size_t)len * g * sizeof *sc);
  double *o = calloc((size_t)g * d, sizeof *o);
  double *mx = malloc((size_t)g * sizeof *mx), *sum = calloc((size_t)g, sizeof *sum);
  if (!sc || !o || !mx || !sum) {
    free(sc);
    free(o);
    free(mx);
    free(sum);
    return AV_ERR_NOMEM;
  }
  const double *q = R->q + (size_t)R->sel[req] * g * d;
  for (int h = 0; h < g; h++) mx[h] = -INFINITY;
  for (int pass = 0; pass < 2; pass++) {
    int64_t t_all = len;
    for (int32_t u = w->request_node[req]; u >= 0; u = w->nodes[u].parent) {
      t_all -= w->nodes[u].kv_len_tokens;
      for (int64_t t = 0; t < w->nodes[u].kv_len_tokens; t++) {
        double *srow = sc + (size_t)(t_all + t) * g;
        if (pass == 0) {
          fill_row(row_key(R->seed, TAG_K, (uint64_t)u, (uint64_t)t, 0), d, R->k);
          for (int h = 0; h < g; h++) {
            double x = 0.0;
            for (int j = 0; j < d; j++) x += q[(size_t)h * d + j] * R->k[j];
            srow[h] = x * R->scale;
            if (srow[h] > mx[h]) mx[h] = srow[h];
          }
        } else {
          fill_row(row_key(R->seed, TAG_V, (uint64_t)u, (uint64_t)t, 0), d, R->v);
          for (int h = 0; h < g; h++) {
            double e = exp(srow[h] - mx[h]);
            sum[h] += e;
            for (int j = 0; j < d; j++) o[(size_t)h * d + j] += e * R->v[j];
          }
        }
      }
    }
  }
  const double *a = R->out + (size_t)R->sel[req] * g * d;
  double worst = 0.0;
  for (int h = 0; h < g; h++) {
    double diff = 0.0, mag = 0.0;
    for (int j = 0; j < d; j++) {
      double b = o[(size_t)h * d + j] / sum[h];
      diff = fmax(diff, fabs(a[(size_t)h * d + j] - b));
      mag = fmax(mag, fabs(b));
    }
    double rel = diff / fmax(mag, 1e-30);
    if (!(rel <= worst)) worst = rel;  /* NaN propagates as the worst */
  }
  *rel_out = worst;
  free(sc);
  free(o);
  free(mx);
  free(sum);
  return AV_OK;
}

static void ref_free(ref_t *R) {
  free(R->sel);
  free(R->q);
  free(R->out);
  free(R->slot_idx);
  free(R->slot_o);
  free(R->slot_lse);
  free(R->qrows);
  free(R->m);
  free(R->l);
  free(R->acc);
  free(R->k);
  free(R->v);
  free(R->rowq);
}

/* Chooses the checked requests (all, or `max` spread evenly) and allocates every buffer. */
static int ref_setup(ref_t *R, int32_t max) {
  const av_plan_t *p = R->p;
  int32_t nr = R->w->n_requests;
  size_t d = (size_t)R->d, g = (size_t)R->g;
  R->sel = malloc(((size_t)nr + 1) * sizeof *R->sel);
  R->slot_idx = malloc(((size_t)p->n_slots + 1) * sizeof *R->slot_idx);
  if (!R->sel || !R->slot_idx) return AV_ERR_NOMEM;
  int32_t want = (max > 0 && max < nr) ? max : nr;
  for (int32_t r = 0; r < nr; r++) R->sel[r] = -1;
  for (int32_t i = 0; i < want; i++) R->sel[(int32_t)((int64_t)i * nr / want)] = i;
  R->n_sel = want;
  int32_t n_states = 0, max_q = 1;
  for (int32_t s = 0; s < p->n_slots; s++)
    R->slot_idx[s] = R->sel[p->slot_request[s]] >= 0 ? n_states++ : -1;
  for (int32_t i = 0; i < p->n_items; i++)
    if (p->items[i].n_q > max_q) max_q = p->items[i].n_q;
  size_t rows = (size_t)max_q * g;
  R->q = malloc(((size_t)want * g * d + 1) * sizeof(double));
  R->out = malloc(((size_t)want * g * d + 1) * sizeof(double));
  R->slot_o = malloc(((size_t)n_states * g * d + 1) * sizeof(double));
  R->slot_lse = malloc(((size_t)n_states * g + 1) * sizeof(double));
  R->qrows = malloc(rows * d * sizeof(double));
  R->acc = malloc(rows * d * sizeof(double));
  R->m = malloc(rows * sizeof(double));
  R->l = malloc(rows * sizeof(double));
  R->k = malloc(d * sizeof(double));
  R->v = malloc(d * sizeof(double));
  R->rowq = malloc((size_t)max_q * sizeof *R->rowq);
  if (!R->q || !R->out || !R->slot_o || !R->slot_lse || !R->qrows || !R->acc || !R->m ||
      !R->l || !R->k || !R->v || !R->rowq)
    return AV_ERR_NOMEM;
  /* Query heads h of the group share KV head 0: Q is keyed by (request, h). */
  for (int32_t r = 0; r < nr; r++)
    if (R->sel[r] >= 0)
      for (size_t h = 0; h < g; h++)
        fill_row(row_key(R->seed, TAG_Q, (uint64_t)r, 0, h), R->d,
                 R->q + ((size_t)R->sel[r] * g + h) * d);
  return AV_OK;
}

int av_reference_run(const av_plan_t *p, const av_workload_t *w,
                     const av_reference_opts_t *opts, av_reference_result_t *out,
                     av_error_t *err) {
  av_reference_opts_t o = {0};
  if (opts) o = *opts;
  memset(out, 0, sizeof *out);
  out->worst_request = -1;
  if (o.dim < 0 || o.dim > 1024)
    return av_error_set(err, AV_ERR_RANGE, NULL, NULL,
                        "reference head dim %d is out of range; expected 0 (the workload's) "
                        "to 1024",
                        o.dim);
  if (o.max_requests < 0)
    return av_error_set(err, AV_ERR_RANGE, NULL, NULL,
                        "reference max_requests %d is negative; expected 0 (all) or more",
                        o.max_requests);
  /* The executor indexes by the plan's numbers: only a plan proven exact is run. */
  int rc = av_plan_check(p, w, err);
  if (rc) return rc;
  ref_t R = {.p = p, .w = w, .seed = o.seed};
  R.d = o.dim ? o.dim : w->heads.head_dim;
  R.g = av_heads_group(&w->heads);
  R.scale = 1.0 / sqrt((double)R.d);
  rc = ref_setup(&R, o.max_requests);
  for (int32_t i = 0; !rc && i < p->n_items; i++) run_item(&R, &p->items[i]);
  for (int32_t r = 0; !rc && r < w->n_requests; r++) {
    if (R.sel[r] < 0) continue;
    if (p->merge_offsets[r + 1] > p->merge_offsets[r]) merge_request(&R, r);
    double rel;
    rc = direct_request(&R, r, &rel);
    if (rc) break;
    out->checked += R.g;
    if (out->worst_request < 0 || isnan(rel) ||
        (!isnan(out->max_rel_err) && rel > out->max_rel_err)) {
      out->max_rel_err = rel;
      out->worst_request = r;
    }
  }
  ref_free(&R);
  if (rc == AV_ERR_NOMEM)
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory in the CPU reference");
  return rc;
}
