/* FlashForge Table 2 (pipeline/table2.h): per GPU spec a table of single-CTA times
 * predicted by the simulator, and a measured profile's table. The spec's latency, in-flight
 * bytes, fixed cost and tensor rate decide the prediction, so the table shows what a GPU
 * spec implies before any GPU is measured. */
#include "pipeline/table2.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json_util.h"
#include "core/occupancy.h"
#include "pipeline/models.h"
#include "profiler/profile.h"
#include "sim/sim.h"

const int32_t av_table2_rows[AV_TABLE2_ROWS] = {1, 2, 4, 8, 16};
const int64_t av_table2_cols[AV_TABLE2_COLS] = {64, 256, 1024, 4096, 16384};

/* The partial tile the table is about, compiled for arch. */
static int pick_tile(const av_table2_opts_t *o, const av_variants_t *vs, const av_gpu_t *g, av_tile_t *t,
                     av_error_t *err) {
  const int arch = g->sm_arch;
  av_tile_t tiles[64];
  int n = av_variants_tiles(vs, AV_KERNEL_PARTIAL, o->head_dim, AV_DTYPE_FP16, arch,
                            tiles, 64);
  /* default: the smallest m that holds the largest n_q, preferring n = 64 (the tile
   * FlashForge's Table 2 discussion and most plans use) */
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (tiles[i].m_rows < av_table2_rows[AV_TABLE2_ROWS - 1]) continue;
    if (o->m && (tiles[i].m_rows != o->m || tiles[i].n_tokens != o->n)) continue;
    /* a tile compiled for the architecture may still not fit this GPU's shared memory */
    const av_variant_t *v = av_variants_find(vs, &tiles[i], o->head_dim, AV_DTYPE_FP16, arch);
    av_occupancy_t occ;
    av_occupancy(g, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
    if (occ.ctas_per_sm < 1) continue;
    if (best < 0 || tiles[i].m_rows < tiles[best].m_rows ||
        (tiles[i].m_rows == tiles[best].m_rows && tiles[i].n_tokens == 64))
      best = i;
  }
  if (best >= 0) {
    *t = tiles[best];
    return AV_OK;
  }
  return av_error_set(err, AV_ERR_UNSUPPORTED, "table2", "--tile",
                      "no compiled partial tile %dx%d (d %d, fp16) for sm_%d with m >= %d that fits %s",
                      o->m, o->n, o->head_dim, arch, av_table2_rows[AV_TABLE2_ROWS - 1], g->name);
}

/* One CTA alone: its duration on the simulated timeline. */
static int predict_cell(const av_gpu_t *g, const av_variants_t *vs, const av_tile_t *tile,
                        int d, int32_t rows, int64_t kv, double *us, av_error_t *err) {
  av_workload_t *w = av_profile_workload(rows, &kv, 1, d, AV_DTYPE_FP16, err);
  av_plan_t *p = w ? av_profile_plan(w, tile, 1, err) : NULL;
  av_params_t prm;
  const av_costmodel_ops_t *ops = av_costmodel_find("roofline");
  av_costmodel_t *cost = NULL;
  int rc = p ? av_params_init(&prm, ops->params, err) : (err->code ? err->code : AV_ERR_INTERNAL);
  if (!rc) rc = av_models_cost_create(ops, &prm, g, &w->heads, vs, &cost, err);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
  av_sim_result_t res;
  av_timeline_t tl = {0};
  memset(&res, 0, sizeof res);
  if (!rc) rc = av_sim_run(&cfg, &(av_sim_input_t){p, w, g, vs, cost}, &res, &tl, err);
  *us = NAN;
  for (int32_t i = 0; !rc && i < tl.n; i++)
    if (tl.ev[i].item == 0) *us = tl.ev[i].end_us - tl.ev[i].start_us;
  av_timeline_free(&tl);
  av_sim_result_free(&res);
  av_costmodel_destroy(cost);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return rc;
}

static int predicted_table(const av_table2_opts_t *o, const av_variants_t *vs, int table,
                           av_table2_cell_fn on_cell, void *user, av_error_t *err) {
  av_gpu_t g;
  av_tile_t tile;
  int rc = av_models_load_gpu("table2", o->gpus[table], &g, err);
  if (!rc) rc = pick_tile(o, vs, &g, &tile, err);
  if (rc) return rc;
  av_table2_cell_t c = {.table = table, .gpu = g.name, .m_rows = tile.m_rows,
                        .n_tokens = tile.n_tokens, .head_dim = o->head_dim};
  for (c.row = 0; c.row < AV_TABLE2_ROWS && !rc; c.row++)
    for (c.col = 0; c.col < AV_TABLE2_COLS && !rc; c.col++) {
      rc = predict_cell(&g, vs, &tile, o->head_dim, av_table2_rows[c.row],
                        av_table2_cols[c.col], &c.us, err);
      if (!rc && on_cell) rc = on_cell(&c, user, err);
    }
  return rc;
}

/* The measured table through the `profile` cost model (exact at its grid points,
 * interpolated between them), for the GPU the profile names. */
static int measured_table(const av_table2_opts_t *o, const av_variants_t *vs, int table,
                          av_table2_cell_fn on_cell, void *user, av_error_t *err) {
  json_t *root = NULL;
  const char *gname = NULL;
  av_gpu_t g;
  av_tile_t tile;
  int rc = av_json_load_file(o->measured, &root, err);
  av_jctx_t c = {.source = o->measured, .err = err};
  if (!rc) rc = av_json_get_string(&c, root, "", "gpu", 1, NULL, &gname);
  if (!rc) rc = av_models_load_gpu("table2", gname, &g, err);
  json_decref(root);
  if (!rc) rc = pick_tile(o, vs, &g, &tile, err);
  if (rc) return rc;
  const av_costmodel_ops_t *ops = av_costmodel_find("profile");
  av_params_t prm;
  char assign[1100];
  snprintf(assign, sizeof assign, "path=%s", o->measured);
  av_heads_t h = {.hq = 1, .hkv = 1, .head_dim = o->head_dim, .dtype = AV_DTYPE_FP16};
  av_cost_env_t env = {.gpu = &g, .heads = &h, .variants = vs};
  rc = av_params_init(&prm, ops->params, err);
  if (!rc) rc = av_params_set_text(&prm, assign, "--measured", err);
  av_costmodel_t *m = rc ? NULL : av_costmodel_create(ops, &prm, &env, err);
  if (!m) return err->code ? err->code : AV_ERR_INTERNAL;
  av_table2_cell_t cell = {.table = table, .measured = 1, .gpu = g.name,
                           .source = o->measured, .m_rows = tile.m_rows,
                           .n_tokens = tile.n_tokens, .head_dim = o->head_dim};
  for (cell.row = 0; cell.row < AV_TABLE2_ROWS && !rc; cell.row++)
    for (cell.col = 0; cell.col < AV_TABLE2_COLS && !rc; cell.col++) {
      av_cost_query_t q = {.n_q = av_table2_rows[cell.row], .rows = av_table2_rows[cell.row],
                           .kv_tokens = av_table2_cols[cell.col], .tile = tile,
                           .output = AV_OUT_PARTIAL};
      av_item_cost_t ic;
      av_costmodel_estimate(m, &q, &ic);
      cell.us = ic.time_us;
      if (on_cell) rc = on_cell(&cell, user, err);
    }
  av_costmodel_destroy(m);
  return rc;
}

int av_table2_run(const av_table2_opts_t *o, av_table2_cell_fn on_cell, void *user,
                  av_error_t *err) {
  if (o->n_gpus > AV_TABLE2_MAX_GPUS)
    return av_error_set(err, AV_ERR_USAGE, "table2", "--gpu", "at most %d GPUs",
                        AV_TABLE2_MAX_GPUS);
  if (o->n_gpus < 1 && !o->measured)
    return av_error_set(err, AV_ERR_USAGE, "table2", NULL,
                        "give at least one --gpu NAME or --measured FILE");
  av_variants_t *vs;
  int rc = av_models_load_variants(0, &vs, err);
  if (rc) return rc;
  if (o->on_start) o->on_start(user);
  for (int i = 0; i < o->n_gpus && !rc; i++) rc = predicted_table(o, vs, i, on_cell, user, err);
  if (!rc && o->measured) rc = measured_table(o, vs, o->n_gpus, on_cell, user, err);
  av_variants_destroy(vs);
  return rc;
}
