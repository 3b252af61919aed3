/* anvil_run_experiment: `anvil run` without the files: the rows of results.json as JSON. */
#include <stdio.h>

#include "api/api_internal.h"
#include "core/json_util.h"
#include "pipeline/run.h"

/* The first failed row as the error (rows that fail alone are kept, as `anvil run` keeps
 * them, and make its exit status 1). */
static int first_failure(const av_results_t *r, av_error_t *e) {
  for (int i = 0; i < r->n; i++)
    if (r->rows[i].status != AV_OK) {
      e->code = r->rows[i].status;
      snprintf(e->message, sizeof e->message, "%s", r->rows[i].error);
      return e->code;
    }
  return AV_OK;
}

int anvil_run_experiment(const char *path, char **rows_json, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *rows_json = NULL;
  av_experiment_t *x = NULL;
  av_results_t res = {0};
  av_run_opts_t o;
  av_run_opts_default(&o);
  int rc = av_experiment_load(path, &x, &e);
  if (!rc) rc = av_run_experiment(x, &o, &res, &e);
  if (!rc) {
    json_t *doc = av_results_to_json(x, &res);
    *rows_json = doc ? av_json_dump_text(json_object_get(doc, "rows")) : NULL;
    json_decref(doc);
    rc = *rows_json ? first_failure(&res, &e)
                    : av_error_set(&e, AV_ERR_NOMEM, path, NULL, "out of memory");
  }
  av_results_free(&res);
  av_experiment_destroy(x);
  return av__api_error(err, &e, rc);
}
