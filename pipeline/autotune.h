/* `anvil exec --autotune K` (docs/validation.md#auto-by-measurement): `auto` ranks its
 * candidates with the simulator; the K predicted fastest are each run once on the GPU and the
 * fastest measured is kept. Where the model's error is larger than the gaps between the best
 * candidates, measuring a few of them decides what the model cannot. A cache file keeps each
 * batch shape's winner (per GPU spec, workload hash and launch model), so a shape seen before
 * is planned without measuring. */
#ifndef AV_AUTOTUNE_H
#define AV_AUTOTUNE_H

#include <jansson.h>

#include "executor/executor.h"
#include "selectors/auto.h"

#define AV_AUTOTUNE_MAX_K 16

typedef struct av_autotune_cache {
  char path[1024];                 /* the file; "" for none */
  json_t *entries;                 /* [{gpu, workload_hash, launch, chose}] */
  int dirty;                       /* entries were added */
} av_autotune_cache_t;

/* Opens path (NULL: no cache): an existing file is read and checked (format, every entry's
 * keys and types; a bad one is AV_ERR_SCHEMA naming the file and key path); a missing one
 * starts empty. The file's directory must be writable (checked now, before any GPU work). */
int av_autotune_cache_open(const char *path, av_autotune_cache_t *c, av_error_t *err);
/* Writes the cache (atomically) when entries were added. */
int av_autotune_cache_save(av_autotune_cache_t *c, av_error_t *err);
void av_autotune_cache_close(av_autotune_cache_t *c);

typedef struct av_autotune_result {
  int k;                           /* candidates measured (0 when the cache decided) */
  int from_cache;
  char chose[96];
  int n;                           /* ranked candidates reported (at most AV_AUTOTUNE_MAX_K) */
  av_auto_candidate_t cand[AV_AUTOTUNE_MAX_K];
  double measured_us[AV_AUTOTUNE_MAX_K]; /* median of eo->repeats runs; 0 when not measured */
} av_autotune_result_t;

/* How to tune: auto's parameters (NULL: its defaults), the candidates to measure, the
 * measurement's warm-up, repeats and L2 flush, and the cache of past winners. */
typedef struct av_autotune_opts {
  const av_params_t *auto_params;
  int k;
  const av_exec_opts_t *eo;
  av_autotune_cache_t *cache;
} av_autotune_opts_t;

/* The tuned plan of ctx's batch (on GPU spec ctx->gpu, batch b on the device): ranked by
 * auto with o->auto_params, o->cache consulted, else the o->k predicted fastest measured with
 * o->eo (not verified: the caller verifies the plan it runs). The plan is auto's ("auto"),
 * its parameters the verdict: the winner, k, and each measured candidate's time. */
int av_autotune(av_exec_batch_t *b, const av_sched_ctx_t *ctx, const av_autotune_opts_t *o,
                av_autotune_result_t *res, av_plan_t **out, av_error_t *err);

#endif
