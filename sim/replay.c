/* Trace-driven replay (format in sim/replay.h): loads measured per-CTA records, checks them
 * against the plan, and runs the engine with the measured durations fixed so only the
 * dispatch model (overheads, streams, occupancy, placement) decides the replayed makespan. */
#include "sim/replay.h"

#include <stdlib.h>
#include <string.h>

#include "sim/engine_internal.h"
#include "core/json_util.h"

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void av_replay_trace_free(av_replay_trace_t *t) {
  if (!t) return;
  free(t->ctas);
  free(t->durations_us);
  free(t->merge_us);
  memset(t, 0, sizeof *t);
}

void av_replay_result_free(av_replay_result_t *r) {
  if (!r) return;
  av_sim_result_free(&r->sim);
  memset(r, 0, sizeof *r);
}

/* One record ctas[i]; fills ev. */
static int load_record(const av_jctx_t *c, const json_t *rec, const char *path,
                       const av_plan_t *p, av_cta_event_t *ev) {
  static const char *const keys[] = {"item", "head", "sm", "start_us", "end_us", NULL};
  int64_t item, head, sm;
  double start, end;
  int rc = av_json_expect_object(c, rec, path);
  if (!rc) rc = av_json_check_keys(c, rec, path, keys);
  if (!rc)
    rc = av_json_get_int(c, rec, (av_json_field_t){path, "item", 1}, 0, -1, INT32_MAX, &item);
  if (!rc && item >= p->n_items) {
    char where[300];
    av_jpath_key(where, sizeof where, path, "item");
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "item %lld is not in the plan, which has %d items (0..%d; -1 marks "
                        "a merge CTA)",
                        (long long)item, p->n_items, p->n_items - 1);
  }
  if (!rc)
    rc = av_json_get_int(c, rec, (av_json_field_t){path, "head", 1}, 0, 0, p->heads.hkv - 1, &head);
  if (!rc) rc = av_json_get_int(c, rec, (av_json_field_t){path, "sm", 1}, 0, 0, 1 << 20, &sm);
  if (!rc)
    rc = av_json_get_double(c, rec, (av_json_field_t){path, "start_us", 1}, 0, 0, 1e15, &start);
  if (!rc) rc = av_json_get_double(c, rec, (av_json_field_t){path, "end_us", 1}, 0, 0, 1e15, &end);
  if (rc) return rc;
  if (end < start) {
    char where[300];
    av_jpath_key(where, sizeof where, path, "end_us");
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "end_us %g is before start_us %g: a CTA cannot end before it starts",
                        end, start);
  }
  ev->item = (int32_t)item;
  ev->launch = item >= 0 ? p->items[item].launch : p->n_launches;
  ev->head = (int32_t)head;
  ev->sm = (int32_t)sm;
  ev->start_us = start;
  ev->end_us = end;
  return AV_OK;
}

/* Every (item, head) recorded exactly once; durations filled; merge median computed. */
static int collect(const av_jctx_t *c, const av_plan_t *p, av_replay_trace_t *t,
                   int32_t *first_rec) {
  const int32_t hkv = p->heads.hkv;
  int64_t cells = (int64_t)p->n_items * hkv;
  for (int64_t k = 0; k < cells; k++) first_rec[k] = -1;
  double *merge = malloc(sizeof *merge * (size_t)(t->n > 0 ? t->n : 1));
  if (!merge) return av_error_set(c->err, AV_ERR_NOMEM, c->source, NULL, "out of memory");
  int32_t nm = 0;
  for (int32_t i = 0; i < t->n; i++) {
    const av_cta_event_t *ev = &t->ctas[i];
    double d = ev->end_us - ev->start_us;
    if (ev->item < 0) {
      merge[nm++] = d;
      continue;
    }
    int64_t k = (int64_t)ev->item * hkv + ev->head;
    if (first_rec[k] >= 0) {
      char where[64];
      snprintf(where, sizeof where, "ctas[%d]", i);
      free(merge);
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                          "item %d head %d is recorded twice (first at ctas[%d]); each CTA "
                          "must appear once",
                          ev->item, ev->head, first_rec[k]);
    }
    first_rec[k] = i;
    t->durations_us[k] = d;
  }
  for (int64_t k = 0; k < cells; k++)
    if (first_rec[k] < 0) {
      free(merge);
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "ctas",
                          "no record for item %lld head %lld: every plan item must be "
                          "recorded for every KV head (%d items x %d heads)",
                          (long long)(k / hkv), (long long)(k % hkv), p->n_items, hkv);
    }
  t->merge_records = nm;
  t->merge_us = malloc(sizeof *t->merge_us * (size_t)(nm > 0 ? nm : 1));
  if (!t->merge_us) {
    free(merge);
    return av_error_set(c->err, AV_ERR_NOMEM, c->source, NULL, "out of memory");
  }
  memcpy(t->merge_us, merge, sizeof *merge * (size_t)nm);
  if (nm > 0) {
    qsort(merge, (size_t)nm, sizeof *merge, dbl_cmp);
    t->merge_median_us = nm % 2 ? merge[nm / 2] : 0.5 * (merge[nm / 2 - 1] + merge[nm / 2]);
  }
  free(merge);
  return AV_OK;
}

static int load_root(const av_jctx_t *c, const json_t *root, const av_plan_t *p,
                     av_replay_trace_t *t) {
  static const char *const keys[] = {"gpu", "makespan_us", "ctas", NULL};
  const char *gpu;
  int rc = av_json_expect_object(c, root, "");
  if (!rc) rc = av_json_check_keys(c, root, "", keys);
  if (!rc) rc = av_json_get_string(c, root, "", "gpu", 1, NULL, &gpu);
  if (!rc)
    rc = av_json_get_double(c, root, (av_json_field_t){"", "makespan_us", 1}, 0, 0, 1e15,
                            &t->makespan_us);
  if (rc) return rc;
  snprintf(t->gpu, sizeof t->gpu, "%s", gpu);
  const json_t *ctas = json_object_get(root, "ctas");
  if (!ctas) return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "ctas", "missing key");
  if ((rc = av_json_expect_array(c, ctas, "ctas"))) return rc;
  size_t n = json_array_size(ctas);
  if (n > INT32_MAX)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, "ctas", "too many records");
  t->n = (int32_t)n;
  int64_t cells = (int64_t)p->n_items * p->heads.hkv;
  t->ctas = malloc(sizeof *t->ctas * (n ? n : 1));
  t->durations_us = malloc(sizeof *t->durations_us * (size_t)(cells ? cells : 1));
  int32_t *first = malloc(sizeof *first * (size_t)(cells ? cells : 1));
  if (!t->ctas || !t->durations_us || !first) {
    free(first);
    return av_error_set(c->err, AV_ERR_NOMEM, c->source, NULL, "out of memory");
  }
  for (size_t i = 0; i < n && !rc; i++) {
    char path[64];
    av_jpath_index(path, sizeof path, "ctas", i);
    rc = load_record(c, json_array_get(ctas, i), path, p, &t->ctas[i]);
  }
  if (!rc) rc = collect(c, p, t, first);
  free(first);
  return rc;
}

int av_replay_load(const char *path, const av_plan_t *p, av_replay_trace_t *out,
                   av_error_t *err) {
  memset(out, 0, sizeof *out);
  json_t *root = NULL;
  int rc = av_json_load_file(path, &root, err);
  if (rc) return rc;
  av_jctx_t c = {.source = path, .err = err};
  rc = load_root(&c, root, p, out);
  json_decref(root);
  if (rc) av_replay_trace_free(out);
  return rc;
}

/* The engine's merge CTA (j, KV head h) in place of the kernel's: kernel CTA c combines the
 * (request, query head) rows [c*rows, (c+1)*rows) of all hq heads, the engine's CTA j of head
 * h the rows [j*rows, (j+1)*rows) of that head's GQA group; each engine CTA takes the longest
 * of the kernel CTAs it shares a row with. NULL (the median is used) when the records are
 * not one per kernel CTA, or out of memory. Caller frees. */
static double *merge_cells(const av_replay_trace_t *t, const av_plan_t *p,
                           const av_variants_t *variants, const av_gpu_t *gpu) {
  const int64_t hq = p->heads.hq, hkv = p->heads.hkv, g = av_heads_group(&p->heads);
  const int64_t rows = av__engine_merge_rows_per_cta(p, variants, gpu);
  const int64_t all = (int64_t)p->n_requests * hq;
  if (rows <= 0 || t->merge_records != (all + rows - 1) / rows) return NULL;
  const int64_t per_head = ((int64_t)p->n_requests * g + rows - 1) / rows;
  double *cell = calloc((size_t)(per_head * hkv) + 1, sizeof *cell);
  if (!cell) return NULL;
  for (int64_t r = 0; r < all; r++) {
    const int64_t req = r / hq, qh = r % hq, kvh = qh / g, q = qh % g;
    const int64_t j = (req * g + q) / rows;
    double *d = &cell[j * hkv + kvh];
    if (t->merge_us[r / rows] > *d) *d = t->merge_us[r / rows];
  }
  return cell;
}

int av_replay_run(const av_replay_trace_t *t, const av_plan_t *p, const av_workload_t *w,
                  const av_gpu_t *gpu, const av_variants_t *variants, av_replay_result_t *out,
                  av_timeline_t *tl, av_error_t *err) {
  memset(out, 0, sizeof *out);
  if (strcmp(t->gpu, gpu->name) != 0)
    return av_error_set(err, AV_ERR_MISMATCH, NULL, "gpu",
                        "the trace was recorded on %s but the replay uses the %s spec; pass "
                        "--gpu %s",
                        t->gpu, gpu->name, t->gpu);
  double *merge = t->merge_records > 0 ? merge_cells(t, p, variants, gpu) : NULL;
  av__engine_in_t in = {.plan = p, .workload = w, .gpu = gpu, .variants = variants,
                        .record_timeline = tl != NULL, .durations_us = t->durations_us,
                        .merge_duration_us = t->merge_median_us, .merge_durations_us = merge};
  int rc = av__engine_run(&in, &out->sim, tl, NULL, err);
  free(merge);
  if (rc) return rc;
  out->measured_us = t->makespan_us;
  out->replayed_us = out->sim.makespan_us;
  out->rel_err = t->makespan_us > 0 ? (out->replayed_us - t->makespan_us) / t->makespan_us : 0;
  int64_t cells = (int64_t)p->n_items * p->heads.hkv;
  for (int64_t k = 0; k < cells; k++) out->measured_cta_us += t->durations_us[k];
  return AV_OK;
}
