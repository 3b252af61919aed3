/* Run journals (pipeline/results_journal.h): one JSON object per line, the header first.
 * A row line holds the row number, status, message, parameters, then its integers and reals
 * in a fixed order (row_ints / row_reals), which is all results.json and results.csv are
 * built from. */
#include "pipeline/results_journal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "core/outfile.h"
#include "pipeline/files.h"

struct av_journal {
  FILE *f;
  char path[1100];
  char header[2048];
  int64_t n_rows;
  av_results_t old;        /* rows journaled before this run, sorted by index */
  pthread_mutex_t mu;
};

/* --- the experiment hash (FNV-1a, 64 bits) ---------------------------------------- */

static void fnv(uint64_t *h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) *h = (*h ^ p[i]) * 1099511628211ull;
}

static void fnv_str(uint64_t *h, const char *s) { fnv(h, s, strlen(s) + 1); }

static void fnv_i64(uint64_t *h, int64_t v) { fnv(h, &v, sizeof v); }

static void fnv_json(uint64_t *h, json_t *v) {
  char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  if (t) fnv_str(h, t);
  free(t);
  json_decref(v);
}

uint64_t av_experiment_hash(const av_experiment_t *e) {
  uint64_t h = 14695981039346656037ull;
  fnv_str(&h, e->name);
  fnv_str(&h, av_sim_model_name(e->sim));
  if (e->launch != AV_LAUNCH_STREAMS) fnv_str(&h, av_launch_model_name(e->launch));
  if (e->kv_copy != AV_KV_COPY_TMA) fnv_str(&h, av_kv_copy_name(e->kv_copy));
  fnv_str(&h, e->cost_ops->name);
  fnv_json(&h, av_params_to_json(&e->cost_params));
  for (int g = 0; g < e->n_gpus; g++) {
    const av_gpu_t *x = &e->gpus[g];
    fnv_str(&h, x->name);
    fnv_i64(&h, x->sm_arch);
    fnv_i64(&h, x->sm_count);
    fnv_i64(&h, x->smem_per_sm_bytes);
    fnv_i64(&h, x->regs_per_sm);
    double bw[] = {x->hbm_bw_datasheet_GBps, x->hbm_bw_measured_GBps, x->l2_bytes,
                   x->l2_bw_GBps, x->mem_latency_ns};
    fnv(&h, bw, sizeof bw);
  }
  for (int s = 0; s < e->n_scheds; s++) {
    fnv_str(&h, e->scheds[s].label);
    fnv_str(&h, e->scheds[s].ops->name);
    fnv_json(&h, av_params_to_json(&e->scheds[s].params));
  }
  for (int b = 0; b < e->n_batches; b++) {
    const av_workload_t *w = e->batches[b].w;
    fnv_str(&h, e->batches[b].name);
    int64_t heads[] = {w->heads.hq, w->heads.hkv, w->heads.head_dim, w->heads.dtype,
                       w->n_nodes, w->n_requests};
    fnv(&h, heads, sizeof heads);
    for (int32_t u = 0; u < w->n_nodes; u++) {
      fnv_i64(&h, w->nodes[u].parent);
      fnv_i64(&h, w->nodes[u].kv_len_tokens);
    }
    fnv(&h, w->request_node, sizeof *w->request_node * (size_t)w->n_requests);
  }
  return h;
}

/* --- rows as lines -------------------------------------------------------------------- */

enum { N_INTS = 12, N_REALS = 17 };

static void row_ints(av_result_row_t *x, int64_t *v[N_INTS], int32_t *v32[N_INTS]) {
  int32_t *i32[] = {&x->ws.requests, &x->ws.nodes,     &x->ws.depth,        &x->ws.roots,
                    &x->ws.leaves,   &x->ps.items,     &x->ps.launches,     &x->ps.streams,
                    &x->ps.partial_slots};
  for (int k = 0; k < 9; k++) v32[k] = i32[k], v[k] = NULL;
  int64_t *i64[] = {&x->ws.unique_kv_tokens, &x->ws.query_centric_kv_tokens,
                    &x->ps.kv_tokens_read};
  for (int k = 0; k < 3; k++) v32[9 + k] = NULL, v[9 + k] = i64[k];
}

static void row_reals(av_result_row_t *x, double *v[N_REALS]) {
  double *d[] = {&x->ws.mean_share,      &x->ws.max_share,   &x->ws.unique_kv_bytes,
                 &x->ws.query_centric_kv_bytes, &x->ws.sharing_ratio, &x->ps.kv_bytes,
                 &x->ps.partial_bytes,   &x->floor.us,       &x->predicted_us,
                 &x->partial_us,         &x->merge_us,       &x->hbm_bytes,
                 &x->l2_bytes,           &x->achieved_bw_GBps, &x->bubble_frac,
                 &x->floor.mem_us,       &x->floor.compute_us};
  for (int k = 0; k < N_REALS; k++) v[k] = d[k];
}

/* One row line (no newline); caller frees. */
static char *row_line(const av_result_row_t *row) {
  av_result_row_t x = *row;
  int64_t *i64[N_INTS];
  int32_t *i32[N_INTS];
  double *d[N_REALS];
  row_ints(&x, i64, i32);
  row_reals(&x, d);
  json_t *ints = json_array(), *reals = json_array();
  for (int k = 0; k < N_INTS; k++) json_array_append_new(ints, json_integer(i64[k] ? *i64[k] : *i32[k]));
  for (int k = 0; k < N_REALS; k++) json_array_append_new(reals, json_real(*d[k]));
  json_t *o = json_pack("{s:I, s:i, s:s, s:s, s:o, s:o}", "row", (json_int_t)x.index, "status",
                        x.status, "error", x.error, "params", x.params, "i", ints, "d", reals);
  char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
              : NULL;
  json_decref(o);
  return t;
}

/* Parses a row line; 0 on success. */
static int row_parse(const json_t *o, av_result_row_t *x) {
  memset(x, 0, sizeof *x);
  const json_t *ints = json_object_get(o, "i"), *reals = json_object_get(o, "d");
  const char *error = json_string_value(json_object_get(o, "error"));
  const char *params = json_string_value(json_object_get(o, "params"));
  if (!json_is_integer(json_object_get(o, "row")) || !error || !params ||
      json_array_size(ints) != N_INTS || json_array_size(reals) != N_REALS)
    return -1;
  x->index = json_integer_value(json_object_get(o, "row"));
  x->status = (int)json_integer_value(json_object_get(o, "status"));
  snprintf(x->error, sizeof x->error, "%s", error);
  snprintf(x->params, sizeof x->params, "%s", params);
  int64_t *i64[N_INTS];
  int32_t *i32[N_INTS];
  double *d[N_REALS];
  row_ints(x, i64, i32);
  row_reals(x, d);
  for (int k = 0; k < N_INTS; k++) {
    const json_t *v = json_array_get(ints, (size_t)k);
    if (!json_is_integer(v)) return -1;
    if (i64[k]) *i64[k] = json_integer_value(v);
    else *i32[k] = (int32_t)json_integer_value(v);
  }
  for (int k = 0; k < N_REALS; k++) {
    const json_t *v = json_array_get(reals, (size_t)k);
    if (!json_is_number(v)) return -1;
    *d[k] = json_number_value(v);
  }
  return 0;
}

/* --- reading ---------------------------------------------------------------------- */

/* The row layout of the journal lines: 2 added the floor's two parts (floor_mem_us,
 * floor_compute_us) to the reals. */
enum { JOURNAL_FORMAT = 2 };

static int parse_header(const json_t *o, const char *path, av_journal_info_t *info,
                        av_error_t *err) {
  const char *hash = json_string_value(json_object_get(o, "hash"));
  const char *name = json_string_value(json_object_get(o, "experiment"));
  const char *source = json_string_value(json_object_get(o, "source"));
  const char *shard = json_string_value(json_object_get(o, "shard"));
  const json_t *rows = json_object_get(o, "rows");
  memset(info, 0, sizeof *info);
  if (!json_is_integer(json_object_get(o, "anvil_journal")) || !hash || !name || !source ||
      !shard || !json_is_integer(rows) ||
      sscanf(hash, "%" SCNx64, &info->hash) != 1 ||
      sscanf(shard, "%d/%d", &info->shard_index, &info->shard_count) != 2)
    return av_error_set(err, AV_ERR_SCHEMA, path, "line 1",
                        "not an anvil journal header (expected {\"anvil_journal\": 2, "
                        "\"experiment\", \"hash\", \"shard\", \"rows\", ...})");
  const json_int_t format = json_integer_value(json_object_get(o, "anvil_journal"));
  if (format != JOURNAL_FORMAT)
    return av_error_set(err, AV_ERR_MISMATCH, path, "line 1",
                        "journal format %" JSON_INTEGER_FORMAT " was written by another version "
                        "of anvil, which this one (format %d) cannot read; run its rows again with "
                        "this version",
                        format, JOURNAL_FORMAT);
  snprintf(info->experiment, sizeof info->experiment, "%s", name);
  snprintf(info->source, sizeof info->source, "%s", source);
  info->rows = json_integer_value(rows);
  return AV_OK;
}

/* Reads every line; a last line without its newline (cut by a kill) is dropped. */
int av_journal_read(const char *path, av_journal_info_t *info, av_results_t *rows,
                    av_error_t *err) {
  char *text = av_file_read(path, err);
  if (!text) return err && err->code ? err->code : AV_ERR_IO;
  int rc = AV_OK, line = 0;
  char *p = text;
  while (!rc && *p) {
    char *nl = strchr(p, '\n');
    if (!nl) break;
    *nl = '\0';
    line++;
    json_error_t je;
    json_t *o = json_loads(p, 0, &je);
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    if (!o) {
      char text[JSON_ERROR_TEXT_LENGTH];
      av_json_error_text(&je, text, sizeof text);
      rc = av_error_set(err, AV_ERR_PARSE, path, where, "%s", text);
    } else if (line == 1) {
      rc = parse_header(o, path, info, err);
    } else {
      av_result_row_t *x = av_results_add(rows);
      if (!x) rc = av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
      else if (row_parse(o, x) != 0 || x->index < 0 || x->index >= info->rows)
        rc = av_error_set(err, AV_ERR_SCHEMA, path, where, "not a row of this journal");
    }
    json_decref(o);
    p = nl + 1;
  }
  if (!rc && line == 0)
    rc = av_error_set(err, AV_ERR_SCHEMA, path, NULL, "empty journal (no header line)");
  free(text);
  return rc;
}

/* --- writing ---------------------------------------------------------------------- */

static int by_index(const void *a, const void *b) {
  const av_result_row_t *x = a, *y = b;
  return (x->index > y->index) - (x->index < y->index);
}

/* Writes header + rows (sorted) to path through a temporary file, then reopens it for
 * appending. */
static int rewrite(av_journal_t *j, const av_results_t *r, av_error_t *err) {
  if (j->f) fclose(j->f);
  j->f = NULL;
  av_outfile_t o;
  int rc = av_outfile_open(&o, j->path, err);
  if (rc) return rc;
  int bad = fprintf(o.f, "%s\n", j->header) < 0;
  for (int i = 0; !bad && i < r->n; i++) {
    char *t = row_line(&r->rows[i]);
    bad = !t || fprintf(o.f, "%s\n", t) < 0;
    free(t);
  }
  rc = bad ? av_outfile_fail(&o, err) : av_outfile_commit(&o, 0, err);
  if (rc) return rc;
  j->f = av_outfile_append(j->path);
  if (!j->f)
    return av_error_set(err, AV_ERR_IO, j->path, NULL, "cannot append to the journal: %s",
                        strerror(errno));
  return AV_OK;
}

/* The journal at path must be this experiment's and shard's. */
static int check_resumable(const av_journal_info_t *in, const av_journal_info_t *want,
                           const char *path, av_error_t *err) {
  if (in->hash != want->hash)
    return av_error_set(err, AV_ERR_MISMATCH, path, NULL,
                        "this journal is of another experiment ('%s' from %s, hash %016" PRIx64
                        "), not of '%s' (hash %016" PRIx64 "); resume only the run that "
                        "wrote it, or run without --resume",
                        in->experiment, in->source, in->hash, want->experiment, want->hash);
  if (in->shard_index != want->shard_index || in->shard_count != want->shard_count)
    return av_error_set(err, AV_ERR_MISMATCH, path, NULL,
                        "this journal is of shard %d/%d, not %d/%d; resume with the same "
                        "--shard",
                        in->shard_index, in->shard_count, want->shard_index, want->shard_count);
  return AV_OK;
}

int av_journal_open(const char *path, const av_experiment_t *e, int shard_index,
                    int shard_count, int resume, av_journal_t **out, av_error_t *err) {
  *out = NULL;
  av_journal_t *j = calloc(1, sizeof *j);
  if (!j) return av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  pthread_mutex_init(&j->mu, NULL);
  snprintf(j->path, sizeof j->path, "%s", path);
  j->n_rows = av_results_row_count(e);
  av_journal_info_t want = {.hash = av_experiment_hash(e), .shard_index = shard_index,
                            .shard_count = shard_count, .rows = j->n_rows};
  snprintf(want.experiment, sizeof want.experiment, "%s", e->name);
  json_t *h = json_pack("{s:i, s:s, s:s, s:s, s:s, s:I}", "anvil_journal", JOURNAL_FORMAT, "experiment",
                        e->name, "source", e->path, "hash", "", "shard", "", "rows",
                        (json_int_t)j->n_rows);
  char buf[64];
  snprintf(buf, sizeof buf, "%016" PRIx64, want.hash);
  json_object_set_new(h, "hash", json_string(buf));
  snprintf(buf, sizeof buf, "%d/%d", shard_index, shard_count);
  json_object_set_new(h, "shard", json_string(buf));
  char *ht = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
  snprintf(j->header, sizeof j->header, "%s", ht ? ht : "");
  free(ht);
  json_decref(h);
  int rc = AV_OK;
  FILE *probe = resume ? fopen(path, "rb") : NULL;
  if (probe) {
    fclose(probe);
    av_journal_info_t in;
    rc = av_journal_read(path, &in, &j->old, err);
    if (!rc) rc = check_resumable(&in, &want, path, err);
    if (!rc) qsort(j->old.rows, (size_t)j->old.n, sizeof *j->old.rows, by_index);
    /* a row journaled twice (a kill between a row's line and the next) keeps one copy */
    int kept = 0;
    for (int i = 0; !rc && i < j->old.n; i++)
      if (!kept || j->old.rows[kept - 1].index != j->old.rows[i].index)
        j->old.rows[kept++] = j->old.rows[i];
    j->old.n = kept;
  }
  if (!rc) rc = rewrite(j, &j->old, err);
  if (rc) {
    av_journal_close(j);
    return rc;
  }
  *out = j;
  return AV_OK;
}

int64_t av_journal_resumed(const av_journal_t *j) { return j ? j->old.n : 0; }

int av_journal_get(const av_journal_t *j, int64_t index, av_result_row_t *row) {
  if (!j || !j->old.n) return 0;
  av_result_row_t key = {.index = index};
  const av_result_row_t *hit =
      bsearch(&key, j->old.rows, (size_t)j->old.n, sizeof key, by_index);
  if (hit) *row = *hit;
  return hit != NULL;
}

int av_journal_append(av_journal_t *j, const av_result_row_t *row, av_error_t *err) {
  char *t = row_line(row);
  if (!t) return av_error_set(err, AV_ERR_NOMEM, j->path, NULL, "out of memory");
  pthread_mutex_lock(&j->mu);
  int bad = fprintf(j->f, "%s\n", t) < 0 || fflush(j->f) != 0;
  pthread_mutex_unlock(&j->mu);
  free(t);
  if (bad)
    return av_error_set(err, AV_ERR_IO, j->path, NULL, "cannot append to the journal: %s",
                        strerror(errno));
  return AV_OK;
}

int av_journal_finish(av_journal_t *j, const av_results_t *r, av_error_t *err) {
  return rewrite(j, r, err);
}

void av_journal_close(av_journal_t *j) {
  if (!j) return;
  if (j->f) fclose(j->f);
  pthread_mutex_destroy(&j->mu);
  av_results_free(&j->old);
  free(j);
}
