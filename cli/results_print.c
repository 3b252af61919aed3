/* The results table of `anvil run` and `anvil merge` (cli/results_print.h). */
#include "cli/results_print.h"

#include <stdio.h>

enum { NAME_SIZE = 512, TEXT_SIZE = 1100 };

static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

/* s padded with spaces to `width` characters on the terminal: UTF-8 continuation bytes take
 * no column (an `auto→…` cell's arrow is three bytes, one column). */
static void put_padded(const char *s, int width) {
  int cols = 0;
  for (const char *c = s; *c; c++) cols += ((unsigned char)*c & 0xC0) != 0x80;
  fputs(s, stdout);
  for (; cols < width; cols++) putchar(' ');
}

void av_cli_results_head(const anvil_results_head_t *h, void *user) {
  av_cli_results_print_t *p = user;
  if (p->before) p->before(p->before_user);
  p->many_gpus = h->n_gpus > 1;
  p->n_batches = h->n_batches;
  p->rows = h->rows;
  p->failed = h->failed;
  snprintf(p->name, sizeof p->name, "%s", h->name);
  snprintf(p->dir, sizeof p->dir, "%s", h->dir);
  if (p->quiet) {
    printf("results: %s/results.json, %s/results.csv\n", p->dir, p->dir);
    return;
  }
  if (h->timeline) printf("timeline: %s\n", h->timeline);
  char b4[TEXT_SIZE];
  printf("%s: %s, sim=%s, cost_model=%s%s%s\n", h->name,
         anvil_escape_text(h->path, b4, sizeof b4), h->sim, h->cost_model,
         h->launch ? ", launch=" : "", h->launch ? h->launch : "");
  if (p->many_gpus) printf("%-12s ", "gpu");
  printf("%-16s %-7s %-16s %7s %11s %11s %6s %10s %12s %8s\n", "workload", "heads",
         "scheduler", "items", "unique_MB", "qc_KV_MB", "qc/u", "floor_us", "predicted_us",
         "x_floor");
}

/* With quiet, a failed row goes to stderr (when asked); otherwise every row is a line. */
int av_cli_results_row(const anvil_result_row_t *x, void *user) {
  const av_cli_results_print_t *p = user;
  char b1[NAME_SIZE], b2[NAME_SIZE], b3[NAME_SIZE];
  if (p->quiet) {
    if (p->failures_to_stderr && x->status != ANVIL_OK) {
      char b4[400 * 4];
      fprintf(stderr, "anvil: %s x %s on %s failed: %s\n",
              anvil_escape_text(x->batch, b1, sizeof b1),
              anvil_escape_text(x->scheduler, b2, sizeof b2),
              anvil_escape_text(x->gpu, b3, sizeof b3),
              anvil_escape_text(x->error, b4, sizeof b4));
    }
    return 0;
  }
  const double MB = 1e6;
  char heads[32], b4[TEXT_SIZE];
  snprintf(heads, sizeof heads, "%d/%d", x->q_heads, x->kv_heads);
  if (p->many_gpus) printf("%-12s ", anvil_escape_text(x->gpu, b1, sizeof b1));
  const char *name = anvil_escape_text(x->batch, b2, sizeof b2);
  const char *label = anvil_escape_text(x->shown ? x->shown : x->scheduler, b3, sizeof b3);
  if (x->status != ANVIL_OK) {
    printf("%-16s %-7s %-16s FAILED: %s\n", name, heads, label,
           anvil_escape_text(x->error, b4, sizeof b4));
    return 0;
  }
  printf("%-16s %-7s ", name, heads);
  put_padded(label, 16);
  printf(" %7d %11.2f %11.2f %6.2f %10.2f %12.2f %8.2f\n",
         x->items, x->unique_kv_bytes / MB, x->query_centric_kv_bytes / MB, x->sharing_ratio,
         x->floor_us, x->predicted_us, ratio(x->predicted_us, x->floor_us));
  return 0;
}

void av_cli_results_end(const av_cli_results_print_t *p) {
  if (!p->quiet) printf("results: %s/results.json, %s/results.csv\n", p->dir, p->dir);
  printf("%s: %d workloads, %d plans checked", p->name, p->n_batches, p->rows - p->failed);
  if (p->failed) printf(", %d of %d rows failed", p->failed, p->rows);
  putchar('\n');
}
