/* Kernel variant tables (core/variants.h). */
#include "core/variants.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  av_error_t err;
  av_error_clear(&err);
  av_variants_destroy(av_variants_load(av_fuzz_file(data, size, ".json"), &err));
  return 0;
}
