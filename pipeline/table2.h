/* FlashForge §5.2 Table 2 (`anvil table2`) as a library call: one CTA's time over its KV
 * tokens n and query rows n_q, predicted for GPU specs by the simulator (one CTA alone, its
 * duration on the engine's timeline, launch overhead excluded), and a measured profile's
 * table for the same kernel variant through the `profile` cost model. Each cell comes back
 * through a callback; nothing is printed. */
#ifndef AV_PIPELINE_TABLE2_H
#define AV_PIPELINE_TABLE2_H

#include <stdint.h>

#include "core/error.h"

#define AV_TABLE2_MAX_GPUS 8
/* The table's rows (query rows n_q) and columns (KV tokens n). */
#define AV_TABLE2_ROWS 5
#define AV_TABLE2_COLS 5
extern const int32_t av_table2_rows[AV_TABLE2_ROWS];
extern const int64_t av_table2_cols[AV_TABLE2_COLS];

typedef struct av_table2_opts {
  const char *const *gpus;   /* GPU specs to predict for, one table each */
  int n_gpus;                /* at most AV_TABLE2_MAX_GPUS */
  const char *measured;      /* NULL, or a profile whose table follows the predicted ones */
  int head_dim;              /* 64..256 (fp16) */
  int m, n;                  /* the partial tile; 0,0: the smallest compiled that fits */
  void (*on_start)(void *user);  /* may be NULL: once the variant table is loaded */
} av_table2_opts_t;

/* One cell; the names are borrowed for the callback's call only. */
typedef struct av_table2_cell {
  int table;                 /* 0.. in order: the predicted tables, then the measured one */
  int measured;              /* 1: the measured table */
  const char *gpu;           /* the GPU spec's name */
  const char *source;        /* measured: the profile's path; predicted: NULL */
  int m_rows, n_tokens, head_dim;  /* the tile */
  int row, col;              /* into av_table2_rows / av_table2_cols */
  double us;                 /* the CTA's time */
} av_table2_cell_t;
/* A non-zero return stops the run with that status (err filled by the callback). */
typedef int (*av_table2_cell_fn)(const av_table2_cell_t *cell, void *user, av_error_t *err);

/* The tables, cell by cell in row order. Messages name "table2" and the option a user gave,
 * as the `anvil` program prints them. */
int av_table2_run(const av_table2_opts_t *o, av_table2_cell_fn on_cell, void *user,
                  av_error_t *err);

#endif
