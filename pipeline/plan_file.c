/* `anvil plan` (pipeline/plan_file.h): the models, the GPU and the batch loaded, the work
 * held to the limits, the plan made, proved and written. */
#include "pipeline/plan_file.h"

#include <stdio.h>

#include "core/json_util.h"
#include "core/limits.h"
#include "pipeline/results_dir.h"
#include "pipeline/workload_args.h"
#include "proofs/proofs.h"

/* The options a command must give, and a file it can write. */
static int check_opts(const av_plan_file_opts_t *o, av_error_t *err) {
  if (!o->models.sched)
    return av_error_set(err, AV_ERR_USAGE, "plan", "--scheduler",
                        "missing; name the scheduler (anvil list shows them)");
  if (!o->out)
    return av_error_set(err, AV_ERR_USAGE, "plan", "--output",
                        "missing; give -o PLAN.json");
  return av_path_check_writable("plan", o->out, "--output", err);
}

int av_plan_file(const av_plan_file_opts_t *o, av_plan_file_result_t *out, av_error_t *err) {
  if (check_opts(o, err)) return err->code;
  av_models_t m;
  av_gpu_t gpu;
  av_workload_t *w = NULL;
  av_costmodel_t *cost = NULL;
  av_variants_t *vs = NULL;
  av_plan_t *plan = NULL;
  json_t *doc = NULL;
  int rc = av_models_load("plan", &o->models, &m, err);
  if (!rc) rc = av_models_load_gpu("plan", o->gpu, &gpu, err);
  if (!rc) rc = av_workload_args_load("plan", o->spec, o->levels, &o->heads, &w, err);
  if (!rc) rc = av_models_load_variants(1, &vs, err);
  if (!rc) rc = av_models_cost_create(m.cops, &m.cp, &gpu, &w->heads, vs, &cost, err);
  av_limits_t lim;
  av_limits_default(&lim);
  /* The work estimate before any planning; a plan over limits.plan_items is left to the
   * scheduler, which refuses it before allocating and names the parameter to change. */
  if (!rc && !o->no_limits &&
      (!m.sops->min_items || m.sops->min_items(w, &m.sp) <= lim.plan_items)) {
    const int64_t units = av_limits_work_units(w, av_scheduler_pieces(m.sops, &m.sp, w));
    char what[160];
    snprintf(what, sizeof what, "batch '%s'", w->name);
    rc = av_limits_check_work(&lim, units, m.sops->name, what, o->spec ? o->spec : "--levels",
                              NULL, "run with --no-limits if you mean it", err);
  }
  if (!rc) {
    av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs, .cost = cost,
                          .max_items = o->no_limits ? 0 : lim.plan_items,
                          .launch_model = o->launch};
    rc = av_scheduler_plan(m.sops, &m.sp, &ctx, &plan, err);
  }
  if (!rc) rc = av_plan_check(plan, w, err);
  if (!rc) {
    doc = av_plan_to_json(plan, w);
    rc = doc ? av_json_dump_file(doc, o->out, err)
             : av_error_set(err, AV_ERR_NOMEM, o->out, NULL, "cannot serialise the plan");
  }
  if (!rc && out) {
    av_plan_stats(plan, &out->stats);
    snprintf(out->scheduler, sizeof out->scheduler, "%s", plan->scheduler);
    snprintf(out->params, sizeof out->params, "%s", plan->params);
    snprintf(out->workload, sizeof out->workload, "%s", w->name);
    snprintf(out->gpu, sizeof out->gpu, "%s", gpu.name);
  }
  json_decref(doc);
  av_plan_destroy(plan);
  av_costmodel_destroy(cost);
  av_variants_destroy(vs);
  av_workload_destroy(w);
  return rc;
}
