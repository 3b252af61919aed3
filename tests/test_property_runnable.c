/* Property test: every scheduler emits only tiles the target GPU can run. For every GPU spec
 * in gpus/, the compiled kernel variants table, and seeded forests whose nodes reach 128k
 * tokens (plus one batch of 64 requests sharing a 32k prefix, the case that once chose a
 * 136 KB shared-memory tile on the RTX 4090), each registered scheduler with its defaults
 * and each policy alternative it declares plans the batch; every launch's variant must have
 * a non-zero occupancy on that GPU, and the simulator must accept the plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/occupancy.h"
#include "costmodels/costmodel.h"
#include "proofs/proofs.h"
#include "schedulers/scheduler.h"
#include "selectors/selectors.h"
#include "sim/sim.h"
#include "tests/support.h"

enum { N_FORESTS = 12 };

/* Plans w with ops (defaults plus `alt` when given) and checks every launch is runnable. */
static void check_one(const av_scheduler_ops_t *ops, const char *alt, const av_sched_ctx_t *ctx,
                      const char *what) {
  av_error_t err;
  av_error_clear(&err);
  av_params_t params;
  AV_CK_OK(av_params_init(&params, ops->params, &err), &err);
  if (alt) AV_CK_OK(av_params_set_text(&params, alt, ops->name, &err), &err);
  av_plan_t *p = NULL;
  int rc = av_scheduler_plan(ops, &params, ctx, &p, &err);
  ck_assert_msg(rc == AV_OK, "%s %s[%s]: %s", what, ops->name, alt ? alt : "", err.message);
  const av_heads_t *h = &ctx->workload->heads;
  for (int32_t l = 0; l < p->n_launches; l++) {
    const av_tile_t *t = &p->launches[l].tile;
    const av_variant_t *v =
        av_variants_find(ctx->variants, t, h->head_dim, h->dtype, ctx->gpu->sm_arch);
    ck_assert_msg(v != NULL, "%s %s[%s]: launch %d names an uncompiled tile", what,
                  ops->name, alt ? alt : "", l);
    av_occupancy_t occ;
    av_occupancy(ctx->gpu, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
    ck_assert_msg(occ.ctas_per_sm > 0, "%s %s[%s]: launch %d tile m=%d n=%d cannot run",
                  what, ops->name, alt ? alt : "", l, t->m_rows, t->n_tokens);
  }
  AV_CK_OK(av_plan_check(p, ctx->workload, &err), &err);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE};
  av_sim_result_t res;
  memset(&res, 0, sizeof res);
  rc = av_sim_run(&cfg, &(av_sim_input_t){p, ctx->workload, ctx->gpu, ctx->variants, ctx->cost},
                  &res, NULL, &err);
  ck_assert_msg(rc == AV_OK, "%s %s[%s]: simulator: %s", what, ops->name, alt ? alt : "",
                err.message);
  av_sim_result_free(&res);
  av_plan_destroy(p);
}

static void check_all_schedulers(const av_sched_ctx_t *ctx, const char *what) {
  int n_ops = 0;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n_ops);
  for (int i = 0; i < n_ops; i++) {
    check_one(all[i], NULL, ctx, what);
    for (int a = 0; all[i]->alternatives && all[i]->alternatives[a]; a++)
      check_one(all[i], all[i]->alternatives[a], ctx, what);
  }
}

static void check_workload(av_workload_t *w, const av_gpu_t *g, const av_variants_t *vs,
                           const char *what) {
  av_error_t err;
  av_error_clear(&err);
  ck_assert_msg(w != NULL, "%s: %s", what, err.message);
  const av_costmodel_ops_t *roofline = av_costmodel_find("roofline");
  av_cost_env_t env = {.gpu = g, .heads = &w->heads, .variants = vs};
  av_costmodel_t *cost = av_costmodel_create(roofline, NULL, &env, &err);
  AV_CK_OK(cost ? AV_OK : err.code, &err);
  av_sched_ctx_t ctx = {.workload = w, .gpu = g, .variants = vs, .cost = cost};
  check_all_schedulers(&ctx, what);
  av_costmodel_destroy(cost);
  av_workload_destroy(w);
}

START_TEST(every_gpu_runnable_tiles) {
  av_error_t err;
  av_error_clear(&err);
  char **names = NULL;
  int n_gpus = 0;
  AV_CK_OK(av_gpu_list(NULL, &names, &n_gpus, &err), &err);
  ck_assert_int_gt(n_gpus, 0);
  av_variants_t *vs = av_variants_load(NULL, &err);
  AV_CK_OK(vs ? AV_OK : err.code, &err);
  const av_heads_t heads[] = {{.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16},
                              {.hq = 32, .hkv = 32, .head_dim = 128, .dtype = AV_DTYPE_FP16}};
  for (int gi = 0; gi < n_gpus; gi++) {
    av_gpu_t g;
    AV_CK_OK(av_gpu_load(names[gi], NULL, &g, &err), &err);
    char what[160];
    const int64_t B[] = {1, 64}, L[] = {32768, 128};
    snprintf(what, sizeof what, "%s prefix32k", g.name);
    check_workload(av_workload_from_levels(B, L, 2, &heads[0], &err), &g, vs, what);
    for (int f = 0; f < N_FORESTS; f++) {
      av_random_spec_t spec = {.seed = 500 + (uint64_t)f, .min_depth = 1, .max_depth = 3,
                               .max_requests = 64, .max_children = 4, .min_len = 1,
                               .max_len = 131072};
      snprintf(what, sizeof what, "%s seed %d", g.name, 500 + f);
      check_workload(av_workload_random(&spec, &heads[f % 2], &err), &g, vs, what);
    }
  }
  for (int gi = 0; gi < n_gpus; gi++) free(names[gi]);
  free(names);
  av_variants_destroy(vs);
}
END_TEST

int main(void) {
  /* every registered scheduler, `auto` (selectors/) among them */
  if (av_selectors_register(NULL)) return 1;
  Suite *s = suite_create("property_runnable");
  TCase *tc = tcase_create("runnable");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_gpu_runnable_tiles);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
