/* anvil_plan_file: planning a batch into a file (pipeline/plan_file.h) behind the public
 * API. */
#include "anvil/plan_file.h"

#include <string.h>

#include "api/api_internal.h"
#include "pipeline/plan_file.h"

_Static_assert((int)ANVIL_LAUNCH_STREAMS == (int)AV_LAUNCH_STREAMS &&
                   (int)ANVIL_LAUNCH_GRAPH == (int)AV_LAUNCH_GRAPH &&
                   (int)ANVIL_LAUNCH_PDL == (int)AV_LAUNCH_PDL,
               "the public launch models are the library's");

int anvil_launch_from_name(const char *name) {
  av_launch_model_t m;
  return av_launch_model_from_name(name, &m) == 0 ? (int)m : -1;
}

int anvil_plan_file(const anvil_plan_file_options_t *o, anvil_plan_file_result_t *out,
                    anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_plan_file_opts_t p = {
      .spec = o->spec, .levels = o->levels, .gpu = o->gpu ? o->gpu : "H200-SXM",
      .models = {.sched = o->scheduler, .cost = o->cost_model ? o->cost_model : "roofline",
                 .sp = o->params, .n_sp = o->n_params, .cp = o->cost_params,
                 .n_cp = o->n_cost_params},
      .heads = {.hq = o->q_heads ? o->q_heads : 32, .hkv = o->kv_heads ? o->kv_heads : 8,
                .head_dim = o->head_dim ? o->head_dim : 128, .dtype = AV_DTYPE_FP16},
      .no_limits = o->no_limits, .launch = (av_launch_model_t)o->launch, .out = o->out};
  av_plan_file_result_t r;
  int rc = av_plan_file(&p, &r, &e);
  if (!rc && out) {
    memset(out, 0, sizeof *out);
    memcpy(out->scheduler, r.scheduler, sizeof out->scheduler);
    memcpy(out->params, r.params, sizeof out->params);
    memcpy(out->workload, r.workload, sizeof out->workload);
    memcpy(out->gpu, r.gpu, sizeof out->gpu);
    out->items = r.stats.items;
    out->launches = r.stats.launches;
    out->streams = r.stats.streams;
    out->partial_slots = r.stats.partial_slots;
  }
  return av__api_error(err, &e, rc);
}
