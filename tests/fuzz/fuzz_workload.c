/* Workload specs (core/workload.h, every kind) and their explicit JSON form. */
#include "core/workload.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *spec = av_fuzz_json(data, size);
  if (!spec) return 0;
  av_error_t err;
  av_error_clear(&err);
  av_jctx_t c = {.source = "fuzz.json", .err = &err};
  av_workload_t *w = av_workload_from_json(spec, NULL, &c, "");
  if (w) json_decref(av_workload_to_json(w));
  av_workload_destroy(w);
  json_decref(spec);
  return 0;
}
