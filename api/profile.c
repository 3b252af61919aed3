/* anvil_profile: the profile run (pipeline/profile_run.h) behind the public API. */
#include "anvil/profile.h"

#include "api/api_internal.h"
#include "pipeline/profile_run.h"

_Static_assert((int)ANVIL_PROFILE_FULL == (int)AV_PROFILE_FULL &&
                   (int)ANVIL_PROFILE_TILES == (int)AV_PROFILE_TILES &&
                   (int)ANVIL_PROFILE_GRAPH == (int)AV_PROFILE_GRAPH &&
                   (int)ANVIL_PROFILE_PDL == (int)AV_PROFILE_PDL,
               "the public modes are the pipeline's");

typedef struct profile_cb {
  const anvil_profile_options_t *o;
  anvil_profile_variant_fn variant;
  void *user;
  int stopped;
} profile_cb_t;

static void on_note(const char *text, void *user) {
  const profile_cb_t *cb = user;
  cb->o->on_note(text, cb->user);
}

static void on_done(int mode, const av_profile_t *p, const av_gpu_t *g, const char *out,
                    void *user) {
  profile_cb_t *cb = user;
  if (cb->o->on_summary) {
    anvil_profile_summary_t s = {
        .mode = mode, .gpu = mode == AV_PROFILE_FULL ? p->gpu : g->name, .device = p->device,
        .out = out, .variants = p->n, .copy_GBps = p->copy_GBps, .read_GBps = p->read_GBps,
        .launch_us = p->launch_us,
        .launch_r2 = p->launch_r2, .lone_GBps = p->lone_GBps, .cta_fixed_us = p->cta_fixed_us,
        .lone_r2 = p->lone_r2, .tensor_tflops = p->tensor_tflops,
        .graph_gap_us = p->graph_gap_us, .graph_join_us = p->graph_join_us,
        .graph_tail_us = p->graph_tail_us, .pdl_join_us = p->pdl_join_us};
    cb->o->on_summary(&s, cb->user);
  }
  for (int i = 0; cb->variant && !cb->stopped && i < p->n; i++) {
    const av_profile_table_t *t = &p->t[i];
    anvil_profile_variant_t v = {
        .kind = av_kernel_kind_name(t->tile.kind), .dtype = av_dtype_name(t->dtype),
        .m_rows = t->tile.m_rows, .n_tokens = t->tile.n_tokens, .head_dim = t->head_dim,
        .occupancy_measured = t->occ_measured, .occupancy_predicted = t->occ_predicted,
        .n_q = t->nq[t->n_nq - 1], .kv_tokens = t->kv[t->n_kv - 1],
        .time_us = t->time_us[t->n_nq - 1][t->n_kv - 1]};
    cb->stopped = cb->variant(&v, cb->user) != 0;
  }
}

int anvil_profile(const anvil_profile_options_t *o, anvil_profile_variant_fn fn, void *user,
                  anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  profile_cb_t cb = {o, fn, user, 0};
  av_profile_run_opts_t r = {.out = o->out, .gpu_spec = o->gpu_spec, .command = o->command,
                             .quick = o->quick, .verbose = o->verbose,
                             .runs = o->runs > 0 ? o->runs : 5, .graph_only = o->graph_only,
                             .pdl_only = o->pdl_only, .add_tiles = o->add_tiles,
                             .note = o->on_note ? on_note : NULL, .done = on_done};
  int rc = av_profile_run(&r, &cb, &e);
  if (!rc && cb.stopped)
    rc = av_error_set(&e, AV_ERR_USAGE, "profile", NULL, "stopped by the variant callback");
  return av__api_error(err, &e, rc);
}
