/* Shared helpers for the Check test binaries. */
#ifndef AV_TEST_SUPPORT_H
#define AV_TEST_SUPPORT_H

#include <check.h>
#include <stdarg.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"
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
/* av_test_spawn of the built `anvil` with the NULL-terminated arguments in ap (at most 30),
 * in `cwd`, its stdout and stderr in io_dir/stdout and io_dir/stderr. */
int av_test_anvil_va(const char *cwd, const char *io_dir, va_list ap);

/* Workload fixtures. av_test_levels: av_workload_from_levels with av_test_heads (fails the
 * test on error). av_test_random_spec: random forests of depth 1-6, up to 512 requests and 6
 * children, nodes of 1-2048 tokens, from `seed`. */
av_workload_t *av_test_levels(const int64_t *B, const int64_t *L, int n);
av_random_spec_t av_test_random_spec(uint64_t seed);

/* Simulator fixtures. av_test_heads_hkv: 4 query heads per KV head, d 128, fp16.
 * av_test_flat_workload: n roots of the given lengths, request i at root i, block size 16.
 * av_test_request_items: one FINAL item per request r0..r1-1 (its whole root) on `launch`.
 * av_test_lens: n copies of v (caller frees). */
av_heads_t av_test_heads_hkv(int hkv);
av_workload_t *av_test_flat_workload(int n, const int64_t *len, int hkv);
void av_test_request_items(av_plan_t *p, const av_workload_t *w, int32_t launch, int r0,
                           int r1);
int64_t *av_test_lens(int n, int64_t v);

/* Plan fixtures. av_test_small_forest: levels B=[1,2,4], L=[64,32,16] (7 nodes, 4 requests
 * of 112 tokens) with av_test_heads. av_test_partial_tile: a partial m x 64 tile, 4 warps.
 * av_test_path_segs: the segments covering path tokens [b, e) of request r (at most 64);
 * returns their count. av_test_plan_qc: query-centric, request r in `pieces` even cuts of its
 * path (1 = one FINAL item); with ctas > 0 one persistent launch, items round-robin over the
 * CTAs. av_test_plan_nodes: one PARTIAL item per node over every request below it. Plans are
 * finalized; caller owns. */
av_workload_t *av_test_small_forest(void);
av_tile_t av_test_partial_tile(int m);
int32_t av_test_path_segs(const av_workload_t *w, int32_t r, int64_t b, int64_t e,
                          av_segment_t *segs);
av_plan_t *av_test_plan_qc(const av_workload_t *w, int pieces, int ctas);
av_plan_t *av_test_plan_nodes(const av_workload_t *w, int m_rows);
/* Fails unless p passes the plan checker and matches the fp64 reference on every request and
 * query head. */
void av_test_expect_exact(const av_plan_t *p, const av_workload_t *w);

/* CPU seconds (user + system) of this process's waited-for children so far: the work a child
 * did, whatever else the machine was running at the time. */
double av_test_children_cpu_s(void);

#endif
