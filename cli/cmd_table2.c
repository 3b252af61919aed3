/* `anvil table2`: FlashForge §5.2 Table 2 — one CTA's time over its KV tokens n and query rows
 * n_q — predicted for GPU specs by the simulator (one CTA alone, its duration on the
 * engine's timeline, launch overhead excluded), next to a measured profile's table for the
 * same kernel variant. The spec's latency, in-flight bytes, fixed cost and tensor rate decide
 * the prediction, so the table shows what a GPU spec implies before any GPU is measured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "costmodels/costmodel.h"
#include "core/json_util.h"
#include "core/occupancy.h"
#include "sim/sim.h"
#include "profiler/profile.h"

enum { OPT_MEASURED = 256, OPT_HEAD_DIM, OPT_TILE };

static const av_cli_opt_t k_opts[] = {
    {"gpu", 'g', "NAME", "GPU spec to predict for (repeatable)"},
    {"measured", OPT_MEASURED, "FILE", "a profile (profiles/<gpu>.json) to print next to them"},
    {"tile", OPT_TILE, "M,N", "partial-kernel tile (default the smallest compiled)"},
    {"head-dim", OPT_HEAD_DIM, "D", "head dim (default 128; fp16)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

#define MAX_GPUS 8
static const int32_t k_rows[] = {1, 2, 4, 8, 16};
static const int64_t k_kv[] = {64, 256, 1024, 4096, 16384};
#define NR ((int)(sizeof k_rows / sizeof k_rows[0]))
#define NK ((int)(sizeof k_kv / sizeof k_kv[0]))

typedef struct topts {
  const char *gpus[MAX_GPUS];
  int n_gpus;
  const char *measured;
  int64_t head_dim;
  int m, n;
} topts_t;

static int parse_args(int argc, char **argv, topts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->head_dim = 128;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        return av_error_set(err, AV_ERR_USAGE, "table2", v,
                            "unexpected argument (usage: anvil table2 --gpu NAME ...)");
      case 'g':
        if (o->n_gpus == MAX_GPUS)
          return av_error_set(err, AV_ERR_USAGE, "table2", "--gpu", "at most %d GPUs", MAX_GPUS);
        o->gpus[o->n_gpus++] = v;
        break;
      case OPT_MEASURED: o->measured = v; break;
      case OPT_HEAD_DIM:
        if (av_cli_parse_int("table2", "--head-dim", v, 64, 256, &o->head_dim, err))
          return err->code;
        break;
      case OPT_TILE:
        if (sscanf(v, "%d,%d", &o->m, &o->n) != 2 || o->m < 1 || o->n < 1)
          return av_error_set(err, AV_ERR_USAGE, "table2", "--tile",
                              "expected M,N (e.g. 16,64), got '%s'", v);
        break;
      case 'h': return -1;
    }
  }
  if (!o->n_gpus && !o->measured)
    return av_error_set(err, AV_ERR_USAGE, "table2", NULL,
                        "give at least one --gpu NAME or --measured FILE");
  return AV_OK;
}

/* The partial tile the table is about, compiled for arch. */
static int pick_tile(const topts_t *o, const av_variants_t *vs, const av_gpu_t *g, av_tile_t *t,
                     av_error_t *err) {
  const int arch = g->sm_arch;
  av_tile_t tiles[64];
  int n = av_variants_tiles(vs, AV_KERNEL_PARTIAL, (int)o->head_dim, AV_DTYPE_FP16, arch,
                            tiles, 64);
  /* default: the smallest m that holds the largest n_q, preferring n = 64 (the tile
   * FlashForge's Table 2 discussion and most plans use) */
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (tiles[i].m_rows < k_rows[NR - 1]) continue;
    if (o->m && (tiles[i].m_rows != o->m || tiles[i].n_tokens != o->n)) continue;
    /* a tile compiled for the architecture may still not fit this GPU's shared memory */
    const av_variant_t *v = av_variants_find(vs, &tiles[i], (int)o->head_dim, AV_DTYPE_FP16, arch);
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
                      o->m, o->n, (int)o->head_dim, arch, k_rows[NR - 1], g->name);
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
  if (!rc) rc = av_cli_cost_create(ops, &prm, g, &w->heads, vs, &cost, err);
  av_sim_config_t cfg = {.model = AV_SIM_ENGINE, .record_timeline = 1};
  av_sim_result_t res;
  av_timeline_t tl = {0};
  memset(&res, 0, sizeof res);
  if (!rc) rc = av_sim_run(&cfg, p, w, g, vs, cost, &res, &tl, err);
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

static void print_header(const char *title) {
  printf("\n%s\n%-8s", title, "n_q \\ n");
  for (int j = 0; j < NK; j++) printf(" %9lld", (long long)k_kv[j]);
  printf("\n");
}

static int predicted_table(const topts_t *o, const av_variants_t *vs, const char *name,
                           av_error_t *err) {
  av_gpu_t g;
  av_tile_t tile;
  int rc = av_cli_load_gpu("table2", name, &g, err);
  if (!rc) rc = pick_tile(o, vs, &g, &tile, err);
  if (rc) return rc;
  char title[256];
  snprintf(title, sizeof title, "%s (predicted: simulator engine, spec gpus/%s.json), "
           "partial m=%d n=%d, d=%d fp16, us",
           g.name, g.name, tile.m_rows, tile.n_tokens, (int)o->head_dim);
  print_header(title);
  for (int i = 0; i < NR && !rc; i++) {
    printf("%-8d", k_rows[i]);
    for (int j = 0; j < NK && !rc; j++) {
      double us;
      rc = predict_cell(&g, vs, &tile, (int)o->head_dim, k_rows[i], k_kv[j], &us, err);
      if (!rc) printf(" %9.2f", us);
    }
    printf("\n");
  }
  return rc;
}

/* The measured table through the `profile` cost model (exact at its grid points,
 * interpolated between them), for the GPU the profile names. */
static int measured_table(const topts_t *o, const av_variants_t *vs, av_error_t *err) {
  json_t *root = NULL;
  const char *gname = NULL;
  av_gpu_t g;
  av_tile_t tile;
  int rc = av_json_load_file(o->measured, &root, err);
  av_jctx_t c = {.source = o->measured, .err = err};
  if (!rc) rc = av_json_get_string(&c, root, "", "gpu", 1, NULL, &gname);
  if (!rc) rc = av_cli_load_gpu("table2", gname, &g, err);
  json_decref(root);
  if (!rc) rc = pick_tile(o, vs, &g, &tile, err);
  if (rc) return rc;
  const av_costmodel_ops_t *ops = av_costmodel_find("profile");
  av_params_t prm;
  char assign[1100];
  snprintf(assign, sizeof assign, "path=%s", o->measured);
  av_heads_t h = {.hq = 1, .hkv = 1, .head_dim = (int)o->head_dim, .dtype = AV_DTYPE_FP16};
  av_cost_env_t env = {.gpu = &g, .heads = &h, .variants = vs};
  rc = av_params_init(&prm, ops->params, err);
  if (!rc) rc = av_params_set_text(&prm, assign, "--measured", err);
  av_costmodel_t *m = rc ? NULL : av_costmodel_create(ops, &prm, &env, err);
  if (!m) return err->code ? err->code : AV_ERR_INTERNAL;
  char title[1300];
  snprintf(title, sizeof title, "%s (measured: %s), partial m=%d n=%d, d=%d fp16, us", g.name,
           o->measured, tile.m_rows, tile.n_tokens, (int)o->head_dim);
  print_header(title);
  for (int i = 0; i < NR; i++) {
    printf("%-8d", k_rows[i]);
    for (int j = 0; j < NK; j++) {
      av_cost_query_t q = {.n_q = k_rows[i], .rows = k_rows[i], .kv_tokens = k_kv[j],
                           .tile = tile, .output = AV_OUT_PARTIAL};
      av_item_cost_t ic;
      av_costmodel_estimate(m, &q, &ic);
      printf(" %9.2f", ic.time_us);
    }
    printf("\n");
  }
  av_costmodel_destroy(m);
  return AV_OK;
}

int av_cmd_table2(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  topts_t o = {0};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("table2 --gpu NAME [--gpu NAME ...] [--measured profiles/<gpu>.json]",
                      "FlashForge Table 2: a single CTA's time (us) over KV tokens n and query "
                      "rows n_q,\npredicted by the simulator for each GPU spec, and measured "
                      "(a profile file).",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  av_variants_t *vs;
  if (av_cli_load_variants(0, &vs, &err)) return av_cli_fail(&err);
  printf("FlashForge Table 2: one CTA alone, time in us; n = KV tokens, n_q = query rows "
         "(GQA group 1)\n");
  for (int i = 0; i < o.n_gpus && !rc; i++) rc = predicted_table(&o, vs, o.gpus[i], &err);
  if (!rc && o.measured) rc = measured_table(&o, vs, &err);
  av_variants_destroy(vs);
  return rc ? av_cli_fail(&err) : 0;
}
