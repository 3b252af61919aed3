/* `anvil exec --autotune K` (pipeline/autotune.h): auto's K predicted fastest candidates
 * measured once, the fastest kept, and each batch shape's winner cached. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json_util.h"
#include "pipeline/autotune.h"
#include "pipeline/results_dir.h"

#define FORMAT "anvil-autotune-1"

static const char *const k_top[] = {"format", "entries", NULL};
static const char *const k_entry[] = {"gpu", "workload_hash", "launch", "chose", NULL};

static int schema_code(const av_jctx_t *c) {
  return c->err && c->err->code ? c->err->code : AV_ERR_SCHEMA;
}

static int check_doc(const av_jctx_t *c, json_t *doc) {
  const char *format, *s;
  if (av_json_expect_object(c, doc, "") || av_json_check_keys(c, doc, "", k_top) ||
      av_json_get_string(c, doc, "", "format", 1, NULL, &format))
    return schema_code(c);
  if (strcmp(format, FORMAT) != 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "format",
                        "'%s' is not an autotune cache; expected \"" FORMAT "\"", format);
  json_t *entries = json_object_get(doc, "entries");
  if (!entries)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "entries",
                        "missing required key 'entries'");
  if (av_json_expect_array(c, entries, "entries")) return schema_code(c);
  for (size_t i = 0; i < json_array_size(entries); i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "entries", i);
    const json_t *e = json_array_get(entries, i);
    if (av_json_expect_object(c, e, where) || av_json_check_keys(c, e, where, k_entry))
      return schema_code(c);
    for (int k = 0; k_entry[k]; k++)
      if (av_json_get_string(c, e, where, k_entry[k], 1, NULL, &s)) return schema_code(c);
  }
  return AV_OK;
}

int av_autotune_cache_open(const char *path, av_autotune_cache_t *c, av_error_t *err) {
  memset(c, 0, sizeof *c);
  if (!path) return AV_OK;
  int rc = av_path_check_writable("exec", path, "--autotune-cache", err);
  if (rc) return rc;
  snprintf(c->path, sizeof c->path, "%s", path);
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno != ENOENT)
      return av_error_set(err, AV_ERR_IO, path, NULL, "cannot read: %s", strerror(errno));
    c->entries = json_array();
    return c->entries ? AV_OK : av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
  }
  json_t *doc = NULL;
  rc = av_json_load_file(path, &doc, err);
  av_jctx_t jc = {.source = path, .err = err};
  if (!rc) rc = check_doc(&jc, doc);
  if (!rc) c->entries = json_incref(json_object_get(doc, "entries"));
  json_decref(doc);
  return rc;
}

int av_autotune_cache_save(av_autotune_cache_t *c, av_error_t *err) {
  if (!c->path[0] || !c->dirty) return AV_OK;
  json_t *doc = json_pack("{s:s, s:O}", "format", FORMAT, "entries", c->entries);
  int rc = doc ? av_json_dump_file(doc, c->path, err)
               : av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
  json_decref(doc);
  if (!rc) c->dirty = 0;
  return rc;
}

void av_autotune_cache_close(av_autotune_cache_t *c) {
  json_decref(c->entries);
  memset(c, 0, sizeof *c);
}

/* The cache's winner for this key, or NULL. */
static const char *cache_find(const av_autotune_cache_t *c, const char *gpu, const char *hash,
                              const char *launch) {
  size_t i;
  json_t *e;
  json_array_foreach(c->entries, i, e) {
    if (!strcmp(json_string_value(json_object_get(e, "gpu")), gpu) &&
        !strcmp(json_string_value(json_object_get(e, "workload_hash")), hash) &&
        !strcmp(json_string_value(json_object_get(e, "launch")), launch))
      return json_string_value(json_object_get(e, "chose"));
  }
  return NULL;
}

static int cache_put(av_autotune_cache_t *c, const char *gpu, const char *hash,
                     const char *launch, const char *chose) {
  if (!c->entries) return 0;
  c->dirty = 1;
  return json_array_append_new(c->entries, json_pack("{s:s, s:s, s:s, s:s}", "gpu", gpu,
                                                     "workload_hash", hash, "launch", launch,
                                                     "chose", chose));
}

/* The first k candidates planned and timed together, their repeats interleaved
 * (av_exec_batch_time; median of eo's repeats, not verified). */
static int measure(av_exec_batch_t *b, const av_sched_ctx_t *ctx, const av_auto_candidate_t *c,
                   int k, const av_exec_opts_t *eo, double *us, av_error_t *err) {
  av_plan_t *p[AV_AUTOTUNE_MAX_K] = {0};
  av_exec_result_t r[AV_AUTOTUNE_MAX_K];
  int rc = AV_OK;
  for (int i = 0; i < k && !rc; i++)
    rc = av_auto_plan_candidate(ctx, &c[i], "autotune candidate", &p[i], err);
  av_exec_opts_t o = *eo;
  if (o.repeats < 1) o.repeats = 20;
  if (!rc) rc = av_exec_batch_time(b, (const av_plan_t *const *)p, k, &o, r, err);
  for (int i = 0; i < k && !rc; i++) us[i] = r[i].median_us;
  for (int i = 0; i < k; i++) av_plan_destroy(p[i]);
  return rc;
}

/* The verdict the tuned plan records: the winner, how it was decided, what was measured. */
static void verdict(const av_autotune_result_t *res, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "chose=%s,autotune=%d%s", res->chose, res->k,
                                 res->from_cache ? ",from=cache" : "");
  for (int i = 0; i < res->k && used < n; i++)
    used += (size_t)snprintf(out + used, n - used, "%s%s:%.1f", i ? "/" : ",measured=",
                             res->cand[i].name, res->measured_us[i]);
}

int av_autotune(av_exec_batch_t *b, const av_sched_ctx_t *ctx, const av_autotune_opts_t *o,
                av_autotune_result_t *res, av_plan_t **out, av_error_t *err) {
  const av_params_t *auto_params = o->auto_params;
  const int k = o->k;
  const av_exec_opts_t *eo = o->eo;
  av_autotune_cache_t *cache = o->cache;
  *out = NULL;
  memset(res, 0, sizeof *res);
  int rc = av_auto_rank(ctx, auto_params, res->cand, AV_AUTOTUNE_MAX_K, &res->n, err);
  if (rc) return rc;
  char hash[17];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)av_workload_hash(ctx->workload));
  const char *launch = av_launch_model_name(ctx->launch_model);
  const char *known = cache->entries ? cache_find(cache, ctx->gpu->name, hash, launch) : NULL;
  int pick = -1;
  for (int i = 0; known && i < res->n; i++)
    if (!strcmp(res->cand[i].name, known)) pick = i;
  res->from_cache = pick >= 0;
  if (pick < 0) {
    res->k = k < res->n ? k : res->n;
    pick = 0;
    rc = measure(b, ctx, res->cand, res->k, eo, res->measured_us, err);
    /* strictly faster replaces: a tie keeps the one predicted faster */
    for (int i = 1; i < res->k && !rc; i++)
      if (res->measured_us[i] < res->measured_us[pick]) pick = i;
    if (!rc && cache_put(cache, ctx->gpu->name, hash, launch, res->cand[pick].name))
      rc = av_error_set(err, AV_ERR_NOMEM, "exec", NULL, "out of memory");
  }
  if (rc) return rc;
  snprintf(res->chose, sizeof res->chose, "%s", res->cand[pick].name);
  char why[256];
  verdict(res, why, sizeof why);
  return av_auto_plan_candidate(ctx, &res->cand[pick], why, out, err);
}
