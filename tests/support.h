/* Shared helpers for the Check test binaries. */
#ifndef AV_TEST_SUPPORT_H
#define AV_TEST_SUPPORT_H

#include <check.h>

#include "sim/error.h"
#include "sim/workload.h"

/* Fails the test with the formatted error when rc != AV_OK. */
#define AV_CK_OK(rc, errp)                                                   \
  do {                                                                       \
    int av_ck_rc_ = (rc);                                                    \
    char av_ck_buf_[1600];                                                   \
    ck_assert_msg(av_ck_rc_ == AV_OK, "%s: %s", av_error_code_name(av_ck_rc_), \
                  av_error_format((errp), av_ck_buf_, sizeof av_ck_buf_));   \
  } while (0)

/* (32, 8) heads, d = 128, fp16: the configuration most tests use. */
av_heads_t av_test_heads(void);
/* Runs a suite; returns the process exit status. CK_NOFORK when `nofork`. */
int av_test_run(Suite *s, int nofork);
/* Reads a whole file (caller frees); NULL when it cannot. */
char *av_test_read_file(const char *path);
/* Runs argv[0] (a path) with argv in directory `cwd` (NULL = current), stdout and stderr
 * redirected to the given files (NULL = /dev/null). Returns the exit status, or -1 when
 * the program could not be run or died from a signal. For tests of the `anvil` binary. */
int av_test_spawn(const char *cwd, char *const argv[], const char *out_path,
                  const char *err_path);

#endif
