/* What `anvil exec --autotune` is built on, without a GPU: auto's ranking (its first candidate
 * is auto's own choice, the rest in predicted order, each planned as auto's plan with the
 * verdict it is given), the cache file (read, checked, written back), and the reading of a
 * verdict that the run and validate tables show. The measuring itself is in the GPU tests
 * (tests/gpu_kernels.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/autotune.h"
#include "proofs/proofs.h"
#include "tests/support.h"

extern const av_scheduler_ops_t av_sched_auto;

START_TEST(rank_starts_with_autos_choice) {
  av_error_t err;
  av_error_clear(&err);
  av_gpu_t gpu;
  AV_CK_OK(av_gpu_load("H200-SXM", NULL, &gpu, &err), &err);
  int64_t B[] = {1, 8, 32}, L[] = {2048, 256, 32};
  av_workload_t *w = av_test_levels(B, L, 3);
  av_heads_t h = w->heads;
  av_variants_t *vs = av_test_variants(&gpu, &h);
  av_sched_ctx_t ctx = {.workload = w, .gpu = &gpu, .variants = vs};
  av_params_t ap;
  AV_CK_OK(av_params_init(&ap, av_sched_auto.params, &err), &err);
  av_plan_t *chosen = NULL;
  AV_CK_OK(av_scheduler_plan(&av_sched_auto, &ap, &ctx, &chosen, &err), &err);
  av_auto_candidate_t c[AV_AUTOTUNE_MAX_K];
  int n = 0;
  AV_CK_OK(av_auto_rank(&ctx, &ap, c, AV_AUTOTUNE_MAX_K, &n, &err), &err);
  ck_assert_int_ge(n, 8);
  char want[128];
  snprintf(want, sizeof want, "chose=%s,", c[0].name);
  ck_assert_msg(strstr(chosen->params, want) != NULL, "auto: %s, rank[0]: %s", chosen->params,
                c[0].name);
  for (int i = 0; i < n; i++) {
    if (i) ck_assert(c[i - 1].predicted_us <= c[i].predicted_us);
    av_plan_t *p = NULL;
    AV_CK_OK(av_auto_plan_candidate(&ctx, &c[i], "chose=test", &p, &err), &err);
    ck_assert_str_eq(p->scheduler, "auto");
    ck_assert_str_eq(p->params, "chose=test");
    AV_CK_OK(av_plan_check(p, w, &err), &err);
    av_plan_destroy(p);
  }
  /* a smaller cap keeps the fastest */
  av_auto_candidate_t top[2];
  int n2 = 0;
  AV_CK_OK(av_auto_rank(&ctx, &ap, top, 2, &n2, &err), &err);
  ck_assert_int_eq(n2, 2);
  ck_assert(top[1].predicted_us >= top[0].predicted_us);
  ck_assert(top[0].predicted_us <= c[0].predicted_us + 1e-9);
  av_plan_destroy(chosen);
  av_variants_destroy(vs);
  av_workload_destroy(w);
}
END_TEST

static const char *write_tmp(const char *text) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/av_autotune_%d.json", (int)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return path;
}

START_TEST(cache_round_trip_and_bad_files) {
  av_error_t err;
  av_error_clear(&err);
  av_autotune_cache_t c;
  const char *path = write_tmp("{\"format\": \"anvil-autotune-1\", \"entries\": [{\"gpu\": "
                               "\"H100-SXM\", \"workload_hash\": \"00000000000000ff\", "
                               "\"launch\": \"streams\", \"chose\": \"query_centric\"}]}");
  AV_CK_OK(av_autotune_cache_open(path, &c, &err), &err);
  ck_assert_int_eq((int)json_array_size(c.entries), 1);
  /* nothing added: nothing written */
  AV_CK_OK(av_autotune_cache_save(&c, &err), &err);
  av_autotune_cache_close(&c);
  const char *bad[][2] = {
      {"{\"format\": \"anvil-plan-1\", \"entries\": []}", "format"},
      {"{\"format\": \"anvil-autotune-1\"}", "entries"},
      {"{\"format\": \"anvil-autotune-1\", \"entries\": [{\"gpu\": 3}]}", "entries[0]"},
      {"{\"format\": \"anvil-autotune-1\", \"entries\": [], \"extra\": 1}", "extra"},
      {"[1, 2", NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    av_error_clear(&err);
    path = write_tmp(bad[i][0]);
    ck_assert_int_ne(av_autotune_cache_open(path, &c, &err), AV_OK);
    ck_assert_msg(strstr(err.source, "av_autotune_") != NULL, "source: %s", err.source);
    if (bad[i][1])
      ck_assert_msg(strstr(err.path, bad[i][1]) != NULL, "case %d: path '%s', message %s",
                    (int)i, err.path, err.message);
    av_autotune_cache_close(&c);
  }
  remove(path);
  /* a file that does not exist yet starts empty */
  av_error_clear(&err);
  AV_CK_OK(av_autotune_cache_open(path, &c, &err), &err);
  ck_assert_int_eq((int)json_array_size(c.entries), 0);
  av_autotune_cache_close(&c);
  /* no cache at all */
  AV_CK_OK(av_autotune_cache_open(NULL, &c, &err), &err);
  ck_assert_ptr_null(c.entries);
}
END_TEST

/* A verdict's choice (brackets and the commas inside them kept), its margin, and the cell the
 * tables print; an --autotune verdict has no margin, other parameters no verdict. */
START_TEST(verdict_read_and_shown) {
  static const struct {
    const char *params, *chose, *cell;
    double margin;
  } cases[] = {
      {"model=engine,wide=off,chose=profit_pack[cost=compute],margin=0.0310,runner_up=pat",
       "profit_pack[cost=compute]", "auto\u2192profit_pack[cost=compute] (+3.1 %)", 0.031},
      {"chose=fixed_division[k=4,wide=on],margin=0.1000,runner_up=none",
       "fixed_division[k=4,wide=on]", "auto\u2192fixed_division[k=4,wide=on] (+10.0 %)", 0.1},
      {"chose=greedy_division,autotune=4,measured=greedy_division:96.7/pat:116.2",
       "greedy_division", "auto\u2192greedy_division", NAN},
      {"split=heuristic,splits=4", "", "auto", NAN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char chose[128], cell[256];
    double margin = 0;
    const int is = av_auto_verdict_parse(cases[i].params, chose, sizeof chose, &margin);
    ck_assert_int_eq(is, cases[i].chose[0] != 0);
    ck_assert_str_eq(chose, cases[i].chose);
    if (isnan(cases[i].margin))
      ck_assert_msg(isnan(margin), "%s: margin %g", cases[i].params, margin);
    else
      ck_assert_double_eq_tol(margin, cases[i].margin, 1e-12);
    av_auto_verdict_text("auto", cases[i].params, cell, sizeof cell);
    ck_assert_str_eq(cell, cases[i].cell);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("autotune");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, rank_starts_with_autos_choice);
  tcase_add_test(tc, cache_round_trip_and_bad_files);
  tcase_add_test(tc, verdict_read_and_shown);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
