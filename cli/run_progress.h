/* The progress line of `anvil run` on stderr: rows done / total, rate and time left. On a
 * terminal it rewrites one line; when stderr is piped it is shown only on request
 * (--progress), as one line every few seconds. */
#ifndef AV_CLI_RUN_PROGRESS_H
#define AV_CLI_RUN_PROGRESS_H

#include "anvil/results.h"

typedef struct av_run_progress_display {
  int enabled, tty;
  double last_line_s;      /* when piped: the last line's time */
  int drawn;               /* a terminal line is on screen */
} av_run_progress_display_t;

/* Enabled on a terminal, or when `requested` (--progress). */
void av_run_progress_display_init(av_run_progress_display_t *d, int requested);
/* A progress callback of anvil_run_options_t; user is the display. */
void av_run_progress_display(const anvil_run_progress_t *p, void *user);
/* Ends the terminal line. */
void av_run_progress_display_end(av_run_progress_display_t *d);

#endif
