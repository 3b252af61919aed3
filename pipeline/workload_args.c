/* A batch as a command names it (pipeline/workload_args.h): a workload spec file, or the
 * B/L notation of --levels turned into the spec of a levels workload. */
#include "pipeline/workload_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"

/* One comma-separated list of integers, appended to arr. */
static int int_list(const char *text, size_t len, const char *key, json_t *arr,
                    av_error_t *err) {
  char buf[1024];
  if (len == 0 || len >= sizeof buf)
    return av_error_set(err, AV_ERR_USAGE, "--levels", key,
                        "expected a comma-separated list of integers such as %s=1,4", key);
  memcpy(buf, text, len);
  buf[len] = '\0';
  char *p = buf;
  for (size_t idx = 0;; idx++) {
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || (*end != ',' && *end != '\0') || errno == ERANGE) {
      char where[64];
      snprintf(where, sizeof where, "%s[%zu]", key, idx);
      return av_error_set(err, errno == ERANGE ? AV_ERR_RANGE : AV_ERR_USAGE, "--levels",
                          where, "'%s' is not an integer (or does not fit 64 bits)", p);
    }
    json_array_append_new(arr, json_integer(x));
    if (*end == '\0') break;
    p = end + 1;
  }
  return AV_OK;
}

/* The JSON spec of a levels workload from "B=1,4 L=128,32" (spaces or ';' separate the two
 * lists). The workload builder validates the numbers; this only checks the syntax. Caller
 * owns the result. */
static int levels_spec(const char *text, json_t **out, av_error_t *err) {
  *out = NULL;
  json_t *spec = json_pack("{s:s}", "kind", "levels");
  json_t *lists[2] = {json_array(), json_array()};
  int seen[2] = {0, 0};
  int rc = AV_OK;
  const char *p = text;
  while (rc == AV_OK && *p) {
    while (*p == ' ' || *p == ';' || *p == '\t') p++;
    if (!*p) break;
    size_t len = strcspn(p, " ;\t");
    int which = (p[0] == 'B' || p[0] == 'b') ? 0 : (p[0] == 'L' || p[0] == 'l') ? 1 : -1;
    if (which < 0 || len < 2 || p[1] != '=') {
      rc = av_error_set(err, AV_ERR_USAGE, "--levels", NULL,
                        "'%.*s' is not understood; expected \"B=1,4 L=128,32\"", (int)len, p);
      break;
    }
    const char *key = which ? "L" : "B";
    if (seen[which]++)
      rc = av_error_set(err, AV_ERR_USAGE, "--levels", key, "%s is given twice", key);
    else
      rc = int_list(p + 2, len - 2, key, lists[which], err);
    p += len;
  }
  if (rc == AV_OK && (!seen[0] || !seen[1]))
    rc = av_error_set(err, AV_ERR_USAGE, "--levels", seen[0] ? "L" : "B",
                      "missing; expected both lists, as in \"B=1,4 L=128,32\"");
  if (rc == AV_OK) {
    json_object_set(spec, "B", lists[0]);
    json_object_set(spec, "L", lists[1]);
    *out = spec;
    spec = NULL;
  }
  json_decref(lists[0]);
  json_decref(lists[1]);
  json_decref(spec);
  return rc;
}

int av_workload_args_load(const char *cmd, const char *spec_path, const char *levels,
                         const av_heads_t *defaults, av_workload_t **out, av_error_t *err) {
  *out = NULL;
  if (!!spec_path == !!levels)
    return av_error_set(err, AV_ERR_USAGE, cmd, NULL,
                        "give the batch either as a workload spec file or with --levels "
                        "(exactly one)");
  json_t *spec = NULL;
  int rc = spec_path ? av_json_load_file(spec_path, &spec, err)
                     : levels_spec(levels, &spec, err);
  if (rc) return rc;
  av_jctx_t c = {.source = spec_path ? spec_path : "--levels", .err = err};
  rc = av_json_expect_object(&c, spec, "");
  if (rc == AV_OK) {
    *out = av_workload_from_json(spec, defaults, &c, "");
    if (!*out) rc = err && err->code ? err->code : AV_ERR_INTERNAL;
  }
  json_decref(spec);
  return rc;
}

