/* Workload specs (core/workload.h, every kind) and their explicit JSON form. The explicit
 * form is written for trees of at most 65536 nodes: the builders' largest (2^22 nodes, a few
 * bytes of spec) takes 0.6 s to build and seconds more to serialise under ASan, which is the
 * harness's work, not the parser's (docs/reliability.md#record). */
#include "core/workload.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *spec = av_fuzz_json(data, size);
  if (!spec) return 0;
  av_error_t err;
  av_error_clear(&err);
  av_jctx_t c = {.source = "fuzz.json", .err = &err};
  av_workload_t *w = av_workload_from_json(spec, NULL, &c, "");
  if (w && w->n_nodes <= 65536) json_decref(av_workload_to_json(w));
  av_workload_destroy(w);
  json_decref(spec);
  return 0;
}
