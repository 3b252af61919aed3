/* anvil_check: checking a plan file (pipeline/check_file.h) behind the public API. */
#include "anvil/check.h"

#include "api/api_internal.h"
#include "pipeline/check_file.h"

typedef struct check_cb {
  const anvil_check_options_t *o;
  void *user;
} check_cb_t;

static void on_exact(const av_check_exact_t *x, void *user) {
  const check_cb_t *cb = user;
  anvil_check_exact_t e = {.scheduler = x->scheduler, .items = x->items,
                           .launches = x->launches, .requests = x->requests,
                           .nodes = x->nodes};
  cb->o->on_exact(&e, cb->user);
}

static void on_reference(const av_reference_result_t *r, void *user) {
  const check_cb_t *cb = user;
  anvil_check_reference_t x = {.max_rel_err = r->max_rel_err, .checked = r->checked,
                               .worst_request = r->worst_request};
  cb->o->on_reference(&x, cb->user);
}

void anvil_check_options_default(anvil_check_options_t *o) {
  *o = (anvil_check_options_t){.seed = 1, .tolerance = 1e-9};
}

int anvil_check(const anvil_check_options_t *o, void *user, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  check_cb_t cb = {o, user};
  av_check_file_opts_t c = {
      .path = o->path,
      .ref = {.seed = o->seed, .dim = o->dim, .max_requests = o->max_requests},
      .tolerance = o->tolerance, .no_reference = o->no_reference,
      .exact = o->on_exact ? on_exact : NULL,
      .reference = o->on_reference ? on_reference : NULL};
  int rc = av_check_file(&c, &cb, &e);
  return av__api_error(err, &e, rc);
}
