/* The profile file's writer (profile_format/profile_format.h): the profile document and its
 * optional keys (co-residency, merge, start), the details document, and the three files
 * written together. Numbers are rounded to what the measurements resolve. */
#include "profile_format/profile_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_util.h"

#define SRC "profile"

/* Short items: one KV tile, a few tiles (the queue step's 32 and 128). */
const int64_t av_profile_start_kv[AV_PROF_START_KV] = {32, 128};

void av_profile_free(av_profile_t *p) {
  if (!p) return;
  free(p->t);
  free(p->cores);
  free(p->start);
  p->t = NULL;
  p->cores = NULL;
  p->start = NULL;
  p->n = p->cap = p->n_cores = p->n_start = 0;
}

av_profile_table_t *av_profile_add(av_profile_t *p) {
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 32;
    av_profile_table_t *t = realloc(p->t, (size_t)cap * sizeof *t);
    if (!t) return NULL;
    p->t = t;
    p->cap = cap;
  }
  av_profile_table_t *t = &p->t[p->n++];
  memset(t, 0, sizeof *t);
  t->occ_measured = -1;
  return t;
}

static json_t *table_json(const av_profile_table_t *t) {
  json_t *nq = json_array(), *kv = json_array(), *rows = json_array();
  for (int i = 0; i < t->n_nq; i++) json_array_append_new(nq, json_integer(t->nq[i]));
  for (int j = 0; j < t->n_kv; j++) json_array_append_new(kv, json_integer(t->kv[j]));
  for (int i = 0; i < t->n_nq; i++) {
    json_t *row = json_array();
    for (int j = 0; j < t->n_kv; j++)
      json_array_append_new(row, json_real(round(t->time_us[i][j] * 1e4) / 1e4));
    json_array_append_new(rows, row);
  }
  return json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o}", "kind",
                   av_kernel_kind_name(t->tile.kind), "m", t->tile.m_rows, "n",
                   t->tile.n_tokens, "warps", t->tile.warps, "head_dim", t->head_dim, "dtype",
                   av_dtype_name(t->dtype), "n_q", nq, "n_kv", kv, "time_us", rows);
}

static json_t *reals(const double *v, int n, double scale) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, json_real(round(v[i] * scale) / scale));
  return a;
}

/* The queue curves (profiler/measure_queue.c). */
static json_t *queue_json(const av_profile_t *p) {
  json_t *vs = json_array();
  for (int i = 0; i < p->n_queue; i++) {
    const av_profile_queue_t *c = &p->queue[i];
    json_t *kv = json_array();
    for (int k = 0; k < c->n; k++) json_array_append_new(kv, json_integer(c->kv[k]));
    json_array_append_new(
        vs, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o, s:i, s:o, s:o}", "kind",
                      av_kernel_kind_name(c->tile.kind), "m", c->tile.m_rows, "n",
                      c->tile.n_tokens, "warps", c->tile.warps, "head_dim", c->head_dim,
                      "dtype", av_dtype_name(c->dtype), "n_kv", kv, "first_us",
                      reals(c->first_us, c->n, 1e4), "next_us", reals(c->next_us, c->n, 1e4),
                      "loaded_ctas", c->loaded_ctas, "loaded_first_us",
                      reals(c->loaded_first_us, c->n, 1e4), "loaded_next_us",
                      reals(c->loaded_next_us, c->n, 1e4)));
  }
  return json_pack("{s:i, s:s, s:o}", "items", AV_PROF_QUEUE_ITEMS, "notes",
                   "persistent CTAs, each a queue of one-query items over their own roots, L2 "
                   "flushed; first_us: a queue's first item from its CTA's start, next_us: the "
                   "mean of the others, each from the previous item's end; one CTA alone, and "
                   "loaded_*: a full wave of loaded_ctas CTAs",
                   "variants", vs);
}

/* The optional "coresidency" key (profile_read_curves.c reads it). */
static json_t *cores_json(const av_profile_t *p) {
  json_t *vs = json_array();
  for (int i = 0; i < p->n_cores; i++) {
    const av_profile_cores_t *c = &p->cores[i];
    json_t *k = json_array();
    for (int j = 0; j < c->n_k; j++) json_array_append_new(k, json_integer(j + 1));
    json_array_append_new(
        vs, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "kind",
                      av_kernel_kind_name(c->tile.kind), "m", c->tile.m_rows, "n",
                      c->tile.n_tokens, "warps", c->tile.warps, "head_dim", c->head_dim,
                      "dtype", av_dtype_name(c->dtype), "k", k, "slowdown",
                      reals(c->slowdown, c->n_k, 1e4), "duration_us",
                      reals(c->dur_us, c->n_k, 1e4), "hbm_duration_us",
                      reals(c->hbm_dur_us, c->n_k, 1e4), "hbm_GBps",
                      reals(c->hbm_GBps, c->n_k, 10)));
  }
  char notes[400];
  snprintf(notes, sizeof notes,
           "k x SMs identical one-query CTAs of %d tokens in one launch (k per SM), L2 "
           "flushed; slowdown = (duration - cta_fixed_us) / (lone duration - cta_fixed_us) "
           "with all CTAs reading one shared KV (L2-resident); hbm_*: each CTA its own KV",
           AV_PROF_CORES_KV);
  return json_pack("{s:i, s:s, s:o}", "kv_tokens", AV_PROF_CORES_KV, "notes", notes,
                   "variants", vs);
}

json_t *av_profile_to_json(const av_profile_t *p) {
  json_t *vs = json_array();
  for (int i = 0; i < p->n; i++) json_array_append_new(vs, table_json(&p->t[i]));
  char notes[512];
  snprintf(notes, sizeof notes,
           "measured on %s: single-CTA times (one CTA alone on the GPU, L2 flushed, mean "
           "of traced runs, %%globaltimer) with GQA group 1 (rows = queries); copy %.0f GB/s, "
           "launch %.2f us, lone CTA %.1f GB/s + %.2f us; see the .details.json file",
           p->device, p->copy_GBps, p->launch_us, p->lone_GBps, p->cta_fixed_us);
  json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "gpu", p->gpu, "command", p->command,
                          "notes", notes, "variants", vs);
  if (doc && p->n_cores > 0) json_object_set_new(doc, "coresidency", cores_json(p));
  if (doc && (p->n_merge > 0 || p->empty_cta_us > 0))
    json_object_set_new(doc, "merge", av_profile_merge_json(p));
  if (doc && p->n_start > 0) json_object_set_new(doc, "start", av_profile_start_json(p));
  return doc;
}

static json_t *graph_details(const av_profile_t *p) {
  return json_pack("{s:f, s:f, s:f}", "launch_gap_us", p->graph_gap_us, "join_overhead_us",
                   p->graph_join_us, "run_tail_us", p->graph_tail_us);
}

/* The raw launch-model figures p holds into the details document d (0 on success). */
static int launch_details(json_t *d, const av_profile_t *p) {
  int bad = 0;
  if (p->graph_tail_us > 0) bad |= json_object_set_new(d, "graph", graph_details(p));
  if (p->pdl_join_us > 0)
    bad |= json_object_set_new(d, "pdl", json_pack("{s:f}", "join_overhead_us", p->pdl_join_us));
  return bad;
}

json_t *av_profile_details_json(const av_profile_t *p) {
  json_t *occ = json_array();
  for (int i = 0; i < p->n; i++) {
    const av_profile_table_t *t = &p->t[i];
    json_array_append_new(
        occ, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:i, s:i}", "kind",
                       av_kernel_kind_name(t->tile.kind), "m", t->tile.m_rows, "n",
                       t->tile.n_tokens, "warps", t->tile.warps, "head_dim", t->head_dim,
                       "dtype", av_dtype_name(t->dtype), "predicted", t->occ_predicted,
                       "measured", t->occ_measured));
  }
  json_t *res = json_array();
  for (int i = 0; i < p->n_cores; i++) {
    const av_profile_cores_t *c = &p->cores[i];
    json_t *r = json_array();
    for (int j = 0; j < c->n_k; j++) json_array_append_new(r, json_integer(c->resident[j]));
    json_array_append_new(res, json_pack("{s:s, s:i, s:i, s:i, s:o}", "kind",
                                         av_kernel_kind_name(c->tile.kind), "m", c->tile.m_rows,
                                         "n", c->tile.n_tokens, "warps", c->tile.warps,
                                         "most_resident_per_k", r));
  }
  json_t *d = json_pack("{s:s, s:s, s:s, s:f, s:{s:f, s:f}, s:{s:f, s:f, s:f}, s:f, s:o}", "gpu", p->gpu,
                   "device", p->device, "command", p->command, "copy_GBps", p->copy_GBps,
                   "launch", "per_launch_us", p->launch_us, "r2", p->launch_r2, "lone_cta",
                   "GBps", p->lone_GBps, "fixed_us", p->cta_fixed_us, "r2", p->lone_r2,
                   "tensor_tflops", p->tensor_tflops, "occupancy", occ);
  /* whether each co-residency grid really put k CTAs on an SM (the block scheduler's call) */
  if (d && p->read_GBps > 0) json_object_set_new(d, "read_GBps", json_real(p->read_GBps));
  if (d) json_object_set_new(d, "coresidency_placement", res);
  if (d) json_object_set_new(d, "empty_cta", json_pack("{s:f, s:f}", "per_wave_us",
                                                      p->empty_cta_us, "per_cta_us",
                                                      p->empty_slope_us));
  if (d) json_object_set_new(d, "dispatch", json_pack("{s:f, s:f, s:f, s:f}", "join_overhead_us",
                                                     p->join_us, "run_tail_us", p->tail_us,
                                                     "grid_refill_us", p->refill_us,
                                                     "launch_gap_us", p->launch_gap_us));
  else json_decref(res);
  if (d && launch_details(d, p)) {
    json_decref(d);
    return NULL;
  }
  /* the queue step: the start cost of profiles without the start step (costmodels/
   * profile_start.h) */
  if (d && p->n_queue > 0) json_object_set_new(d, "queue", queue_json(p));
  return d;
}

/* base = out path without a trailing ".json". */
static void base_of(const char *out_path, char *base, size_t n) {
  snprintf(base, n, "%s", out_path);
  size_t l = strlen(base);
  if (l > 5 && strcmp(base + l - 5, ".json") == 0) base[l - 5] = '\0';
}

static void today(char *date, size_t n) {
  date[0] = '\0';
  time_t now = time(NULL);
  struct tm tmv;
  if (gmtime_r(&now, &tmv)) strftime(date, n, "%Y-%m-%d", &tmv);
}

int av_profile_write_launch(const av_profile_t *p, const char *out_path, av_error_t *err) {
  char base[1000], path[2][1100], date[32];
  base_of(out_path, base, sizeof base);
  snprintf(path[0], sizeof path[0], "%s.spec.json", base);
  snprintf(path[1], sizeof path[1], "%s.details.json", base);
  json_t *doc[2] = {NULL, NULL}, *before = NULL;
  int rc = av_json_load_file(path[0], &doc[0], err);
  if (!rc) rc = av_json_load_file(path[1], &doc[1], err);
  if (!rc) {
    av_profile_t q = *p;  /* the gap less the spec's own refill, as a full profile does */
    const json_t *cta = json_object_get(json_object_get(doc[0], "cta_dispatch_us"), "value");
    q.refill_us = json_is_number(cta) ? json_number_value(cta) : 0;
    q.empty_cta_us = 0;
    before = json_deep_copy(doc[0]);
    today(date, sizeof date);
    av__profile_graph_fields(doc[0], &q, date);
    av__profile_pdl_field(doc[0], &q, date);
    if (!before || launch_details(doc[1], p))
      rc = av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  }
  if (!rc) rc = av_json_dump_file(doc[0], path[0], err);
  if (!rc && (rc = av_json_dump_file(doc[1], path[1], err)) != AV_OK)
    av_json_dump_file(before, path[0], NULL);  /* the spec as it was */
  json_decref(doc[0]);
  json_decref(doc[1]);
  json_decref(before);
  return rc;
}

/* Appends the array at from[key][sub] (sub NULL: from[key]) to the same place in into,
 * creating it there from `from` when into lacks it. */
static int extend_at(json_t *into, json_t *from, const char *key, const char *sub) {
  json_t *src = json_object_get(from, key);
  if (!src) return 0;
  json_t *dst = json_object_get(into, key);
  if (!dst) return json_object_set_new(into, key, json_deep_copy(src));
  if (sub) {
    src = json_object_get(src, sub);
    dst = json_object_get(dst, sub);
  }
  return json_is_array(src) && json_is_array(dst) ? json_array_extend(dst, src) : -1;
}

int av_profile_write_tiles(const av_profile_t *p, const char *out_path, av_error_t *err) {
  char base[1000], path[2][1100], date[32];
  base_of(out_path, base, sizeof base);
  snprintf(path[0], sizeof path[0], "%s.json", base);
  snprintf(path[1], sizeof path[1], "%s.details.json", base);
  json_t *doc[2] = {NULL, NULL}, *add[2] = {NULL, NULL}, *before = NULL;
  int rc = av_json_load_file(path[0], &doc[0], err);
  if (!rc) rc = av_json_load_file(path[1], &doc[1], err);
  if (!rc) {
    add[0] = av_profile_to_json(p);
    add[1] = av_profile_details_json(p);
    before = json_deep_copy(doc[0]);
    json_t *names = json_array(), *log = json_object_get(doc[0], "added");
    for (int i = 0; names && i < p->n; i++) {
      char nm[96];
      snprintf(nm, sizeof nm, "%s m%d n%d d%d %s", av_kernel_kind_name(p->t[i].tile.kind),
               p->t[i].tile.m_rows, p->t[i].tile.n_tokens, p->t[i].head_dim,
               av_dtype_name(p->t[i].dtype));
      json_array_append_new(names, json_string(nm));
    }
    today(date, sizeof date);
    if (!log) json_object_set_new(doc[0], "added", log = json_array());
    int bad = !add[0] || !add[1] || !before || !names || !json_is_array(log);
    bad = bad || json_array_append_new(log, json_pack("{s:s, s:s, s:s, s:o}", "command",
                                                      p->command, "device", p->device,
                                                      "date", date, "variants", names));
    bad = bad || extend_at(doc[0], add[0], "variants", NULL) ||
          extend_at(doc[0], add[0], "coresidency", "variants") ||
          extend_at(doc[0], add[0], "start", "variants") ||
          extend_at(doc[1], add[1], "occupancy", NULL) ||
          extend_at(doc[1], add[1], "coresidency_placement", NULL);
    if (bad)
      rc = av_error_set(err, AV_ERR_SCHEMA, SRC, out_path,
                        "could not add the new tiles (out of memory, or a profile whose "
                        "variants, coresidency or start key is not what anvil profile writes)");
  }
  if (!rc) rc = av_json_dump_file(doc[0], path[0], err);
  if (!rc && (rc = av_json_dump_file(doc[1], path[1], err)) != AV_OK)
    av_json_dump_file(before, path[0], NULL); /* the profile as it was */
  for (int i = 0; i < 2; i++) {
    json_decref(doc[i]);
    json_decref(add[i]);
  }
  json_decref(before);
  return rc;
}

int av_profile_write(const av_profile_t *p, const char *out_path, const char *spec_path,
                     av_error_t *err) {
  char base[1000], path[3][1100];
  base_of(out_path, base, sizeof base);
  snprintf(path[0], sizeof path[0], "%s.json", base);
  snprintf(path[1], sizeof path[1], "%s.spec.json", base);
  snprintf(path[2], sizeof path[2], "%s.details.json", base);
  json_t *spec = NULL, *doc[3] = {NULL, NULL, NULL};
  int rc = av_json_load_file(spec_path, &spec, err);
  if (!rc) {
    char date[32];
    today(date, sizeof date);
    doc[0] = av_profile_to_json(p);
    doc[1] = av_profile_calibrate_spec(spec, p, date);
    doc[2] = av_profile_details_json(p);
    if (!doc[0] || !doc[1] || !doc[2])
      rc = av_error_set(err, AV_ERR_NOMEM, SRC, NULL, "out of memory");
  }
  int written = 0;
  for (; !rc && written < 3; written++) rc = av_json_dump_file(doc[written], path[written], err);
  if (rc)
    for (int i = 0; i < written; i++) remove(path[i]);
  for (int i = 0; i < 3; i++) json_decref(doc[i]);
  json_decref(spec);
  return rc;
}

int av_profile_load_spec(const char *path, av_gpu_t *out, av_error_t *err) {
  int rc = av_gpu_load_file(path, out, err);
  if (rc) return rc;
  size_t l = strlen(out->name);
  if (l > 5 && strcmp(out->name + l - 5, ".spec") == 0) out->name[l - 5] = '\0';
  return AV_OK;
}

json_t *av_profile_merge_json(const av_profile_t *p) {
  json_t *curves = json_array();
  for (int i = 0; i < p->n_merge; i++) {
    const av_profile_merge_t *m = &p->merge[i];
    json_t *slots = json_array(), *t = json_array(), *cold = json_array();
    int has_cold = m->n > 0;
    for (int j = 0; j < m->n; j++) {
      json_array_append_new(slots, json_integer(m->slots[j]));
      json_array_append_new(t, json_real(round(m->time_us[j] * 1e4) / 1e4));
      json_array_append_new(cold, json_real(round(m->time_cold_us[j] * 1e4) / 1e4));
      has_cold = has_cold && m->time_cold_us[j] > 0;
    }
    json_t *curve = json_pack("{s:i, s:s, s:o, s:o}", "head_dim", m->head_dim, "dtype",
                              av_dtype_name(m->dtype), "slots", slots, "time_us", t);
    if (curve && has_cold) json_object_set(curve, "time_cold_us", cold);
    json_decref(cold);
    json_array_append_new(curves, curve);
  }
  char notes[600];
  snprintf(notes, sizeof notes,
           "one merge CTA alone (one request, rows_per_cta query heads, slots partial states "
           "of %d tokens each, written by the launch before it), mean traced duration; "
           "time_cold_us: the same after other CTAs of that launch read twice L2 of KV, so "
           "the states come from HBM; empty_cta_us: time one CTA slot spends on a "
           "persistent CTA with an empty queue",
           AV_PROF_MERGE_SEG);
  return json_pack("{s:i, s:f, s:s, s:o}", "rows_per_cta", p->n_merge ? p->merge[0].rows : 0,
                   "empty_cta_us", round(p->empty_cta_us * 1e4) / 1e4, "notes", notes,
                   "curves", curves);
}

json_t *av_profile_start_json(const av_profile_t *p) {
  json_t *vs = json_array(), *kv = json_array();
  for (int j = 0; j < AV_PROF_START_KV; j++) json_array_append_new(kv, json_integer(av_profile_start_kv[j]));
  for (int i = 0; i < p->n_start; i++) {
    const av_profile_start_t *v = &p->start[i];
    json_t *ctas = json_array(), *rows = json_array(), *dur = json_array();
    for (int k = 0; k < v->n_k; k++) json_array_append_new(ctas, json_integer(v->ctas[k]));
    for (int r = 0; r < v->n_rows; r++) json_array_append_new(rows, json_integer(v->rows[r]));
    for (int k = 0; k < v->n_k; k++) {
      json_t *by_rows = json_array();
      for (int r = 0; r < v->n_rows; r++) {
        json_t *by_kv = json_array();
        for (int j = 0; j < AV_PROF_START_KV; j++)
          json_array_append_new(by_kv, json_real(round(v->dur_us[k][r][j] * 1e4) / 1e4));
        json_array_append_new(by_rows, by_kv);
      }
      json_array_append_new(dur, by_rows);
    }
    json_array_append_new(
        vs, json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:o}", "kind",
                      av_kernel_kind_name(v->tile.kind), "m", v->tile.m_rows, "n",
                      v->tile.n_tokens, "warps", v->tile.warps, "head_dim", v->head_dim,
                      "dtype", av_dtype_name(v->dtype), "ctas", ctas, "n_q", rows,
                      "duration_us", dur));
  }
  return json_pack("{s:o, s:s, s:o}", "kv_tokens", kv, "notes",
                   "per k = 1 .. occupancy one launch of k x SMs one-item CTAs (ctas), each "
                   "over its own root of kv_tokens tokens with n_q queries (GQA group 1), L2 "
                   "flushed; duration_us[ctas][n_q][kv_tokens]: mean traced CTA duration. The "
                   "start cost is the excess over C(n_q, kv) beyond the shared bandwidth",
                   "variants", vs);
}
