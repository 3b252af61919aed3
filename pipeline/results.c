/* `anvil run` results: the table a person reads and the JSON/CSV files analysis scripts
 * read. Both files carry the same columns, built once per row (row_json), so they cannot
 * drift apart. A failed row keeps its identity columns, zeros and its message. */
#include "pipeline/files.h"
#include "pipeline/provenance.h"
#include "pipeline/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "selectors/auto.h"

av_result_row_t *av_results_add(av_results_t *r) {
  if (r->n == r->cap) {
    int ncap = r->cap ? 2 * r->cap : 64;
    av_result_row_t *nr = realloc(r->rows, (size_t)ncap * sizeof *nr);
    if (!nr) return NULL;
    r->rows = nr;
    r->cap = ncap;
  }
  av_result_row_t *row = &r->rows[r->n++];
  memset(row, 0, sizeof *row);
  return row;
}

void av_results_free(av_results_t *r) {
  free(r->rows);
  memset(r, 0, sizeof *r);
}

int64_t av_results_row_count(const av_experiment_t *e) {
  return (int64_t)e->n_gpus * e->n_batches * e->n_scheds;
}

void av_results_row_locate(const av_experiment_t *e, int64_t index, av_result_row_t *row) {
  row->index = index;
  row->sched = (int)(index % e->n_scheds);
  row->batch = (int)(index / e->n_scheds % e->n_batches);
  row->gpu = (int)(index / e->n_scheds / e->n_batches);
}

int av_results_failed(const av_results_t *r) {
  int n = 0;
  for (int i = 0; i < r->n; i++) n += r->rows[i].status != AV_OK;
  return n;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

/* One row's columns, in file order. */
static json_t *row_json(const av_experiment_t *e, const av_result_row_t *x) {
  const av_exp_batch_t *b = &e->batches[x->batch];
  const av_heads_t *h = &b->w->heads;
  const av_exp_sched_t *s = &e->scheds[x->sched];
  json_t *o = json_object();
  json_object_set_new(o, "gpu", json_string(e->gpus[x->gpu].name));
  json_object_set_new(o, "workload", json_string(b->name));
  json_object_set_new(o, "hq", json_integer(h->hq));
  json_object_set_new(o, "hkv", json_integer(h->hkv));
  json_object_set_new(o, "head_dim", json_integer(h->head_dim));
  json_object_set_new(o, "dtype", json_string(av_dtype_name(h->dtype)));
  json_object_set_new(o, "scheduler", json_string(s->label));
  json_object_set_new(o, "scheduler_name", json_string(s->ops->name));
  json_object_set_new(o, "params", json_string(x->params));
  json_object_set_new(o, "requests", json_integer(x->ws.requests));
  json_object_set_new(o, "nodes", json_integer(x->ws.nodes));
  json_object_set_new(o, "depth", json_integer(x->ws.depth));
  json_object_set_new(o, "items", json_integer(x->ps.items));
  json_object_set_new(o, "launches", json_integer(x->ps.launches));
  json_object_set_new(o, "partial_slots", json_integer(x->ps.partial_slots));
  json_object_set_new(o, "unique_kv_bytes", json_real(x->ws.unique_kv_bytes));
  json_object_set_new(o, "query_centric_kv_bytes", json_real(x->ws.query_centric_kv_bytes));
  json_object_set_new(o, "sharing_ratio", json_real(x->ws.sharing_ratio));
  json_object_set_new(o, "plan_kv_bytes", json_real(x->ps.kv_bytes));
  json_object_set_new(o, "plan_partial_bytes", json_real(x->ps.partial_bytes));
  json_object_set_new(o, "floor_us", json_real(x->floor.us));
  json_object_set_new(o, "floor_mem_us", json_real(x->floor.mem_us));
  json_object_set_new(o, "floor_compute_us", json_real(x->floor.compute_us));
  json_object_set_new(o, "predicted_us", json_real(x->predicted_us));
  json_object_set_new(o, "ratio_to_floor", json_real(ratio(x->predicted_us, x->floor.us)));
  json_object_set_new(o, "partial_us", json_real(x->partial_us));
  json_object_set_new(o, "merge_us", json_real(x->merge_us));
  json_object_set_new(o, "hbm_bytes", json_real(x->hbm_bytes));
  json_object_set_new(o, "l2_bytes", json_real(x->l2_bytes));
  json_object_set_new(o, "achieved_bw_GBps", json_real(x->achieved_bw_GBps));
  json_object_set_new(o, "bubble_frac", json_real(x->bubble_frac));
  json_object_set_new(o, "status", json_string(x->status == AV_OK ? "ok" : "failed"));
  json_object_set_new(o, "error", json_string(x->error));
  /* auto's verdict: the candidate it chose and the runner-up's predicted excess over it */
  char chose[128];
  double margin = NAN;
  const int verdict = (s->ops->flags & AV_SCHED_SIMULATES_OTHERS) &&
                      av_auto_verdict_parse(x->params, chose, sizeof chose, &margin);
  json_object_set_new(o, "auto_chose", verdict ? json_string(chose) : json_null());
  json_object_set_new(o, "auto_margin", verdict && !isnan(margin) ? json_real(margin)
                                                                   : json_null());
  return o;
}

/* The document without its rows ("rows": []). */
static json_t *results_head(const av_experiment_t *e, const av_results_t *r) {
  json_t *gpus = json_array();
  for (int g = 0; g < e->n_gpus; g++) json_array_append_new(gpus, json_string(e->gpus[g].name));
  json_t *scheds = json_array();
  for (int s = 0; s < e->n_scheds; s++)
    json_array_append_new(scheds, json_pack("{s:s, s:s, s:o}", "label", e->scheds[s].label,
                                            "name", e->scheds[s].ops->name, "params",
                                            av_params_to_json(&e->scheds[s].params)));
  const int failed = av_results_failed(r);
  json_t *head = json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:o}, s:o, s:i, s:i, s:i, s:o, s:o}",
                   "experiment",
                   e->name, "source", e->path, "sim", av_sim_model_name(e->sim),
                   "gpus", gpus, "cost_model", "name", e->cost_ops->name, "params",
                   av_params_to_json(&e->cost_params), "schedulers", scheds, "workloads",
                   e->n_batches, "plans_checked", r->n - failed, "rows_failed", failed,
                   "rows", json_array(), "provenance", av_provenance_json(e));
  if (head && e->launch != AV_LAUNCH_STREAMS)
    json_object_set_new(head, "launch", json_string(av_launch_model_name(e->launch)));
  return head;
}

json_t *av_results_to_json(const av_experiment_t *e, const av_results_t *r) {
  json_t *doc = results_head(e, r);
  json_t *rows = json_object_get(doc, "rows");
  for (int i = 0; i < r->n; i++) json_array_append_new(rows, row_json(e, &r->rows[i]));
  return doc;
}

/* Appends s to the growing buffer. */
typedef struct strbuf {
  char *p;
  size_t n, cap;
  int oom;
} strbuf_t;

static void sb_put(strbuf_t *b, const char *s, size_t len) {
  if (b->oom) return;
  if (b->n + len + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap < b->n + len + 1) ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = ncap;
  }
  memcpy(b->p + b->n, s, len);
  b->n += len;
  b->p[b->n] = '\0';
}

static void csv_value(strbuf_t *b, const json_t *v) {
  char tmp[64];
  if (json_is_integer(v)) {
    snprintf(tmp, sizeof tmp, "%lld", (long long)json_integer_value(v));
    sb_put(b, tmp, strlen(tmp));
  } else if (json_is_real(v)) {
    snprintf(tmp, sizeof tmp, "%.10g", json_real_value(v));
    sb_put(b, tmp, strlen(tmp));
  } else if (json_is_string(v)) {
    const char *s = json_string_value(v);
    const size_t need = av_csv_field(NULL, 0, s);
    char *q = malloc(need + 1);
    if (!q) {
      b->oom = 1;
      return;
    }
    av_csv_field(q, need + 1, s);
    sb_put(b, q, need);
    free(q);
  }
}

char *av_results_to_csv(const av_experiment_t *e, const av_results_t *r) {
  strbuf_t b = {0};
  for (int i = -1; i < r->n; i++) {
    /* i = -1 writes the header from the first row's keys (a blank row when there are
     * none, so the header exists even for an empty table). */
    av_result_row_t blank = {0};
    json_t *o = row_json(e, r->n ? &r->rows[i < 0 ? 0 : i] : &blank);
    const char *key;
    json_t *v;
    int first = 1;
    json_object_foreach(o, key, v) {
      if (!first) sb_put(&b, ",", 1);
      first = 0;
      if (i < 0)
        sb_put(&b, key, strlen(key));
      else
        csv_value(&b, v);
    }
    sb_put(&b, "\n", 1);
    json_decref(o);
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

#define AV_RESULTS_DUMP (JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* The text json_dumps(av_results_to_json(e, r), AV_RESULTS_DUMP) gives, built one row at a
 * time so a study of many rows never holds them all as JSON objects: the head dumped with
 * "rows": [], then each row dumped alone and indented two more spaces (JSON strings hold no
 * raw newline, so every newline of a row's text is one of the layout's) in its place. */
static char *results_json_text(const av_experiment_t *e, const av_results_t *r) {
  json_t *head = results_head(e, r);
  char *h = head ? json_dumps(head, AV_RESULTS_DUMP) : NULL;
  json_decref(head);
  static const char key[] = "\n \"rows\": []";
  char *at = h ? strstr(h, key) : NULL;
  if (!at || !r->n) return h;
  strbuf_t b = {0};
  sb_put(&b, h, (size_t)(at - h) + sizeof key - 2); /* up to and with '[' */
  for (int i = 0; i < r->n && !b.oom; i++) {
    json_t *o = row_json(e, &r->rows[i]);
    char *t = json_dumps(o, AV_RESULTS_DUMP);
    json_decref(o);
    if (!t) {
      b.oom = 1;
      break;
    }
    sb_put(&b, i ? ",\n  " : "\n  ", i ? 4 : 3);
    for (const char *p = t, *nl; *p; p = nl + 1) {
      nl = strchr(p, '\n');
      if (!nl) {
        sb_put(&b, p, strlen(p));
        break;
      }
      sb_put(&b, p, (size_t)(nl - p) + 1);
      sb_put(&b, "  ", 2);
    }
    free(t);
  }
  sb_put(&b, "\n ]", 3);
  const char *rest = at + sizeof key - 1; /* after "[]" */
  sb_put(&b, rest, strlen(rest));
  free(h);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

int av_results_write(const av_experiment_t *e, const av_results_t *r, const char *dir,
                     av_error_t *err) {
  char jpath[1100], cpath[1100];
  snprintf(jpath, sizeof jpath, "%s/results.json", dir);
  snprintf(cpath, sizeof cpath, "%s/results.csv", dir);
  char *text = results_json_text(e, r);
  int rc = text ? av_file_write(jpath, text, strlen(text), err)
                : av_error_set(err, AV_ERR_NOMEM, dir, NULL, "out of memory");
  free(text);
  char *csv = rc ? NULL : av_results_to_csv(e, r);
  if (!rc && !csv) rc = av_error_set(err, AV_ERR_NOMEM, dir, NULL, "out of memory");
  if (!rc) rc = av_file_write(cpath, csv, strlen(csv), err);
  free(csv);
  return rc;
}
