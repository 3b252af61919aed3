/* `anvil table2`: FlashForge §5.2 Table 2 — one CTA's time over its KV tokens n and query rows
 * n_q — predicted for GPU specs by the simulator (one CTA alone, its duration on the
 * engine's timeline, launch overhead excluded), next to a measured profile's table for the
 * same kernel variant. The spec's latency, in-flight bytes, fixed cost and tensor rate decide
 * the prediction, so the table shows what a GPU spec implies before any GPU is measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/table2.h"
#include "cli/args.h"
#include "cli/commands.h"

enum { OPT_MEASURED = 256, OPT_HEAD_DIM, OPT_TILE };

static const av_cli_opt_t k_opts[] = {
    {"gpu", 'g', "NAME", "GPU spec to predict for (repeatable)"},
    {"measured", OPT_MEASURED, "FILE", "a profile (profiles/<gpu>.json) to print next to them"},
    {"tile", OPT_TILE, "M,N", "partial-kernel tile (default the smallest compiled)"},
    {"head-dim", OPT_HEAD_DIM, "D", "head dim (default 128; fp16)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct topts {
  const char *gpus[ANVIL_TABLE2_MAX_GPUS];
  int n_gpus;
  const char *measured;
  int64_t head_dim;
  int m, n;
} topts_t;

static int parse_args(int argc, char **argv, topts_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->head_dim = 128;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        return av_cli_error(err, ANVIL_ERR_USAGE, "table2", v,
                            "unexpected argument (usage: anvil table2 --gpu NAME ...)");
      case 'g':
        if (o->n_gpus == ANVIL_TABLE2_MAX_GPUS)
          return av_cli_error(err, ANVIL_ERR_USAGE, "table2", "--gpu", "at most %d GPUs",
                              ANVIL_TABLE2_MAX_GPUS);
        o->gpus[o->n_gpus++] = v;
        break;
      case OPT_MEASURED: o->measured = v; break;
      case OPT_HEAD_DIM:
        if (av_cli_int_arg("table2", "--head-dim", v, 64, 256, &o->head_dim, err))
          return err->code;
        break;
      case OPT_TILE:
        if (sscanf(v, "%d,%d", &o->m, &o->n) != 2 || o->m < 1 || o->n < 1)
          return av_cli_error(err, ANVIL_ERR_USAGE, "table2", "--tile",
                              "expected M,N (e.g. 16,64), got '%s'", v);
        break;
      case 'h': return -1;
    }
  }
  return ANVIL_OK;  /* what is missing is anvil_table2's to say */
}

static void print_start(void *user) {
  (void)user;
  printf("FlashForge Table 2: one CTA alone, time in us; n = KV tokens, n_q = query rows "
         "(GQA group 1)\n");
}

static void print_header(const char *title) {
  printf("\n%s\n%-8s", title, "n_q \\ n");
  for (int j = 0; j < ANVIL_TABLE2_COLS; j++) printf(" %9lld", (long long)anvil_table2_cols()[j]);
  printf("\n");
}

/* A table's title and header before its first cell, each row's n_q before its first. */
static int print_cell(const anvil_table2_cell_t *c, void *user) {
  (void)user;
  if (c->row == 0 && c->col == 0) {
    char title[1300];
    if (c->measured)
      snprintf(title, sizeof title, "%s (measured: %s), partial m=%d n=%d, d=%d fp16, us",
               c->gpu, c->source, c->m_rows, c->n_tokens, c->head_dim);
    else  /* as long as the predicted title ever was */
      snprintf(title, 256, "%s (predicted: simulator engine, spec gpus/%s.json), "
               "partial m=%d n=%d, d=%d fp16, us",
               c->gpu, c->gpu, c->m_rows, c->n_tokens, c->head_dim);
    print_header(title);
  }
  if (c->col == 0) printf("%-8d", anvil_table2_rows()[c->row]);
  printf(" %9.2f", c->us);
  if (c->col == ANVIL_TABLE2_COLS - 1) printf("\n");
  return 0;
}

int av_cmd_table2(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
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
  if (rc) return av_cli_fail_public(&err);
  anvil_table2_options_t t = {.gpus = o.gpus, .n_gpus = o.n_gpus, .measured = o.measured,
                               .head_dim = (int)o.head_dim, .m_rows = o.m, .n_tokens = o.n,
                               .on_start = print_start};
  anvil_error_t e;
  return anvil_table2(&t, print_cell, NULL, &e) ? av_cli_fail_public(&e) : 0;
}
