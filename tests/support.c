/* Helpers shared by the test binaries (heads, running a suite, reading files). */
#include "tests/support.h"

#include <stdio.h>
#include <stdlib.h>

av_heads_t av_test_heads(void) {
  av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  return h;
}

int av_test_run(Suite *s, int nofork) {
  SRunner *sr = srunner_create(s);
  if (nofork) srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

char *av_test_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}
