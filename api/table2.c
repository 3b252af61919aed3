/* anvil_table2: FlashForge Table 2 (pipeline/table2.h) behind the public API. */
#include "anvil/table2.h"

#include "api/api_internal.h"
#include "pipeline/table2.h"

_Static_assert(ANVIL_TABLE2_ROWS == AV_TABLE2_ROWS && ANVIL_TABLE2_COLS == AV_TABLE2_COLS &&
                   ANVIL_TABLE2_MAX_GPUS == AV_TABLE2_MAX_GPUS,
               "the public table has the pipeline's shape");

const int32_t *anvil_table2_rows(void) { return av_table2_rows; }
const int64_t *anvil_table2_cols(void) { return av_table2_cols; }

typedef struct table2_cb {
  void (*start)(void *user);
  anvil_table2_cell_fn fn;
  void *user;
} table2_cb_t;

static void on_start(void *user) {
  const table2_cb_t *cb = user;
  cb->start(cb->user);
}

static int on_cell(const av_table2_cell_t *c, void *user, av_error_t *err) {
  const table2_cb_t *cb = user;
  anvil_table2_cell_t cell = {.table = c->table, .measured = c->measured, .gpu = c->gpu,
                              .source = c->source, .m_rows = c->m_rows,
                              .n_tokens = c->n_tokens, .head_dim = c->head_dim, .row = c->row,
                              .col = c->col, .us = c->us};
  if (cb->fn && cb->fn(&cell, cb->user))
    return av_error_set(err, AV_ERR_USAGE, "table2", NULL,
                        "stopped by the cell callback at table %d row %d column %d", c->table,
                        c->row, c->col);
  return AV_OK;
}

int anvil_table2(const anvil_table2_options_t *o, anvil_table2_cell_fn fn, void *user,
                 anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_table2_opts_t t = {.gpus = o->gpus, .n_gpus = o->n_gpus, .measured = o->measured,
                        .head_dim = o->head_dim ? o->head_dim : 128, .m = o->m_rows,
                        .n = o->n_tokens, .on_start = o->on_start ? on_start : NULL};
  table2_cb_t cb = {o->on_start, fn, user};
  int rc = av_table2_run(&t, on_cell, &cb, &e);
  return av__api_error(err, &e, rc);
}
