/* query_centric: the FlashDecoding / FlashAttention baseline — one request per CTA (its GQA
 * group as the query rows), optionally split along its KV path (split-K) into contiguous
 * token ranges whose partial states are merged in order. Shared prefixes are read once per
 * request: this is the redundancy PAT §3.2 and FlashForge §4.3 measure against. */
#include <math.h>
#include <stdlib.h>

#include "core/limits.h"
#include "schedulers/sched_util.h"

/* "split", in the order of split_choices */
enum { QC_SPLIT_NONE, QC_SPLIT_FIXED, QC_SPLIT_HEURISTIC };
static const char *const split_choices[] = {"none", "fixed", "heuristic", NULL};

static const av_param_def_t qc_params[] = {
    {.name = "split", .type = AV_PARAM_ENUM, .def = "heuristic", .choices = split_choices,
     .help = "KV split per request: none, fixed (`splits` pieces), heuristic (FlashAttention's "
             "num_splits_heuristic)"},
    {.name = "splits", .type = AV_PARAM_INT, .def = "4", .min = 1, .max = 4096,
     .help = "split=fixed: pieces per request (fewer when the path is shorter)"},
    {.name = "max_splits", .type = AV_PARAM_INT, .def = "128", .min = 1, .max = 4096,
     .help = "split=heuristic: upper bound on splits (FlashAttention uses 128)"},
    {.name = "block_n", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 65536,
     .help = "split=heuristic: KV block of the split kernel in tokens; 0 = FlashAttention's "
             "rule (256 for d <= 64, 128 for d <= 128, else 64)"},
    {.name = "ctas_per_sm", .type = AV_PARAM_INT, .def = "0", .min = 0, .max = 64,
     .help = "split=heuristic: CTAs per SM in a wave; 0 = occupancy of the decode tile "
             "(2, FlashAttention's constant, without a variants table)"},
    {.name = "tile_n", .type = AV_PARAM_INT, .def = "64", .min = 1, .max = 65536,
     .help = "preferred KV tile n among the compiled decode tiles"},
    {.name = NULL},
};

/* FlashAttention-2's num_splits_heuristic (csrc/flash_attn/flash_api.cpp, also FlashDecoding):
 * with fewer than 0.8 waves of CTAs, pick the number of splits whose wave efficiency
 * n_waves / ceil(n_waves) is within 85% of the best, smallest first; splits that give the
 * same blocks per split as one fewer are not eligible (they change nothing). */
static int fa_num_splits(int64_t ctas, int64_t slots, int64_t n_blocks, int64_t max_splits) {
  if ((double)ctas >= 0.8 * (double)slots) return 1;
  if (max_splits > slots) max_splits = slots;
  if (max_splits > n_blocks) max_splits = n_blocks;
  if (max_splits < 1) return 1;
  double best = 0.0;
  double eff[4096];
  for (int64_t s = 1; s <= max_splits; s++) {
    int eligible = s == 1 || (n_blocks + s - 1) / s != (n_blocks + s - 2) / (s - 1);
    double waves = (double)(ctas * s) / (double)slots;
    eff[s - 1] = eligible ? waves / ceil(waves) : 0.0;
    if (eff[s - 1] > best) best = eff[s - 1];
  }
  for (int64_t s = 1; s <= max_splits; s++)
    if (eff[s - 1] > 0.0 && eff[s - 1] >= 0.85 * best) return (int)s;
  return 1;
}

/* Tokens per split piece for request r: 0 = no split. FlashAttention applies one split count
 * to the batch, cutting the longest sequence into `s` runs of whole KV blocks; a shorter
 * request gets as many runs of that length as it needs. */
static int64_t heuristic_chunk(const av_sched_ctx_t *ctx, const av_params_t *params,
                               const av_tile_t *tile) {
  const av_workload_t *w = ctx->workload;
  int d = w->heads.head_dim;
  int64_t block_n = av_params_int(params, "block_n");
  if (block_n == 0) block_n = d <= 64 ? 256 : d <= 128 ? 128 : 64;
  int64_t max_len = 0;
  for (int32_t r = 0; r < w->n_requests; r++)
    if (w->request_kv_tokens[r] > max_len) max_len = w->request_kv_tokens[r];
  int64_t n_blocks = (max_len + block_n - 1) / block_n;
  int per_sm = (int)av_params_int(params, "ctas_per_sm");
  int64_t slots = per_sm > 0 ? (int64_t)ctx->gpu->sm_count * per_sm
                             : av_sched_concurrent_ctas(ctx, tile, 2);
  int64_t ctas = (int64_t)w->n_requests * w->heads.hkv;
  int s = fa_num_splits(ctas, slots, n_blocks, av_params_int(params, "max_splits"));
  if (s <= 1) return 0;
  return (n_blocks + s - 1) / s * block_n;
}

/* Pieces of a request of len tokens: runs of `chunk` tokens (heuristic), else `fixed` even
 * cuts, at most one per token. */
static int64_t request_pieces(int64_t len, int64_t chunk, int64_t fixed) {
  return chunk > 0 ? (len + chunk - 1) / chunk : fixed < len ? fixed : len;
}

static int qc_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                   av_error_t *err) {
  const av_workload_t *w = ctx->workload;
  int32_t rows = av_sched_rows(ctx, 1), fit;
  av_tile_t tile;
  int rc = av_sched_pick_tile(ctx, AV_KERNEL_DECODE, rows, (int)av_params_int(params, "tile_n"),
                              &tile, err);
  if (rc || (rc = av_sched_queries_per_cta(ctx, tile.m_rows, &fit, err))) return rc;

  const int split = av_params_choice(params, "split");
  int64_t chunk = split == QC_SPLIT_HEURISTIC ? heuristic_chunk(ctx, params, &tile) : 0;
  int64_t fixed = split == QC_SPLIT_FIXED ? av_params_int(params, "splits") : 1;

  av_plan_t *p = av_plan_create(w, "query_centric");
  int32_t depth = w->max_depth > 0 ? w->max_depth : 1;
  int32_t *nodes = malloc(sizeof *nodes * (size_t)depth);
  av_segment_t *segs = malloc(sizeof *segs * (size_t)depth);
  if (!p || !nodes || !segs) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning query_centric");
    goto done;
  }
  int32_t launch = av_sched_add_launch(p, 0, &tile, 0, err);
  if (launch < 0) {
    rc = AV_ERR_NOMEM;
    goto done;
  }
  /* Size the plan first: a piece covers at least one node, a cut adds at most one segment,
   * so a request of nn nodes in k pieces has at most k + nn - 1 segments. Building without
   * regrowth keeps large batches from copying their arrays into fresh pages. */
  int64_t n_items = 0, n_segs = 0;
  for (int32_t r = 0; r < w->n_requests; r++) {
    int64_t k = request_pieces(w->request_kv_tokens[r], chunk, fixed);
    n_items += k;
    if (k > 0) n_segs += k + av_sched_path(w, r, NULL, 0) - 1; /* a hint: items still grow */
  }
  if (av_plan_reserve(p, n_items, n_items, n_segs)) {
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning query_centric");
    goto done;
  }
  for (int32_t r = 0; r < w->n_requests && !rc; r++) {
    int32_t nn = av_sched_path(w, r, nodes, depth);
    int64_t len = w->request_kv_tokens[r];
    int64_t pieces = request_pieces(len, chunk, fixed);
    av_output_t o = pieces > 1 ? AV_OUT_PARTIAL : AV_OUT_FINAL;
    for (int64_t i = 0; i < pieces; i++) {
      /* heuristic: runs of `chunk` tokens; fixed: even cuts i·len/pieces */
      int64_t b = chunk > 0 ? i * chunk : i * len / pieces;
      int64_t e = chunk > 0 ? (b + chunk < len ? b + chunk : len) : (i + 1) * len / pieces;
      int32_t ns = av_sched_path_segments(w, nodes, nn, b, e, segs);
      if (av_sched_add_item(p, launch, (av_item_work_t){&r, 1, segs, ns}, o, -1, -1, err) < 0) {
        rc = AV_ERR_NOMEM;
        break;
      }
    }
  }
done:
  free(nodes);
  free(segs);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  *out = p;
  return AV_OK;
}

/* With split=fixed, a request of nn path nodes cut into k pieces has about k + nn - 1 of them
 * (the plan's own sizing); the heuristic's splits depend on the GPU, so it counts the pairs. */
static int64_t qc_pieces(const av_workload_t *w, const av_params_t *params) {
  if (av_params_choice(params, "split") != QC_SPLIT_FIXED) return 0;
  const int64_t fixed = av_params_int(params, "splits");
  int64_t sum = 0;
  for (int32_t r = 0; r < w->n_requests; r++)
    sum += request_pieces(w->request_kv_tokens[r], 0, fixed) - 1;
  return sum + av_limits_path_pairs(w);
}

const av_scheduler_ops_t av_sched_query_centric = {
    .name = "query_centric",
    .description = "FlashDecoding baseline: one request per CTA, optional split-K (FA heuristic)",
    .params = qc_params,
    .plan = qc_plan,
    .pieces = qc_pieces,
};
