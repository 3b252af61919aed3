/* Bounds on the work one experiment may ask for (docs/reliability.md#limits). A small, valid
 * file can describe a batch whose plan or simulation would run for hours or exhaust memory;
 * these limits are checked on every built batch before any row is planned, and a batch over
 * one is bad input (exit 1) naming the key path, the value and the limit. An experiment
 * raises (or lowers) them with its "limits" object. */
#ifndef AV_CORE_LIMITS_H
#define AV_CORE_LIMITS_H

#include <stdint.h>

#include "core/error.h"
#include "core/workload.h"

#define AV_LIMITS(X)                                                                  \
  /* key,           default,              what is counted */                          \
  X(requests, (int64_t)1 << 16, "requests in one batch")                             \
  X(node_tokens, (int64_t)1 << 22, "KV tokens in one tree node")                     \
  X(request_tokens, (int64_t)1 << 22, "KV tokens on one request's path")             \
  X(attended_tokens, (int64_t)1 << 30, "KV tokens attended by one batch's requests") \
  X(plan_items, (int64_t)1 << 22, "work items in one plan")                          \
  X(work_units, (int64_t)1 << 22, "estimated work of one row: KV heads x plan pieces") \
  X(memory_bytes, (int64_t)8 << 30, "estimated bytes to plan and simulate one row")

typedef struct av_limits {
#define AV_X_FIELD(key, def, what) int64_t key;
  AV_LIMITS(AV_X_FIELD)
#undef AV_X_FIELD
} av_limits_t;

/* The documented defaults. */
void av_limits_default(av_limits_t *l);
/* Key names, in order, NULL-terminated (the "limits" object's keys). */
extern const char *const av_limits_keys[];
/* Pointer to the field named `key`, or NULL. */
int64_t *av_limits_field(av_limits_t *l, const char *key);

/* Checks one built batch against the limits: requests, node and path lengths, attended
 * tokens and its own size. `source` and `path` (a key path like "workloads[2]") locate the
 * batch in messages; `batch` names it; `raise` says how to raise a limit (NULL: the
 * experiment's "limits" object). */
int av_limits_check_workload(const av_limits_t *l, const av_workload_t *w, const char *batch,
                             const char *source, const char *path, const char *raise,
                             av_error_t *err);
/* Bytes a workload's arrays take, and an estimate of a plan of `items` work items and
 * `pieces` (request, node, token range) pieces over it (items, their segments, the checker's
 * coverage records and their sort, and the simulator's per-item state). */
int64_t av_limits_workload_bytes(const av_workload_t *w);
int64_t av_limits_plan_bytes(const av_workload_t *w, int64_t items, int64_t pieces);

/* The (request, node) pairs of a batch: the nodes on every request's KV path, summed. Every
 * exact plan has at least one (request, node, token range) piece per pair; the checker sorts
 * the pieces and the simulator walks each item's segments once per KV head. */
int64_t av_limits_path_pairs(const av_workload_t *w);
/* Work units of a plan of `pieces` pieces over w: pieces x KV heads (saturating), what
 * limits.work_units bounds. */
int64_t av_limits_work_units(const av_workload_t *w, int64_t pieces);
/* Fails when `units`, the work of scheduler `who` on `what` ("batch 'levels-0'", "all 20
 * steps"), is over limits.work_units; source, path and raise as for
 * av_limits_check_workload. */
int av_limits_check_work(const av_limits_t *l, int64_t units, const char *who,
                         const char *what, const char *source, const char *path,
                         const char *raise, av_error_t *err);

#endif
