/* `anvil describe`: a batch's figures — how much its requests share, unique vs
 * query-centric KV bytes (what prefix sharing can save) and the bandwidth floor on a GPU
 * (DESIGN §Numbers that matter). */
#include <stdio.h>

#include "anvil/describe.h"
#include "cli/args.h"
#include "cli/commands.h"

enum { OPT_LEVELS = 256, OPT_HEADS, OPT_HEAD_DIM };

static const av_cli_opt_t k_opts[] = {
    {"levels", OPT_LEVELS, "\"B=.. L=..\"", "the batch in B/L notation, e.g. \"B=1,4 L=128,32\""},
    {"gpu", 'g', "NAME", "GPU spec for the floor (default H200-SXM)"},
    {"heads", OPT_HEADS, "Q,KV", "query and KV heads when the spec has none (default 32,8)"},
    {"head-dim", OPT_HEAD_DIM, "D", "head dim when the spec has none (default 128)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

static void print_head(const anvil_description_t *d, void *user) {
  (void)user;
  char name[512];
  printf("workload: %s\n", anvil_escape_text(d->name, name, sizeof name));
  printf("heads: %d query / %d KV (group %d), head dim %d, %s, block %d tokens\n", d->q_heads,
         d->kv_heads, d->group, d->head_dim, d->dtype, d->block_size_tokens);
  printf("requests: %d   nodes: %d   depth: %d   roots: %d   leaves: %d\n", d->requests,
         d->nodes, d->depth, d->roots, d->leaves);
  printf("sharing per node: mean %.2f, max %.0f requests\n", d->mean_share, d->max_share);
  printf("  %-6s %7s %12s %12s %10s %10s %10s\n", "depth", "nodes", "min_len", "max_len",
         "min_share", "mean_share", "max_share");
}

/* Per depth: node count, node lengths and how many requests share each node. */
static void print_level(const anvil_describe_level_t *l, void *user) {
  (void)user;
  printf("  %-6d %7d %12lld %12lld %10d %10.2f %10d\n", l->depth, l->nodes,
         (long long)l->min_len, (long long)l->max_len, l->min_share, l->mean_share,
         l->max_share);
}

static void print_tail(const anvil_description_t *d) {
  printf("unique KV:        %14lld tokens  %12.3f MB\n", (long long)d->unique_kv_tokens,
         d->unique_kv_bytes / 1e6);
  printf("query-centric KV: %14lld tokens  %12.3f MB\n", (long long)d->query_centric_kv_tokens,
         d->query_centric_kv_bytes / 1e6);
  printf("ratio (query-centric / unique): %.3f\n", d->sharing_ratio);
  printf("floor on %s (%.0f GB/s): %.3f us unique, %.3f us query-centric\n", d->gpu,
         d->hbm_GBps, d->floor_unique_us, d->floor_query_centric_us);
  printf("attention: %.3f GFLOP, %.3f us at %.0f TFLOP/s; roofline floor %.3f us (%s-bound)\n",
         d->gflop, d->compute_us, d->tensor_tflops, d->floor_us,
         d->compute_bound ? "compute" : "memory");
}

int av_cmd_describe(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  const char *spec = NULL, *levels = NULL, *gpu_name = "H200-SXM";
  av_cli_heads_t heads = {.hq = 32, .hkv = 8, .head_dim = 128};
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k, rc = ANVIL_OK;
  int64_t x;
  while (!rc && (k = av_cli_next_arg(&ps, &v, &err)) != -1) {
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
        if (spec) rc = av_cli_error(&err, ANVIL_ERR_USAGE, "describe", v, "unexpected argument");
        spec = v;
        break;
      case OPT_LEVELS: levels = v; break;
      case 'g': gpu_name = v; break;
      case OPT_HEADS: rc = av_cli_parse_heads("describe", v, &heads, &err); break;
      case OPT_HEAD_DIM:
        rc = av_cli_int_arg("describe", "--head-dim", v, 1, 4096, &x, &err);
        heads.head_dim = (int)x;
        break;
    }
  }
  if (rc) return av_cli_fail_public(&err);
  anvil_describe_options_t o = {.spec = spec, .levels = levels, .gpu = gpu_name,
                                .q_heads = heads.hq, .kv_heads = heads.hkv,
                                .head_dim = heads.head_dim, .on_description = print_head};
  anvil_description_t d;
  anvil_error_t e;
  if (anvil_describe(&o, print_level, NULL, &d, &e)) return av_cli_fail_public(&e);
  print_tail(&d);
  return 0;
}
