/* `anvil run`'s progress line (cli/run_progress.h). */
#include "cli/run_progress.h"

#include <stdio.h>
#include <unistd.h>


void av_run_progress_display_init(av_run_progress_display_t *d, int requested) {
  d->tty = isatty(STDERR_FILENO);
  d->enabled = (d->tty || requested) && anvil_run_is_root();
  d->last_line_s = -1e9;
  d->drawn = 0;
}

static void eta_text(char *out, size_t n, double s) {
  if (s < 0) snprintf(out, n, "?");
  else if (s < 120) snprintf(out, n, "%.0f s", s);
  else if (s < 7200) snprintf(out, n, "%.0f min %02.0f s", (double)(long)(s / 60), s - 60 * (double)(long)(s / 60));
  else snprintf(out, n, "%.1f h", s / 3600);
}

void av_run_progress_display(const anvil_run_progress_t *p, void *user) {
  av_run_progress_display_t *d = user;
  const int last = p->done == p->total;
  if (!d->tty && !last && p->elapsed_s - d->last_line_s < 2.0) return;
  d->last_line_s = p->elapsed_s;
  const int64_t ran = p->done - p->resumed;
  const double rate = p->elapsed_s > 0 ? (double)ran / p->elapsed_s : 0.0;
  char eta[32];
  eta_text(eta, sizeof eta, rate > 0 ? (double)(p->total - p->done) / rate : -1);
  fprintf(stderr, "%srows %lld/%lld (%.0f%%)  %.1f rows/s  ETA %s", d->tty ? "\r" : "",
          (long long)p->done, (long long)p->total,
          p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, rate, eta);
  if (p->resumed) fprintf(stderr, "  (%lld resumed)", (long long)p->resumed);
  if (p->failed) fprintf(stderr, "  %lld failed", (long long)p->failed);
  fputs(d->tty ? "\033[K" : "\n", stderr);
  d->drawn = d->tty;
  fflush(stderr);
}

void av_run_progress_display_end(av_run_progress_display_t *d) {
  if (d->drawn) fputc('\n', stderr);
  d->drawn = 0;
}
