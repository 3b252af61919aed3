/* Profile documents (profile_format/profile_read.h): grids, curves, merge and start parts. */
#include "profile_format/profile_read.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *root = av_fuzz_json(data, size);
  if (!root) return 0;
  av_error_t err;
  av_error_clear(&err);
  av_jctx_t c = {.source = "fuzz.json", .err = &err};
  av_profile_doc_t d;
  (void)av_profile_read(&c, root, &d);
  av_profile_doc_free(&d);
  av_profile_starts_t s;
  (void)av_profile_read_queue(&c, root, &s);
  av_profile_starts_free(&s);
  json_decref(root);
  return 0;
}
