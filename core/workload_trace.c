/* JSONL traces: one workload spec per line, one line per decode step (DESIGN §Simulator,
 * trace-driven mode). Errors name the line: `trace.jsonl:7:12` for syntax, `trace.jsonl:7`
 * plus the key path for content. Blank lines are skipped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "core/workload.h"

#define AV_TRACE_MAX_STEPS (1 << 20)

struct av_trace {
  int32_t n, cap;
  av_workload_t **steps;
};

void av_trace_destroy(av_trace_t *t) {
  if (!t) return;
  for (int32_t i = 0; i < t->n; i++) av_workload_destroy(t->steps[i]);
  free(t->steps);
  free(t);
}

static int blank(const char *s) {
  for (; *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return 0;
  return 1;
}

/* Parses one line into a workload appended to t. */
static int load_line(av_trace_t *t, const char *line, const char *path, long lineno,
                     const av_heads_t *heads, av_error_t *err) {
  char src[512];
  json_error_t je;
  json_t *spec = json_loads(line, JSON_REJECT_DUPLICATES, &je);
  if (!spec) {
    char text[JSON_ERROR_TEXT_LENGTH];
    av_json_error_text(&je, text, sizeof text);
    snprintf(src, sizeof src, "%s:%ld:%d", path, lineno, je.column);
    return av_error_set(err, AV_ERR_PARSE, src, NULL, "%s", text);
  }
  snprintf(src, sizeof src, "%s:%ld", path, lineno);
  av_jctx_t c = {.source = src, .err = err};
  av_workload_t *w = av_workload_from_json(spec, heads, &c, "");
  json_decref(spec);
  if (!w) return err && err->code ? err->code : AV_ERR_SCHEMA;
  if (t->n == t->cap) {
    int32_t cap = t->cap ? 2 * t->cap : 16;
    av_workload_t **s = realloc(t->steps, (size_t)cap * sizeof *s);
    if (!s) {
      av_workload_destroy(w);
      return av_error_set(err, AV_ERR_NOMEM, src, NULL, "out of memory");
    }
    t->steps = s;
    t->cap = cap;
  }
  t->steps[t->n++] = w;
  return AV_OK;
}

av_trace_t *av_trace_load(const char *path, const av_heads_t *default_heads, av_error_t *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    av_error_set(err, AV_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
    return NULL;
  }
  av_trace_t *t = calloc(1, sizeof *t);
  char *line = NULL;
  size_t size = 0;
  long lineno = 0;
  int rc = t ? AV_OK : av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  ssize_t got;
  while (!rc && (got = getline(&line, &size, f)) != -1) {
    lineno++;
    /* a NUL would end the line early for every string function below: the bytes after it
     * (or the whole line, when it comes first) would be skipped without a word */
    const char *nul = memchr(line, '\0', (size_t)got);
    if (nul) {
      char src[512];
      snprintf(src, sizeof src, "%s:%ld:%ld", path, lineno, (long)(nul - line) + 1);
      rc = av_error_set(err, AV_ERR_PARSE, src, NULL,
                        "a NUL byte; expected one JSON workload spec per line of text");
      break;
    }
    if (blank(line)) continue;
    if (t->n >= AV_TRACE_MAX_STEPS)
      rc = av_error_set(err, AV_ERR_RANGE, path, NULL,
                        "more than %d batches; at most %d are supported", AV_TRACE_MAX_STEPS,
                        AV_TRACE_MAX_STEPS);
    else
      rc = load_line(t, line, path, lineno, default_heads, err);
  }
  if (!rc && ferror(f))
    rc = av_error_set(err, AV_ERR_IO, path, NULL, "read error: %s", strerror(errno));
  if (!rc && t->n == 0)
    rc = av_error_set(err, AV_ERR_SCHEMA, path, NULL,
                      "empty trace: no batches; expected one workload spec per line");
  free(line);
  fclose(f);
  if (rc) {
    av_trace_destroy(t);
    return NULL;
  }
  return t;
}

int32_t av_trace_steps(const av_trace_t *t) { return t ? t->n : 0; }

const av_workload_t *av_trace_step(const av_trace_t *t, int32_t i) {
  return t && i >= 0 && i < t->n ? t->steps[i] : NULL;
}
