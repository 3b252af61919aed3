/* Shared helpers for the Check test binaries. */
#ifndef AV_TEST_SUPPORT_H
#define AV_TEST_SUPPORT_H

#include <check.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/variants.h"
#include "core/workload.h"

typedef struct av_costmodel av_costmodel_t;

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
/* A small sm_90-like GPU named "test-gpu": 4 SMs with H100-like occupancy limits (threads,
 * warps, CTAs, registers, shared memory and their allocation units). Every rate, latency,
 * cache and overhead field is 0: each test sets the ones its closed forms use. */
av_gpu_t av_test_small_gpu(void);
/* out[0] a partial and out[1] a persistent variant, both tile m=16 x n=64 with 4 warps, head
 * dim 128, fp16, sm_90, 128 threads, 64 registers per thread and `smem_bytes` shared memory:
 * the shared memory alone sets how many CTAs fit on an SM. */
void av_test_tile_variants(av_variant_t out[2], int smem_bytes);
/* The real kernels/variants.json when the build has one, else a stand-in table with every
 * tile the schedulers may pick (partial m 16-128 x n 32-128, persistent and decode m 16-64
 * x n 64, 4 warps) and plausible resources for `g` and `h`, so the simulator (which `auto`
 * needs) can run on a machine without CUDA. Caller owns (av_variants_destroy). */
av_variants_t *av_test_variants(const av_gpu_t *g, const av_heads_t *h);
/* Runs a suite; returns the process exit status. CK_NOFORK when `nofork`. */
int av_test_run(Suite *s, int nofork);
/* Reads a whole file (caller frees); NULL when it cannot. */
char *av_test_read_file(const char *path);

/* The `profile` cost model on g / h (variants may be NULL) reading the profile file at path;
 * NULL with err set when the model refuses it. */
av_costmodel_t *av_test_profile_model(const char *path, const av_gpu_t *g, const av_heads_t *h,
                                      const av_variants_t *vs, av_error_t *err);
/* Synthetic profiles for the cost-model tests. av_test_profile_init: an empty profile of
 * "test-gpu" (caller frees with av_profile_free). av_test_profile_table: adds the lone-CTA
 * table of `tile` (head dim 128, fp16) measured at 1 and 16 query rows and the n_kv token
 * counts kv, each costing fixed_us + per_token_us x tokens whatever the rows; returns it. */
struct av_profile;
struct av_profile_table;
void av_test_profile_init(struct av_profile *p);
/* av_test_profile_cores: gives p (which must have none yet) one co-residency curve entry for
 * `tile` (head dim 128, fp16) of n_k points, values zero for the caller to fill. */
struct av_profile_cores;
struct av_profile_cores *av_test_profile_cores(struct av_profile *p, av_tile_t tile, int n_k);
struct av_profile_table *av_test_profile_table(struct av_profile *p, av_tile_t tile,
                                               const int64_t *kv, int n_kv, double fixed_us,
                                               double per_token_us);
/* Writes profile p (av_profile_to_json) to AV_BINARY_DIR/<name>.json; returns the path (a
 * static buffer, overwritten by the next call). */
const char *av_test_write_profile(const struct av_profile *p, const char *name);
/* Every case directory under AV_TEST_DIR/rel: its input.json must be refused by the profile
 * cost model with the key path on expected_error's first line and its second line inside the
 * message, the file named as the source. Returns the number of cases. */
int av_test_bad_profiles(const char *rel, const av_gpu_t *g, const av_heads_t *h);
/* Runs argv[0] (a path) with argv in directory `cwd` (NULL = current), stdout and stderr
 * redirected to the given files (NULL = /dev/null). Returns the exit status, or -1 when
 * the program could not be run or died from a signal. For tests of the `anvil` binary. */
int av_test_spawn(const char *cwd, char *const argv[], const char *out_path,
                  const char *err_path);

#endif
