/* `anvil validate`'s report (pipeline/validate_report.h): statistics from pipeline/compare.c,
 * laid out for readers (the printed table), for scripts (validation.json) and for
 * spreadsheets (validation.csv). */
#include "pipeline/files.h"
#include "pipeline/provenance.h"
#include "pipeline/validate_report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/json_util.h"
#include "pipeline/compare.h"
#include "selectors/auto.h"

#define TOL 0.05 /* "within 5 % of the measured best plan" (docs/validation.md) */

av_vrow_t *av_vreport_add(av_vreport_t *r) {
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 64;
    av_vrow_t *rows = realloc(r->rows, (size_t)cap * sizeof *rows);
    if (!rows) return NULL;
    r->rows = rows;
    r->cap = cap;
  }
  av_vrow_t *x = &r->rows[r->n++];
  memset(x, 0, sizeof *x);
  x->replayed_us = NAN;
  x->same_as = -1;
  return x;
}

void av_vreport_free(av_vreport_t *r) {
  free(r->rows);
  r->rows = NULL;
  r->n = r->cap = 0;
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Schedulers that compete for "best plan": all but auto, whose plan is one of theirs. */
static void rank_opts(const av_experiment_t *e, uint8_t *ranked, av_cmp_opts_t *o) {
  o->ranked = ranked;
  o->n_sched = e->n_scheds;
  o->focus = -1;
  o->tol = TOL;
  for (int s = 0; s < e->n_scheds; s++) {
    int is_auto = (e->scheds[s].ops->flags & AV_SCHED_SIMULATES_OTHERS) != 0;
    ranked[s] = !is_auto;
    if (is_auto && o->focus < 0) o->focus = s;
  }
}

static json_t *summary_json(const av_cmp_summary_t *s, const av_experiment_t *e,
                            const av_cmp_pair_t *pairs, int with_batches) {
  json_t *j = json_pack("{s:i, s:o, s:o, s:o, s:o}", "pairs", s->n, "mape", num(s->mape),
                        "worst_ape", num(s->worst_ape), "spearman", num(s->spearman),
                        "kendall", num(s->kendall));
  if (s->n > 0) {
    const av_cmp_pair_t *w = &pairs[s->worst];
    json_object_set_new(j, "worst", json_pack("{s:s, s:s}", "batch", e->batches[w->batch].name,
                                              "scheduler", e->scheds[w->sched].label));
  }
  if (!with_batches) return j;
  json_object_set_new(
      j, "best_plan",
      json_pack("{s:i, s:i, s:o, s:o, s:o, s:i}", "batches", s->n_batches, "agree", s->agree,
                "agree_frac", num(s->agree_frac), "regret_mean", num(s->regret_mean),
                "regret_max", num(s->regret_max), "regret_within_5pct", s->regret_within));
  json_object_set_new(j, "auto",
                      json_pack("{s:i, s:i, s:o, s:o, s:o}", "batches", s->focus_batches,
                                "within_5pct", s->focus_within, "within_frac",
                                num(s->focus_frac), "gap_mean", num(s->focus_gap_mean),
                                "gap_max", num(s->focus_gap_max)));
  return j;
}

/* Pairs of rows (all, one scheduler, or replayed-vs-measured / predicted-vs-replayed). */
enum { PAIRS_TOTAL, PAIRS_DISPATCH, PAIRS_COSTMODEL };
static int make_pairs(const av_vreport_t *r, int sched, int kind, av_cmp_pair_t *p) {
  int n = 0;
  for (int i = 0; i < r->n; i++) {
    const av_vrow_t *x = &r->rows[i];
    if (sched >= 0 && x->sched != sched) continue;
    if (kind != PAIRS_TOTAL && !isfinite(x->replayed_us)) continue;
    double pred = kind == PAIRS_DISPATCH ? x->replayed_us : x->predicted_us;
    double meas = kind == PAIRS_COSTMODEL ? x->replayed_us : x->measured_us;
    p[n++] = (av_cmp_pair_t){x->batch, x->sched, pred, meas};
  }
  return n;
}

int av_vseen_init(av_vseen_t *s, int cap, av_error_t *err) {
  s->plan = calloc((size_t)cap + 1, sizeof *s->plan);
  s->row = calloc((size_t)cap + 1, sizeof *s->row);
  s->n = 0;
  s->cap = cap;
  if (s->plan && s->row) return AV_OK;
  av_vseen_free(s);
  return av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
}

void av_vseen_free(av_vseen_t *s) {
  for (int i = 0; s->plan && i < s->n; i++) av_plan_destroy(s->plan[i]);
  free(s->plan);
  free(s->row);
  memset(s, 0, sizeof *s);
}

int av_vseen_find(const av_vseen_t *s, const av_plan_t *p) {
  for (int i = 0; i < s->n; i++)
    if (av_plan_same_work(s->plan[i], p)) return i;
  return -1;
}

void av_vseen_keep(av_vseen_t *s, av_plan_t *p, int row) {
  if (s->n >= s->cap) {
    av_plan_destroy(p);
    return;
  }
  s->plan[s->n] = p;
  s->row[s->n++] = row;
}

void av_vrow_share(av_vrow_t *row, const av_vrow_t *from) {
  row->measured_us = from->measured_us;
  row->min_us = from->min_us;
  row->max_us = from->max_us;
  row->replayed_us = from->replayed_us;
  row->max_rel_err = from->max_rel_err;
  row->unwritten = from->unwritten;
  row->deterministic = from->deterministic;
  row->ctas = from->ctas;
  row->same_as = from->same_as >= 0 ? from->same_as : from->sched;
}

/* Scheduler k of e is a selector (`auto`), whose plan parameters carry its verdict. */
static int is_auto(const av_experiment_t *e, int k) {
  return (e->scheds[k].ops->flags & AV_SCHED_SIMULATES_OTHERS) != 0;
}

static json_t *row_json(const av_vreport_t *r, const av_vrow_t *x) {
  const av_experiment_t *e = r->e;
  const av_heads_t *h = &e->batches[x->batch].w->heads;
  json_t *j = json_pack(
      "{s:s, s:[i,i], s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o, s:f, s:I, "
      "s:b, s:i}",
      "batch", e->batches[x->batch].name, "heads", h->hq, h->hkv, "scheduler",
      e->scheds[x->sched].label, "scheduler_name", e->scheds[x->sched].ops->name, "params",
      x->params, "floor_us", x->floor.us, "floor_mem_us", x->floor.mem_us, "floor_compute_us",
      x->floor.compute_us, "predicted_us", x->predicted_us, "measured_us",
      x->measured_us, "measured_min_us", x->min_us, "measured_max_us", x->max_us, "ape",
      num(av_cmp_ape(x->predicted_us, x->measured_us)), "replayed_us", num(x->replayed_us),
      "max_rel_err", x->max_rel_err, "unwritten", (json_int_t)x->unwritten, "deterministic",
      x->deterministic, "ctas", x->ctas);
  if (j) json_object_set_new(j, "floor_datasheet_us", json_real(x->floor.datasheet_us));
  /* identical plans are timed once: the GPU's run-to-run spread between two timings of one
   * plan is not a difference between schedulers */
  if (j && x->same_as >= 0)
    json_object_set_new(j, "same_plan_as", json_string(e->scheds[x->same_as].label));
  /* auto's verdict: the candidate it chose and the runner-up's predicted excess over it */
  char chose[128];
  double margin;
  if (j && is_auto(e, x->sched) &&
      av_auto_verdict_parse(x->params, chose, sizeof chose, &margin)) {
    json_object_set_new(j, "auto_chose", json_string(chose));
    json_object_set_new(j, "auto_margin", num(margin));
  }
  return j;
}

static json_t *report_json(const av_vreport_t *r, av_error_t *err) {
  const av_experiment_t *e = r->e;
  av_cmp_pair_t *p = malloc(sizeof *p * (size_t)(r->n ? r->n : 1));
  uint8_t *ranked = malloc((size_t)e->n_scheds);
  json_t *doc = NULL;
  av_cmp_batch_t *bs = NULL;
  if (!p || !ranked) {
    av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
    goto done;
  }
  av_cmp_opts_t o;
  rank_opts(e, ranked, &o);
  av_cmp_summary_t s;
  int n = make_pairs(r, -1, PAIRS_TOTAL, p);
  if (av_cmp_summarize(p, n, &o, &s, &bs, err)) goto done;
  doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:o}", "experiment", e->name, "file", e->path,
                  "device", r->device, "spec", r->spec, "command", r->command, "repeats",
                  r->repeats, "summary", summary_json(&s, e, p, 1));
  json_t *by = json_object(), *batches = json_array(), *rows = json_array();
  if (e->launch != AV_LAUNCH_STREAMS)
    json_object_set_new(doc, "launch", json_string(av_launch_model_name(e->launch)));
  json_object_set_new(doc, "by_scheduler", by);
  for (int k = 0; k < e->n_scheds; k++) {
    av_cmp_summary_t sk;
    av_cmp_pair_t *q = p + 0;
    int nk = make_pairs(r, k, PAIRS_TOTAL, q);
    if (nk && !av_cmp_summarize(q, nk, &o, &sk, NULL, NULL))
      json_object_set_new(by, e->scheds[k].label, summary_json(&sk, e, q, 0));
  }
  for (int i = 0; i < s.n_batches; i++)
    json_array_append_new(
        batches, json_pack("{s:s, s:s, s:s, s:b, s:f, s:o}", "batch",
                           e->batches[bs[i].batch].name, "predicted_best",
                           e->scheds[bs[i].pred_best].label, "measured_best",
                           e->scheds[bs[i].meas_best].label, "agree", bs[i].agree, "regret",
                           bs[i].regret, "auto_gap", num(bs[i].focus_gap)));
  json_object_set_new(doc, "batches", batches);
  /* --trace: the same statistics for the two halves of the error */
  static const char *const names[] = {"dispatch_error", "cost_model_error"};
  for (int kind = PAIRS_DISPATCH; kind <= PAIRS_COSTMODEL; kind++) {
    int nt = make_pairs(r, -1, kind, p);
    av_cmp_summary_t st;
    if (nt && !av_cmp_summarize(p, nt, &o, &st, NULL, NULL))
      json_object_set_new(doc, names[kind - 1], summary_json(&st, e, p, 0));
  }
  for (int i = 0; i < r->n; i++) json_array_append_new(rows, row_json(r, &r->rows[i]));
  json_object_set_new(doc, "rows", rows);
done:
  free(bs);
  free(ranked);
  free(p);
  return doc;
}

static char *report_csv(const av_vreport_t *r) {
  size_t cap = 256 + (size_t)r->n * 512, used = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  used += (size_t)snprintf(out, cap,
                           "batch,hq,hkv,scheduler,floor_us,floor_mem_us,floor_compute_us,"
                           "predicted_us,measured_us,"
                           "measured_min_us,measured_max_us,ape,replayed_us,max_rel_err,ctas,"
                           "floor_datasheet_us,auto_chose,auto_margin\n");
  for (int i = 0; i < r->n && used < cap; i++) {
    const av_vrow_t *x = &r->rows[i];
    const av_heads_t *h = &r->e->batches[x->batch].w->heads;
    char name[600], label[300];  /* names are quoted: FlashInfer's hold commas */
    av_csv_field(name, sizeof name, r->e->batches[x->batch].name);
    av_csv_field(label, sizeof label, r->e->scheds[x->sched].label);
    char chose[128], chose_csv[300], margin_csv[32] = "";
    double margin = NAN;
    if (!is_auto(r->e, x->sched) ||
        !av_auto_verdict_parse(x->params, chose, sizeof chose, &margin))
      chose[0] = 0;
    av_csv_field(chose_csv, sizeof chose_csv, chose);
    if (!isnan(margin)) snprintf(margin_csv, sizeof margin_csv, "%.4f", margin);
    used += (size_t)snprintf(out + used, cap - used,
                             "%s,%d,%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.6f,%.4f,%.3g,"
                             "%d,%.4f,%s,%s\n",
                             name, h->hq, h->hkv, label, x->floor.us, x->floor.mem_us,
                             x->floor.compute_us, x->predicted_us,
                             x->measured_us, x->min_us, x->max_us,
                             av_cmp_ape(x->predicted_us, x->measured_us), x->replayed_us,
                             x->max_rel_err, (int)x->ctas, x->floor.datasheet_us, chose_csv,
                             margin_csv);
  }
  return out;
}

int av_vreport_write(const av_vreport_t *r, const char *dir, av_error_t *err) {
  char pj[1100], pc[1100];
  snprintf(pj, sizeof pj, "%s/validation.json", dir);
  snprintf(pc, sizeof pc, "%s/validation.csv", dir);
  json_t *doc = report_json(r, err);
  if (!doc) return err && err->code ? err->code : AV_ERR_NOMEM;
  json_object_set_new(doc, "provenance", av_provenance_json(r->e));
  char *csv = report_csv(r);
  int rc = csv ? av_mkdirs(dir, err)
               : av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  if (!rc) rc = av_json_dump_file(doc, pj, err);
  if (!rc) {
    rc = av_write_file_atomic(pc, csv, strlen(csv), err);
    if (rc) remove(pj);
  }
  free(csv);
  json_decref(doc);
  return rc;
}

/* The statistics of the report, per scheduler, overall and traced. */
static void summarize_into(const av_vreport_t *r, av_cmp_pair_t *p, const av_cmp_opts_t *o,
                           av_vsummary_t *out) {
  const av_experiment_t *e = r->e;
  for (int k = 0; k < e->n_scheds; k++) {
    av_cmp_summary_t s;
    int n = make_pairs(r, k, PAIRS_TOTAL, p);
    if (n && !av_cmp_summarize(p, n, o, &s, NULL, NULL))
      out->sched_stats[out->n_sched_stats++] = (av_vsched_stat_t){
          .sched = k, .pairs = n, .mape = s.mape, .worst_ape = s.worst_ape,
          .spearman = s.spearman};
  }
  av_cmp_summary_t s;
  int n = make_pairs(r, -1, PAIRS_TOTAL, p);
  if (!av_cmp_summarize(p, n, o, &s, NULL, NULL)) {
    out->overall = 1;
    out->s = s;
    out->worst_batch = p[s.worst].batch;
    out->worst_sched = p[s.worst].sched;
  }
  for (int kind = PAIRS_DISPATCH; kind <= PAIRS_COSTMODEL; kind++) {
    int nt = make_pairs(r, -1, kind, p);
    if (nt && !av_cmp_summarize(p, nt, o, &s, NULL, NULL)) {
      if (kind == PAIRS_DISPATCH) out->dispatch_pairs = nt, out->dispatch_mape = s.mape;
      else out->cost_pairs = nt, out->cost_mape = s.mape;
    }
  }
}

int av_vreport_summarize(const av_vreport_t *r, av_vsummary_t *out, av_error_t *err) {
  memset(out, 0, sizeof *out);
  if (r->n == 0) return AV_OK;
  const av_experiment_t *e = r->e;
  av_cmp_pair_t *p = malloc(sizeof *p * (size_t)r->n);
  uint8_t *ranked = malloc((size_t)e->n_scheds);
  out->sched_stats = malloc(sizeof *out->sched_stats * (size_t)e->n_scheds);
  if (!p || !ranked || !out->sched_stats) {
    free(p);
    free(ranked);
    av_vsummary_free(out);
    return av_error_set(err, AV_ERR_NOMEM, "validate", NULL, "out of memory");
  }
  out->any = 1;
  av_cmp_opts_t o;
  rank_opts(e, ranked, &o);
  summarize_into(r, p, &o, out);
  free(p);
  free(ranked);
  return AV_OK;
}

void av_vsummary_free(av_vsummary_t *s) {
  free(s->sched_stats);
  s->sched_stats = NULL;
  s->n_sched_stats = 0;
}

void av_vnote(av_vnote_fn fn, void *user, int kind, const char *fmt, ...) {
  if (!fn) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fn(kind, line, user);
}
