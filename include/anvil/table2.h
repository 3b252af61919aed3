/* FlashForge §5.2 Table 2 (`anvil table2`): one CTA's time over its KV tokens n and query
 * rows n_q, predicted by the simulator for GPU specs (one CTA alone, launch overhead
 * excluded) and, from a measured profile, through the `profile` cost model; cell by cell
 * through a callback. */
#ifndef ANVIL_TABLE2_H
#define ANVIL_TABLE2_H

#include <stdint.h>

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ANVIL_TABLE2_MAX_GPUS 8
#define ANVIL_TABLE2_ROWS 5   /* query rows n_q: anvil_table2_rows() */
#define ANVIL_TABLE2_COLS 5   /* KV tokens n: anvil_table2_cols() */
/* The n_q of each row and the n of each column (borrowed, static). */
const int32_t *anvil_table2_rows(void);
const int64_t *anvil_table2_cols(void);

typedef struct anvil_table2_options {
  const char *const *gpus;   /* GPU specs to predict for, one table each */
  int n_gpus;                /* at most ANVIL_TABLE2_MAX_GPUS */
  const char *measured;      /* NULL, or a profile (profiles/<gpu>.json) whose table follows */
  int head_dim;              /* 64..256, fp16; 0: 128 */
  int m_rows, n_tokens;      /* the partial tile; 0, 0: the smallest compiled that fits */
  void (*on_start)(void *user);  /* may be NULL: once the variant table is loaded, with
                                    anvil_table2's user pointer */
} anvil_table2_options_t;

/* One cell; the names are borrowed for the callback's call only. */
typedef struct anvil_table2_cell {
  int table;                 /* 0.. in order: the predicted tables, then the measured one */
  int measured;              /* 1: the measured table */
  const char *gpu;           /* the GPU spec's name */
  const char *source;        /* measured: the profile's path; predicted: NULL */
  int m_rows, n_tokens, head_dim;  /* the tile */
  int row, col;              /* the cell: n_q = anvil_table2_rows()[row], n = ..._cols()[col] */
  double us;                 /* the CTA's time */
} anvil_table2_cell_t;
/* Returns 0 to go on; any other value stops the run, which then returns ANVIL_ERR_USAGE. */
typedef int (*anvil_table2_cell_fn)(const anvil_table2_cell_t *cell, void *user);

/* The tables, cell by cell in row order. Errors are those `anvil table2` prints. */
int anvil_table2(const anvil_table2_options_t *o, anvil_table2_cell_fn on_cell, void *user,
                 anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
