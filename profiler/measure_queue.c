/* The profiler's queue step (profiler/profile.h): what a persistent item costs after
 * another item of its CTA's queue, against what it costs at the queue's head, for one CTA
 * alone and for a full wave. The persistent kernel keeps its copies S - 1 tiles ahead across
 * item boundaries (kernels/attn_stream.cuh), so a queued item's prologue overlaps the
 * previous item's math, while C(n_q, n) is measured on one-item queues. The measurements go
 * to the .details.json file. The engine does not subtract either saving from queued items
 * (that made the predictions worse, docs/validation.md#alternatives-measured); the full
 * wave's first items give the start cost of profiles without the start step
 * (costmodels/profile_start.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "core/occupancy.h"
#include "executor/executor.h"
#include "profiler/profile.h"

#define SRC "profile"

/* Item lengths: one tile of the smallest n, a few tiles, many tiles. */
static const int64_t k_queue_kv[AV_PROF_QUEUE_PTS] = {32, 128, 512};

av_plan_t *av_profile_queue_plan(const av_workload_t *w, const av_tile_t *tile, int32_t ctas,
                                 av_error_t *err) {
  if (tile->kind != AV_KERNEL_PERSISTENT || ctas < 1 || w->n_nodes % ctas != 0) {
    av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                 "a queue plan needs a persistent tile and roots that divide evenly over its "
                 "CTAs; got %s, %d roots, %d CTAs", av_kernel_kind_name(tile->kind),
                 (int)w->n_nodes, (int)ctas);
    return NULL;
  }
  const int32_t per = w->n_nodes / ctas;
  av_plan_t *p = av_plan_create(w, "profile-queue");
  int32_t *q = malloc(sizeof(int32_t) * (size_t)(w->n_requests > 0 ? w->n_requests : 1));
  int32_t launch = p ? av_plan_add_launch(p, 0, tile, ctas) : -1;
  int ok = q && launch >= 0;
  for (int32_t r = 0; ok && r < w->n_nodes; r++) {
    int32_t nq = 0;
    for (int32_t k = w->node_req_offsets[r]; k < w->node_req_offsets[r + 1]; k++)
      q[nq++] = w->node_reqs[k];
    av_segment_t s = {.node = r, .begin = 0, .end = w->nodes[r].kv_len_tokens};
    ok = av_plan_add_item(p, launch, (av_item_work_t){q, nq, &s, 1}, AV_OUT_PARTIAL, r / per,
                          r % per) >= 0;
  }
  free(q);
  return av__profile_finish_plan(p, ok, w, err);
}

int av_profile_queue_times(const json_t *trace, int32_t n_items, int32_t per_queue,
                           double *first_us, double *next_us, av_error_t *err) {
  if (per_queue < 2 || n_items < per_queue)
    return av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                        "queues of %d items (%d in all) have no next item", (int)per_queue,
                        (int)n_items);
  double *dur = malloc(sizeof(double) * (size_t)n_items);
  if (!dur) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int32_t i = 0; i < n_items; i++) dur[i] = NAN;
  const json_t *ctas = json_object_get(trace, "ctas");
  for (size_t i = 0; i < json_array_size(ctas); i++) {
    const json_t *c = json_array_get(ctas, i);
    json_int_t item = json_integer_value(json_object_get(c, "item"));
    if (json_integer_value(json_object_get(c, "head")) != 0 || item < 0 || item >= n_items)
      continue;
    dur[item] = json_number_value(json_object_get(c, "end_us")) -
                json_number_value(json_object_get(c, "start_us"));
  }
  int rc = AV_OK;
  double first = 0, next = 0;
  int32_t n_first = 0;
  for (int32_t i = 0; i < n_items && !rc; i++) {
    if (!(dur[i] > 0) || !isfinite(dur[i]))
      rc = av_error_set(err, AV_ERR_RANGE, SRC, NULL,
                        "queue item %d has no positive traced duration", (int)i);
    else if (i % per_queue == 0)
      first += dur[i], n_first++;
    else
      next += dur[i];
  }
  if (!rc) {
    *first_us = first / n_first;
    *next_us = next / (n_items - n_first);
  }
  free(dur);
  return rc;
}

/* The mean first and next item times of `ctas` queues of AV_PROF_QUEUE_ITEMS items of kv
 * tokens over `runs` traced runs, L2 flushed before each. */
static int queue_point(const av_gpu_t *g, const av_tile_t *tile, int32_t ctas, int64_t kv,
                       int runs, double *first_us, double *next_us, av_error_t *err) {
  const int32_t n = ctas * AV_PROF_QUEUE_ITEMS;
  int64_t *len = malloc(sizeof(int64_t) * (size_t)n);
  if (!len) return av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  for (int32_t k = 0; k < n; k++) len[k] = kv;
  av_workload_t *w = av_profile_workload(1, len, n, 128, AV_DTYPE_FP16, err);
  free(len);
  av_exec_batch_t *b = w ? av_exec_batch_create(w, 17, 1, err) : NULL;
  av_plan_t *p = b ? av_profile_queue_plan(w, tile, ctas, err) : NULL;
  int rc = p ? AV_OK : (err && err->code ? err->code : AV_ERR_INTERNAL);
  double f = 0, x = 0;
  for (int r = 0; r < runs && !rc; r++) {
    av_exec_opts_t o;
    av__profile_traced_opts(&o);
    av_exec_result_t res;
    double fr = 0, xr = 0;
    rc = av__profile_flush_l2(g, err);
    if (!rc) rc = av_exec_batch_run(b, p, &o, &res, err);
    if (rc) break;
    rc = av_profile_queue_times(res.trace, p->n_items, AV_PROF_QUEUE_ITEMS, &fr, &xr, err);
    av_exec_result_free(&res);
    f += fr;
    x += xr;
  }
  if (!rc) {
    *first_us = f / runs;
    *next_us = x / runs;
  }
  av_plan_destroy(p);
  av_exec_batch_destroy(b);
  av_workload_destroy(w);
  return rc;
}

int av_profile_measure_queue(const av_gpu_t *g, const av_variants_t *vs,
                             const av_profile_opts_t *o, av_profile_t *out, av_error_t *err) {
  av_tile_t tiles[AV_PROF_MAX_QUEUE];
  int n = av_variants_tiles(vs, AV_KERNEL_PERSISTENT, 128, AV_DTYPE_FP16, g->sm_arch, tiles,
                            AV_PROF_MAX_QUEUE);
  const int runs = o->runs > 0 ? o->runs : 1;
  int rc = AV_OK;
  out->n_queue = 0;
  for (int i = 0; i < n && !rc; i++) {
    const av_variant_t *v = av_variants_find(vs, &tiles[i], 128, AV_DTYPE_FP16, g->sm_arch);
    av_occupancy_t occ;
    av_occupancy(g, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
    av_profile_queue_t *c = &out->queue[out->n_queue];
    memset(c, 0, sizeof *c);
    c->tile = tiles[i];
    c->head_dim = 128;
    c->dtype = AV_DTYPE_FP16;
    c->loaded_ctas = g->sm_count * (occ.ctas_per_sm > 0 ? occ.ctas_per_sm : 1);
    for (int k = 0; k < AV_PROF_QUEUE_PTS && !rc; k++) {
      c->kv[k] = k_queue_kv[k];
      rc = queue_point(g, &tiles[i], 1, c->kv[k], runs, &c->first_us[k], &c->next_us[k], err);
      if (!rc)
        rc = queue_point(g, &tiles[i], c->loaded_ctas, c->kv[k], runs, &c->loaded_first_us[k],
                         &c->loaded_next_us[k], err);
      if (!rc) c->n = k + 1;
      if (!rc && o->verbose)
        fprintf(stderr, "profile: queue persistent m=%d n=%d, %lld tokens: alone first %.2f "
                "next %.2f us; %d CTAs first %.2f next %.2f us\n", c->tile.m_rows,
                c->tile.n_tokens, (long long)c->kv[k], c->first_us[k], c->next_us[k],
                c->loaded_ctas, c->loaded_first_us[k], c->loaded_next_us[k]);
    }
    if (!rc) out->n_queue++;
  }
  return rc;
}
