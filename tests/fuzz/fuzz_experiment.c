/* Experiment files (pipeline/experiment.h): parsing, sweeps, every batch built, the limits
 * checked. Relative GPU spec and collection paths resolve next to the scratch file. */
#include "pipeline/experiment.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  av_experiment_t *e = NULL;
  av_error_t err;
  av_error_clear(&err);
  if (av_experiment_load(av_fuzz_file(data, size, ".json"), &e, &err) == AV_OK)
    av_experiment_destroy(e);
  return 0;
}
