/* GPU spec files (core/gpu.h), then the occupancy calculator on the spec that loaded. */
#include "core/gpu.h"
#include "core/occupancy.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  av_gpu_t g;
  av_error_t err;
  av_error_clear(&err);
  if (av_gpu_load_file(av_fuzz_file(data, size, ".json"), &g, &err) == AV_OK) {
    av_occupancy_t o;
    av_occupancy(&g, 128, 128, 48 * 1024, &o);
  }
  return 0;
}
