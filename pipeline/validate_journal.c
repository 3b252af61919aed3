/* `anvil validate`'s journal (pipeline/validate_journal.h). A batch line is
 * {"batch": b, "rows": [{...}, ...]} with every av_vrow_t field; a NaN (no replay) is null. */
#include "pipeline/validate_journal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/outfile.h"
#include "pipeline/files.h"
#include "pipeline/results_journal.h"

struct av_vjournal {
  FILE *f;
  char path[1100];
  int n_batches;
  json_t **batch;          /* n_batches: the journaled rows of each batch, or NULL */
};

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double num_value(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

static json_t *vrow_json(const av_vrow_t *x) {
  return json_pack("{s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:i, s:i, s:s, "
                   "s:i}",
                   "batch", x->batch, "sched", x->sched, "floor_us", num(x->floor.us),
                   "floor_mem_us", num(x->floor.mem_us), "floor_compute_us",
                   num(x->floor.compute_us),
                   "predicted_us", num(x->predicted_us), "measured_us", num(x->measured_us),
                   "min_us", num(x->min_us), "max_us", num(x->max_us), "replayed_us",
                   num(x->replayed_us), "max_rel_err", num(x->max_rel_err), "unwritten",
                   (json_int_t)x->unwritten, "deterministic", x->deterministic, "ctas",
                   (int)x->ctas, "params", x->params, "same_as", x->same_as);
}

static void vrow_parse(const json_t *o, av_vrow_t *x) {
  x->batch = (int)json_integer_value(json_object_get(o, "batch"));
  x->sched = (int)json_integer_value(json_object_get(o, "sched"));
  x->floor.us = num_value(json_object_get(o, "floor_us"));
  x->floor.mem_us = num_value(json_object_get(o, "floor_mem_us"));
  x->floor.compute_us = num_value(json_object_get(o, "floor_compute_us"));
  x->predicted_us = num_value(json_object_get(o, "predicted_us"));
  x->measured_us = num_value(json_object_get(o, "measured_us"));
  x->min_us = num_value(json_object_get(o, "min_us"));
  x->max_us = num_value(json_object_get(o, "max_us"));
  x->replayed_us = num_value(json_object_get(o, "replayed_us"));
  x->max_rel_err = num_value(json_object_get(o, "max_rel_err"));
  x->unwritten = json_integer_value(json_object_get(o, "unwritten"));
  x->deterministic = (int)json_integer_value(json_object_get(o, "deterministic"));
  x->ctas = (int32_t)json_integer_value(json_object_get(o, "ctas"));
  x->same_as = (int)json_integer_value(json_object_get(o, "same_as"));
  const char *p = json_string_value(json_object_get(o, "params"));
  snprintf(x->params, sizeof x->params, "%s", p ? p : "");
}

static json_t *header(const av_vreport_t *rep) {
  char hash[32];
  snprintf(hash, sizeof hash, "%016" PRIx64, av_experiment_hash(rep->e));
  return json_pack("{s:i, s:s, s:s, s:s, s:s, s:i}", "anvil_validation_journal", 1,
                   "experiment", rep->e->name, "hash", hash, "device", rep->device, "spec",
                   rep->spec, "repeats", rep->repeats);
}

static int put_line(FILE *f, json_t *o) {
  char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
              : NULL;
  int bad = !t || fprintf(f, "%s\n", t) < 0 || fflush(f) != 0;
  free(t);
  return bad;
}

/* Reads an existing journal's batches; checks its header against `want`. */
static int load(av_vjournal_t *j, const json_t *want, av_error_t *err) {
  char *text = av_file_read(j->path, err);
  if (!text) return err && err->code ? err->code : AV_ERR_IO;
  int rc = AV_OK, line = 0;
  for (char *p = text, *nl; !rc && (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = '\0';
    json_t *o = json_loads(p, 0, NULL);
    const json_t *rows = json_object_get(o, "rows");
    const int b = (int)json_integer_value(json_object_get(o, "batch"));
    if (++line == 1 && !json_equal(o, want)) {
      char *have = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
      rc = av_error_set(err, AV_ERR_MISMATCH, j->path, NULL,
                        "this journal is of another validation (%.300s); resume only the "
                        "one that wrote it, on the same device, or run without --resume",
                        have ? have : "not a validation journal");
      free(have);
    } else if (line > 1 && (!json_is_array(rows) || b < 0 || b >= j->n_batches)) {
      rc = av_error_set(err, AV_ERR_SCHEMA, j->path, NULL, "line %d is not a batch of this "
                        "validation", line);
    } else if (line > 1) {
      json_decref(j->batch[b]);
      j->batch[b] = json_incref((json_t *)rows);
    }
    json_decref(o);
  }
  free(text);
  return rc;
}

static av_vjournal_t *journal_new(const char *path, const av_vreport_t *rep, av_error_t *err) {
  av_vjournal_t *j = calloc(1, sizeof *j);
  if (j) j->batch = calloc((size_t)rep->e->n_batches + 1, sizeof *j->batch);
  if (!j || !j->batch) {
    av_vjournal_close(j);
    av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
    return NULL;
  }
  j->n_batches = rep->e->n_batches;
  snprintf(j->path, sizeof j->path, "%s", path);
  return j;
}

int av_vjournal_open(const char *path, const av_vreport_t *rep, int resume,
                     av_vjournal_t **out, av_error_t *err) {
  *out = NULL;
  av_vjournal_t *j = journal_new(path, rep, err);
  if (!j) return err->code;
  json_t *want = header(rep);
  FILE *probe = resume ? fopen(path, "rb") : NULL;
  int rc = AV_OK;
  if (probe) {
    fclose(probe);
    rc = load(j, want, err);
  }
  /* rewritten with what was kept (replaced whole), then appended to */
  av_outfile_t o;
  if (!rc) rc = av_outfile_open(&o, path, err);
  int bad = rc ? 0 : put_line(o.f, want);
  for (int b = 0; !rc && !bad && b < j->n_batches; b++) {
    if (!j->batch[b]) continue;
    json_t *line = json_pack("{s:i, s:O}", "batch", b, "rows", j->batch[b]);
    bad = put_line(o.f, line);
    json_decref(line);
  }
  if (!rc) rc = bad ? av_outfile_fail(&o, err) : av_outfile_commit(&o, 0, err);
  if (!rc && !(j->f = av_outfile_append(path)))
    rc = av_error_set(err, AV_ERR_IO, path, NULL, "cannot append to the journal: %s",
                      strerror(errno));
  json_decref(want);
  if (rc) {
    av_vjournal_close(j);
    return rc;
  }
  *out = j;
  return AV_OK;
}

int av_vjournal_take(const av_vjournal_t *j, int b, av_vreport_t *rep) {
  if (!j || b < 0 || b >= j->n_batches || !j->batch[b]) return 0;
  size_t i;
  const json_t *o;
  json_array_foreach(j->batch[b], i, o) {
    av_vrow_t *x = av_vreport_add(rep);
    if (!x) return -1;
    vrow_parse(o, x);
  }
  return 1;
}

int av_vjournal_append(av_vjournal_t *j, int b, const av_vreport_t *rep, int first,
                       av_error_t *err) {
  if (!j) return AV_OK;
  json_t *rows = json_array();
  for (int i = first; i < rep->n; i++) json_array_append_new(rows, vrow_json(&rep->rows[i]));
  json_t *line = json_pack("{s:i, s:o}", "batch", b, "rows", rows);
  const int bad = put_line(j->f, line);
  json_decref(line);
  if (bad)
    return av_error_set(err, AV_ERR_IO, j->path, NULL, "cannot append to the journal: %s",
                        strerror(errno));
  return AV_OK;
}

void av_vjournal_close(av_vjournal_t *j) {
  if (!j) return;
  if (j->f) fclose(j->f);
  for (int b = 0; j->batch && b < j->n_batches; b++) json_decref(j->batch[b]);
  free(j->batch);
  free(j);
}

/* Reads one shard's journal into shard[k]; a batch also held by an earlier shard is refused. */
static int merge_one(av_vjournal_t **shard, int k, const char *path, const av_vreport_t *rep,
                     const json_t *want, av_error_t *err) {
  if (!(shard[k] = journal_new(path, rep, err))) return err->code;
  int rc = load(shard[k], want, err);
  for (int b = 0; !rc && b < shard[k]->n_batches; b++)
    for (int i = 0; !rc && i < k && shard[k]->batch[b]; i++)
      if (shard[i]->batch[b])
        rc = av_error_set(err, AV_ERR_MISMATCH, path, NULL,
                          "batch %d is also in %s: shards of one validation measure "
                          "different batches (--shard I/N with one N)",
                          b, shard[i]->path);
  return rc;
}

int av_vjournal_merge(const char *const *shards, int n, const char *path,
                      const av_vreport_t *rep, int *missing, av_error_t *err) {
  av_vjournal_t **shard = calloc((size_t)n + 1, sizeof *shard), *out = NULL;
  json_t *want = header(rep);
  int rc = shard && want ? AV_OK : av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  for (int k = 0; k < n && !rc; k++) rc = merge_one(shard, k, shards[k], rep, want, err);
  if (!rc) rc = av_vjournal_open(path, rep, 0, &out, err);
  *missing = 0;
  for (int b = 0; !rc && b < rep->e->n_batches; b++) {
    const json_t *rows = NULL;
    for (int k = 0; k < n && !rows; k++) rows = shard[k]->batch[b];
    if (!rows) {
      ++*missing;
      continue;
    }
    json_t *line = json_pack("{s:i, s:O}", "batch", b, "rows", rows);
    if (put_line(out->f, line))
      rc = av_error_set(err, AV_ERR_IO, path, NULL, "cannot write the journal: %s",
                        strerror(errno));
    json_decref(line);
  }
  av_vjournal_close(out);
  for (int k = 0; shard && k < n; k++) av_vjournal_close(shard[k]);
  free(shard);
  json_decref(want);
  return rc;
}
