/* The results table of `anvil run` and `anvil merge`, printed from the rows the public API
 * hands over (include/anvil/results.h): the experiment's line and the column header, one
 * line per row, where the files went and the summary line; with --quiet only where the files
 * went and the summary (run: and each failed row on stderr). */
#ifndef AV_CLI_RESULTS_PRINT_H
#define AV_CLI_RESULTS_PRINT_H

#include "anvil/results.h"

typedef struct av_cli_results_print {
  int quiet;
  int failures_to_stderr;   /* with quiet: each failed row on stderr (run) */
  void (*before)(void *);   /* may be NULL: called first in on_head (ends a progress line) */
  void *before_user;
  int many_gpus, n_batches, rows, failed;
  char name[1024], dir[1100];
} av_cli_results_print_t;

/* An anvil_results_head_fn and an anvil_result_row_fn; user is the av_cli_results_print_t. */
void av_cli_results_head(const anvil_results_head_t *h, void *user);
int av_cli_results_row(const anvil_result_row_t *r, void *user);
/* Where the files went (not with quiet: printed first) and the summary line. */
void av_cli_results_end(const av_cli_results_print_t *p);

#endif
