/* Plan files (core/plan.h) and, for those that load, the checker (proofs/proofs.h): a plan
 * that passes the loader's range checks must not crash the proof either. */
#include "core/plan.h"
#include "proofs/proofs.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  av_plan_t *p = NULL;
  av_workload_t *w = NULL;
  av_error_t err;
  av_error_clear(&err);
  if (av_plan_load(av_fuzz_file(data, size, ".json"), &p, &w, &err) == AV_OK)
    (void)av_plan_check(p, w, &err);
  av_plan_destroy(p);
  av_workload_destroy(w);
  return 0;
}
