/* Experiment files (docs/experiments.md): what `anvil run` plans, checks and predicts, here
 * returned as rows instead of written to results.json. */
#ifndef ANVIL_EXPERIMENT_H
#define ANVIL_EXPERIMENT_H

#include "anvil/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs every (GPU, batch, scheduler) of the experiment file at `path`; *rows_json receives
 * the JSON array of rows (the "rows" of results.json: one object per row, the same columns
 * as results.csv). Caller frees with anvil_free. A row that fails alone is kept (status
 * "failed", its "error"), as `anvil run` keeps it: the call then returns the first failed
 * row's code and message, with *rows_json set all the same. */
int anvil_run_experiment(const char *path, char **rows_json, anvil_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
