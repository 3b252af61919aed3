/* anvil_run_experiment: `anvil run` without the files: the rows of results.json as JSON. */
#include "api/api_internal.h"
#include "core/json_util.h"
#include "pipeline/run.h"

int anvil_run_experiment(const char *path, char **rows_json, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *rows_json = NULL;
  av_experiment_t *x = NULL;
  av_variants_t *vs = NULL;
  av_results_t res = {0};
  int rc = av_experiment_load(path, &x, &e);
  if (!rc) rc = av_experiment_variants(&vs, &e);
  if (!rc) rc = av_experiment_run(x, vs, NULL, &res, &e);
  if (!rc) {
    json_t *doc = av_results_to_json(x, &res);
    *rows_json = doc ? av_json_dump_text(json_object_get(doc, "rows")) : NULL;
    json_decref(doc);
    if (!*rows_json) rc = av_error_set(&e, AV_ERR_NOMEM, path, NULL, "out of memory");
  }
  av_results_free(&res);
  av_variants_destroy(vs);
  av_experiment_destroy(x);
  return av__api_error(err, &e, rc);
}
