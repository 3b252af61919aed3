/* Occupancy: hand-computed cases on sm_80, sm_89 and sm_90 (the arithmetic is in the
 * comments), invalid configurations, and the table recorded on an H200 with
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor (tests/data/occupancy_h200.json, recorded by
 * bench/occupancy_probe.cu), which the model must match in every row. */
#include <jansson.h>
#include <stdio.h>

#include "core/gpu.h"
#include "core/json_util.h"
#include "core/occupancy.h"
#include "tests/support.h"

static av_gpu_t load(const char *name) {
  av_gpu_t g;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_gpu_load(name, NULL, &g, &err), &err);
  return g;
}

static void expect(const av_gpu_t *g, int threads, int regs, int smem, int ctas,
                   av_occ_limit_t limit) {
  av_occupancy_t o;
  av_occupancy(g, threads, regs, smem, &o);
  ck_assert_msg(o.ctas_per_sm == ctas && o.limit == limit,
                "%s threads=%d regs=%d smem=%d: got %d (%s), expected %d (%s) "
                "[ctas %d warps %d regs %d smem %d]",
                g->name, threads, regs, smem, o.ctas_per_sm, av_occ_limit_name(o.limit), ctas,
                av_occ_limit_name(limit), o.by_ctas, o.by_warps, o.by_regs, o.by_smem);
}

/* A100 (sm_80): 32 CTAs, 64 warps, 65536 registers in 4 sub-partitions of 16384, 164 KiB
 * (167936 B) shared memory per SM, 163 KiB opt-in per CTA, 1 KiB reserved per CTA. */
START_TEST(test_sm80_by_hand) {
  av_gpu_t g = load("A100-80GB-SXM");
  /* 8 warps; 64 regs x 32 = 2048 per warp; 16384 / 2048 = 8 warps per sub-partition,
   * 32 per SM; 32 / 8 = 4 CTAs (warps: 64 / 8 = 8; smem: 167936 / 1024 = 164). */
  expect(&g, 256, 64, 0, 4, AV_OCC_LIMIT_REGS);
  /* 48 KiB + 1 KiB reserved = 50176 B (a multiple of 128); 167936 / 50176 = 3 CTAs
   * (regs: 1024 per warp, 16 warps per sub-partition, 64 / 4 = 16; warps: 16). */
  expect(&g, 128, 32, 49152, 3, AV_OCC_LIMIT_SMEM);
  /* 1 warp: warps 64, regs 64, smem 164, CTA slots 32: the slot limit binds. */
  expect(&g, 32, 32, 0, 32, AV_OCC_LIMIT_CTAS);
  /* 37 regs x 32 = 1184, rounded to the 256-register unit = 1280 per warp; 16384 / 1280
   * = 12 warps per sub-partition, 48 per SM; 48 / 8 = 6 CTAs. */
  expect(&g, 256, 37, 0, 6, AV_OCC_LIMIT_REGS);
  /* 255 regs: 8160 -> 8192 per warp; the per-CTA check counts 3 warps as 4: 32768 <=
   * 65536, fine; 16384 / 8192 = 2 warps per sub-partition, 8 per SM; 8 / 3 = 2 CTAs. */
  expect(&g, 96, 255, 0, 2, AV_OCC_LIMIT_REGS);
  /* 100 KiB + 1 KiB = 103424 B; 167936 / 103424 = 1. */
  expect(&g, 128, 32, 102400, 1, AV_OCC_LIMIT_SMEM);
  /* The opt-in maximum fits once: 166912 + 1024 = 167936 = the SM's shared memory. */
  expect(&g, 128, 32, 166912, 1, AV_OCC_LIMIT_SMEM);
}
END_TEST

/* RTX 4090 (sm_89): 24 CTAs, 48 warps (1536 threads), 100 KiB (102400 B) shared memory per
 * SM, 99 KiB opt-in per CTA. */
START_TEST(test_sm89_by_hand) {
  av_gpu_t g = load("RTX-4090");
  /* 4 warps: warps 48 / 4 = 12; regs 1024 per warp -> 64 warps -> 16; slots 24. */
  expect(&g, 128, 32, 0, 12, AV_OCC_LIMIT_WARPS);
  /* 1 warp of 16 regs: 512 per warp, 32 per sub-partition, 128 warps; warps 48; slots 24. */
  expect(&g, 32, 16, 0, 24, AV_OCC_LIMIT_CTAS);
  /* 8 warps, 40 regs: 1280 per warp, 12 per sub-partition, 48 / 8 = 6; warps 48 / 8 = 6;
   * 16 KiB + 1 KiB = 17408 B, 102400 / 17408 = 5. */
  expect(&g, 256, 40, 16384, 5, AV_OCC_LIMIT_SMEM);
  /* 99 KiB + 1 KiB = the whole 100 KiB: one CTA. */
  expect(&g, 64, 32, 101376, 1, AV_OCC_LIMIT_SMEM);
  /* 1536 threads per SM but 1024 per CTA at most. */
  expect(&g, 1024, 32, 0, 1, AV_OCC_LIMIT_WARPS);
}
END_TEST

/* H200 (sm_90): 32 CTAs, 64 warps, 228 KiB (233472 B) per SM, 227 KiB opt-in per CTA. */
START_TEST(test_sm90_by_hand) {
  av_gpu_t g = load("H200-SXM");
  /* 100000 + 1024 = 101024 -> 101120 (128-byte units); 233472 / 101120 = 2 (regs: 96 x 32
   * = 3072 per warp, 16384 / 3072 = 5 per sub-partition, 20 / 4 = 5). */
  expect(&g, 128, 96, 100000, 2, AV_OCC_LIMIT_SMEM);
  /* 128 regs: 4096 per warp, 4 per sub-partition, 16 per SM, 16 / 4 = 4 CTAs;
   * smem 20480 + 1024 = 21504, 233472 / 21504 = 10. */
  expect(&g, 128, 128, 20480, 4, AV_OCC_LIMIT_REGS);
  /* 32 warps of 64 regs: 2048 x 32 = 65536 = the per-CTA maximum; 8 per sub-partition,
   * 32 per SM: 1 CTA (warps: 64 / 32 = 2). */
  expect(&g, 1024, 64, 0, 1, AV_OCC_LIMIT_REGS);
  /* 16 warps of 24 regs: 768 per warp, 21 per sub-partition, 84 / 16 = 5; warps 4. */
  expect(&g, 512, 24, 0, 4, AV_OCC_LIMIT_WARPS);
  /* 227 KiB + 1 KiB reserved = 228 KiB: exactly one CTA. */
  expect(&g, 128, 32, 232448, 1, AV_OCC_LIMIT_SMEM);
  expect(&g, 32, 24, 0, 32, AV_OCC_LIMIT_CTAS);
  /* A tie: 4 warps of 32 regs, 1024 per warp, 16 per sub-partition, 64 / 4 = 16 CTAs, and
   * warps 64 / 4 = 16 too; the registers, which a user can change, are named. */
  expect(&g, 128, 32, 0, 16, AV_OCC_LIMIT_REGS);
}
END_TEST

START_TEST(test_invalid) {
  av_gpu_t g = load("H200-SXM");
  expect(&g, 1056, 32, 0, 0, AV_OCC_LIMIT_INVALID);    /* > 1024 threads per CTA */
  expect(&g, 0, 32, 0, 0, AV_OCC_LIMIT_INVALID);
  expect(&g, 128, 256, 0, 0, AV_OCC_LIMIT_INVALID);    /* > 255 registers per thread */
  expect(&g, 128, 32, 232449, 0, AV_OCC_LIMIT_INVALID); /* > 227 KiB opt-in */
  expect(&g, 128, 32, -1, 0, AV_OCC_LIMIT_INVALID);
  /* 72 regs x 32 = 2304 per warp x 32 warps = 73728 > 65536 registers per CTA. */
  expect(&g, 1024, 72, 0, 0, AV_OCC_LIMIT_INVALID);
  /* 5 warps of 255 regs: the hardware check rounds to 8 warps: 8 x 8192 = 65536, fits;
   * 2 warps per sub-partition, 8 per SM, 8 / 5 = 1. */
  expect(&g, 160, 255, 0, 1, AV_OCC_LIMIT_REGS);
  /* 9 warps of 255 regs: 12 x 8192 = 98304 > 65536: cannot launch. */
  expect(&g, 288, 255, 0, 0, AV_OCC_LIMIT_INVALID);
  ck_assert_str_eq(av_occ_limit_name(AV_OCC_LIMIT_REGS), "registers");
}
END_TEST

/* Every row recorded on the H200 matches the model, and the device's properties match the
 * H200 spec the model reads. */
START_TEST(test_h200_table) {
  av_gpu_t g = load("H200-SXM");
  json_t *root;
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_json_load_file(AV_TEST_DIR "/data/occupancy_h200.json", &root, &err), &err);
  ck_assert(json_is_string(json_object_get(root, "command")));
  ck_assert(json_is_string(json_object_get(root, "date")));
  json_t *props = json_object_get(root, "props");
  ck_assert_int_eq(json_integer_value(json_object_get(props, "multiProcessorCount")),
                   g.sm_count);
  ck_assert_int_eq(json_integer_value(json_object_get(props, "sharedMemPerMultiprocessor")),
                   g.smem_per_sm_bytes);
  ck_assert_int_eq(json_integer_value(json_object_get(props, "sharedMemPerBlockOptin")),
                   g.smem_per_cta_max_bytes);
  ck_assert_int_eq(json_integer_value(json_object_get(props, "reservedSharedMemPerBlock")),
                   g.smem_reserved_per_cta_bytes);
  ck_assert_int_eq(json_integer_value(json_object_get(props, "regsPerMultiprocessor")),
                   g.regs_per_sm);
  ck_assert_int_eq(json_integer_value(json_object_get(props, "maxBlocksPerMultiProcessor")),
                   g.max_ctas_per_sm);
  ck_assert_int_eq(json_integer_value(json_object_get(props, "maxThreadsPerMultiProcessor")),
                   g.max_threads_per_sm);
  json_t *rows = json_object_get(root, "rows");
  ck_assert_int_ge((int)json_array_size(rows), 1000);
  size_t i, mismatches = 0, zeros = 0;
  json_t *row;
  char first[256] = "";
  json_array_foreach(rows, i, row) {
    int t = (int)json_integer_value(json_object_get(row, "threads"));
    int r = (int)json_integer_value(json_object_get(row, "regs"));
    int s = (int)json_integer_value(json_object_get(row, "smem"));
    int want = (int)json_integer_value(json_object_get(row, "ctas_per_sm"));
    av_occupancy_t o;
    av_occupancy(&g, t, r, s, &o);
    if (want == 0) zeros++;
    if (o.ctas_per_sm != want && mismatches++ == 0)
      snprintf(first, sizeof first, "rows[%zu] threads=%d regs=%d smem=%d: model %d, GPU %d",
               i, t, r, s, o.ctas_per_sm, want);
    if ((o.ctas_per_sm == 0) != (o.limit == AV_OCC_LIMIT_INVALID) && mismatches++ == 0)
      snprintf(first, sizeof first, "rows[%zu]: limit %s with %d CTAs", i,
               av_occ_limit_name(o.limit), o.ctas_per_sm);
  }
  json_decref(root);
  ck_assert_msg(mismatches == 0, "%zu mismatches; first: %s", mismatches, first);
  ck_assert_int_gt(zeros, 0); /* the table exercises the cannot-launch cases too */
}
END_TEST

static Suite *occupancy_suite(void) {
  Suite *s = suite_create("occupancy");
  TCase *t = tcase_create("occupancy");
  tcase_add_test(t, test_sm80_by_hand);
  tcase_add_test(t, test_sm89_by_hand);
  tcase_add_test(t, test_sm90_by_hand);
  tcase_add_test(t, test_invalid);
  tcase_add_test(t, test_h200_table);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return av_test_run(occupancy_suite(), 0); }
