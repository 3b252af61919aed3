/* anvil_exec: the GPU executor (executor/executor.h) behind the public API. */
#include <string.h>

#include "api/api_internal.h"
#include "executor/executor.h"

int anvil_exec(const anvil_plan_t *p, uint64_t seed, int repeats, anvil_exec_result_t *out,
               anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  memset(out, 0, sizeof *out);
  av_exec_opts_t o;
  av_exec_opts_default(&o);
  if (repeats > 0) o.repeats = repeats;
  av_exec_result_t r;
  memset(&r, 0, sizeof r);
  int rc = av_exec_available(&e);
  if (!rc) {
    av_exec_batch_t *b = av_exec_batch_create(p->w->w, seed, 0, &e);
    rc = b ? av_exec_batch_run(b, av__api_plan_settled(p), &o, &r, &e) : e.code ? e.code : AV_ERR_INTERNAL;
    av_exec_batch_destroy(b);
  }
  if (!rc)
    *out = (anvil_exec_result_t){.median_us = r.median_us, .min_us = r.min_us,
                                 .max_us = r.max_us, .verified = r.verified,
                                 .max_rel_err = r.max_rel_err,
                                 .deterministic = r.deterministic};
  av_exec_result_free(&r);
  return av__api_error(err, &e, rc);
}
