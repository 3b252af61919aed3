/* Bounds on the work one experiment may ask for: defaults, the checks of a built batch, and
 * the memory estimate (docs/reliability.md#limits). */
#include "core/limits.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/plan.h"

const char *const av_limits_keys[] = {
#define AV_X_KEY(key, def, what) #key,
    AV_LIMITS(AV_X_KEY)
#undef AV_X_KEY
        NULL};

void av_limits_default(av_limits_t *l) {
#define AV_X_DEF(key, def, what) l->key = (def);
  AV_LIMITS(AV_X_DEF)
#undef AV_X_DEF
}

int64_t *av_limits_field(av_limits_t *l, const char *key) {
#define AV_X_FIND(k, def, what) \
  if (strcmp(key, #k) == 0) return &l->k;
  AV_LIMITS(AV_X_FIND)
#undef AV_X_FIND
  return NULL;
}

/* Where a workload over its limits was read and how to lift them: the file, the JSON path,
 * the batch's name and the advice to print (NULL: name the limits key to raise). */
typedef struct {
  const char *source, *path, *batch, *raise;
} batch_at_t;

static int over(const batch_at_t *at, const char *key, const char *what, int64_t value,
                int64_t limit, av_error_t *err) {
  const char *source = at->source, *path = at->path, *batch = at->batch, *raise = at->raise;
  if (raise)
    return av_error_set(err, AV_ERR_RANGE, source, path,
                        "batch '%s' has %lld %s, over the limit of %lld (limits.%s); %s", batch,
                        (long long)value, what, (long long)limit, key, raise);
  return av_error_set(err, AV_ERR_RANGE, source, path,
                      "batch '%s' has %lld %s, over the limit of %lld (limits.%s); raise it "
                      "with \"limits\": {\"%s\": N} if you mean it",
                      batch, (long long)value, what, (long long)limit, key, key);
}

int64_t av_limits_workload_bytes(const av_workload_t *w) {
  int64_t share_sum = w->node_req_offsets ? w->node_req_offsets[w->n_nodes] : 0;
  return (int64_t)w->n_nodes * (int64_t)(sizeof(av_node_t) + sizeof(int32_t)) +
         (int64_t)w->n_requests * (int64_t)(sizeof(int32_t) + sizeof(int64_t)) +
         share_sum * (int64_t)sizeof(int32_t);
}

/* Per item: the item, a few segments and queries, the checker's coverage records and the
 * simulator's per-item arrays; a generous constant rather than a count (the estimate only
 * has to separate studies that fit from files that cannot). */
int64_t av_limits_plan_bytes(const av_workload_t *w, int64_t items, int64_t pieces) {
  const int64_t per_item = (int64_t)(sizeof(av_item_t) + 4 * sizeof(av_segment_t)) + 160;
  const int64_t per_piece = 64;  /* a coverage record, and its copy in the merge sort */
  if (pieces > INT64_MAX / 4 / per_piece) return INT64_MAX / 4;
  return items * per_item + pieces * per_piece + (int64_t)w->n_requests * w->max_depth * 16;
}

int64_t av_limits_path_pairs(const av_workload_t *w) {
  return w->node_req_offsets ? w->node_req_offsets[w->n_nodes] : 0;
}

int64_t av_limits_work_units(const av_workload_t *w, int64_t pieces) {
  const int64_t hkv = w->heads.hkv > 0 ? w->heads.hkv : 1;
  if (pieces <= 0) return 0;
  return pieces > INT64_MAX / hkv ? INT64_MAX : pieces * hkv;
}

int av_limits_check_work(const av_limits_t *l, int64_t units, const char *who,
                         const char *what, const char *source, const char *path,
                         const char *raise, av_error_t *err) {
  if (units <= l->work_units) return AV_OK;
  char how[160];
  if (!raise) {
    snprintf(how, sizeof how, "raise it with \"limits\": {\"work_units\": N} if you mean it");
    raise = how;
  }
  return av_error_set(err, AV_ERR_RANGE, source, path,
                      "%s on %s needs about %lld work units (KV heads x plan pieces), over the "
                      "limit of %lld (limits.work_units); %s",
                      who, what, (long long)units, (long long)l->work_units, raise);
}

int av_limits_check_workload(const av_limits_t *l, const av_workload_t *w, const char *batch,
                             const char *source, const char *path, const char *raise,
                             av_error_t *err) {
  const batch_at_t at = {source, path, batch, raise};
  if (w->n_requests > l->requests)
    return over(&at, "requests", "requests", w->n_requests, l->requests, err);
  int64_t longest = 0, attended = 0, path_max = 0;
  for (int32_t u = 0; u < w->n_nodes; u++)
    if (w->nodes[u].kv_len_tokens > longest) longest = w->nodes[u].kv_len_tokens;
  if (longest > l->node_tokens)
    return over(&at, "node_tokens", "KV tokens in one node", longest, l->node_tokens, err);
  for (int32_t r = 0; r < w->n_requests; r++) {
    const int64_t t = w->request_kv_tokens[r];
    if (t > path_max) path_max = t;
    attended += t;  /* each path <= 2^40 and requests <= 2^20: no overflow */
  }
  if (path_max > l->request_tokens)
    return over(&at, "request_tokens", "KV tokens on one request's path", path_max,
                l->request_tokens, err);
  if (attended > l->attended_tokens)
    return over(&at, "attended_tokens", "KV tokens attended in all", attended, l->attended_tokens,
                err);
  const int64_t bytes = av_limits_workload_bytes(w);
  if (bytes > l->memory_bytes)
    return over(&at, "memory_bytes", "bytes of workload", bytes, l->memory_bytes, err);
  return AV_OK;
}
