/* `anvil describe`: a batch's figures — how much its requests share, unique vs
 * query-centric KV bytes (what prefix sharing can save) and the bandwidth floor on a GPU
 * (DESIGN §Numbers that matter). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/escape.h"
#include "core/gpu.h"
#include "core/workload.h"

enum { OPT_LEVELS = 256, OPT_HEADS, OPT_HEAD_DIM };

static const av_cli_opt_t k_opts[] = {
    {"levels", OPT_LEVELS, "\"B=.. L=..\"", "the batch in B/L notation, e.g. \"B=1,4 L=128,32\""},
    {"gpu", 'g', "NAME", "GPU spec for the floor (default H200-SXM)"},
    {"heads", OPT_HEADS, "Q,KV", "query and KV heads when the spec has none (default 32,8)"},
    {"head-dim", OPT_HEAD_DIM, "D", "head dim when the spec has none (default 128)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

/* Per depth: node count, node lengths and how many requests share each node. */
static void print_levels(const av_workload_t *w) {
  printf("  %-6s %7s %12s %12s %10s %10s %10s\n", "depth", "nodes", "min_len", "max_len",
         "min_share", "mean_share", "max_share");
  for (int d = 0; d < w->max_depth; d++) {
    int32_t n = 0, smin = 0, smax = 0;
    int64_t lmin = 0, lmax = 0;
    double ssum = 0;
    for (int32_t u = 0; u < w->n_nodes; u++) {
      const av_node_t *x = &w->nodes[u];
      if (x->depth != d) continue;
      if (!n || x->kv_len_tokens < lmin) lmin = x->kv_len_tokens;
      if (!n || x->kv_len_tokens > lmax) lmax = x->kv_len_tokens;
      if (!n || x->share < smin) smin = x->share;
      if (!n || x->share > smax) smax = x->share;
      ssum += x->share;
      n++;
    }
    printf("  %-6d %7d %12lld %12lld %10d %10.2f %10d\n", d, n, (long long)lmin,
           (long long)lmax, smin, n ? ssum / n : 0.0, smax);
  }
}

int av_cmd_describe(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  const char *spec = NULL, *levels = NULL, *gpu_name = "H200-SXM";
  av_heads_t heads = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k, rc = AV_OK;
  int64_t x;
  while (!rc && (k = av_cli_next(&ps, &v, &err)) != -1) {
    switch (k) {
      case -2: rc = err.code; break;
      case 'h':
        av_cli_print_help("describe (SPEC.json | --levels \"B=1,4 L=128,32\") [--gpu NAME]",
                          "Prints a batch's figures: requests, nodes, depth, sharing per "
                          "level, unique and\nquery-centric KV bytes, their ratio, and the "
                          "bandwidth floor on a GPU.",
                          k_opts);
        return 0;
      case 0:
        if (spec) rc = av_error_set(&err, AV_ERR_USAGE, "describe", v, "unexpected argument");
        spec = v;
        break;
      case OPT_LEVELS: levels = v; break;
      case 'g': gpu_name = v; break;
      case OPT_HEADS: rc = av_cli_parse_heads("describe", v, &heads, &err); break;
      case OPT_HEAD_DIM:
        rc = av_cli_parse_int("describe", "--head-dim", v, 1, 4096, &x, &err);
        heads.head_dim = (int)x;
        break;
    }
  }
  av_gpu_t gpu;
  av_workload_t *w = NULL;
  if (!rc) rc = av_cli_load_gpu("describe", gpu_name, &gpu, &err);
  if (!rc) rc = av_cli_load_workload("describe", spec, levels, &heads, &w, &err);
  if (rc) return av_cli_fail(&err);

  av_workload_stats_t s;
  av_workload_stats(w, &s);
  double bw = av_gpu_hbm_bw_GBps(&gpu);
  char name[AV_ESCAPE_NAME_SIZE];
  printf("workload: %s\n",
         av_escape_text(w->name[0] ? w->name : (spec ? spec : levels), name, sizeof name));
  printf("heads: %d query / %d KV (group %d), head dim %d, %s, block %d tokens\n",
         w->heads.hq, w->heads.hkv, av_heads_group(&w->heads), w->heads.head_dim,
         av_dtype_name(w->heads.dtype), w->block_size_tokens);
  printf("requests: %d   nodes: %d   depth: %d   roots: %d   leaves: %d\n", s.requests,
         s.nodes, s.depth, s.roots, s.leaves);
  printf("sharing per node: mean %.2f, max %.0f requests\n", s.mean_share, s.max_share);
  print_levels(w);
  printf("unique KV:        %14lld tokens  %12.3f MB\n", (long long)s.unique_kv_tokens,
         s.unique_kv_bytes / 1e6);
  printf("query-centric KV: %14lld tokens  %12.3f MB\n", (long long)s.query_centric_kv_tokens,
         s.query_centric_kv_bytes / 1e6);
  printf("ratio (query-centric / unique): %.3f\n", s.sharing_ratio);
  printf("floor on %s (%.0f GB/s): %.3f us unique, %.3f us query-centric\n", gpu.name, bw,
         av_workload_floor_us(w, bw), bw > 0 ? s.query_centric_kv_bytes / (bw * 1e3) : 0.0);
  av_floor_t f;
  av_workload_floor(w, &gpu, &f);
  printf("attention: %.3f GFLOP, %.3f us at %.0f TFLOP/s; roofline floor %.3f us (%s-bound)\n",
         av_workload_flops(w) / 1e9, f.compute_us, gpu.fp16_tensor_tflops, f.us,
         f.compute_us > f.mem_us ? "compute" : "memory");
  av_workload_destroy(w);
  return 0;
}
