/* JSONL decode traces (core/workload.h av_trace_load): one workload spec per line. */
#include "core/workload.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  av_error_t err;
  av_error_clear(&err);
  av_trace_destroy(av_trace_load(av_fuzz_file(data, size, ".jsonl"), NULL, &err));
  return 0;
}
