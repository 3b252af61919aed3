/* The profile file format (profile_format/): what the writer puts in the three files, the
 * reader gives back. A profile with every part measured (tables, co-residency curves, merge
 * curves with their cold times, start waves, queue curves) is written with av_profile_write,
 * read back with av_profile_read / av_profile_read_queue, and compared field by field; the
 * values are exact at the writer's rounding (1e-4 us), so equality is exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json_util.h"
#include "profile_format/profile_format.h"
#include "profile_format/profile_read.h"
#include "tests/support.h"

static const av_tile_t PART = {AV_KERNEL_PARTIAL, 64, 64, 4};
static const av_tile_t PERS = {AV_KERNEL_PERSISTENT, 16, 64, 4};

/* Two tables (a partial and a persistent variant), a curve each, a merge curve with cold
 * times, start waves for the partial one and a queue curve for the persistent one. */
static void build(av_profile_t *p) {
  const int64_t kv[] = {64, 1024, 16384};
  av_test_profile_init(p);
  av_profile_table_t *t = av_test_profile_table(p, PART, kv, 3, 3.5, 0.0125);
  t->time_us[1][2] = 411.25;  /* not the same in every row */
  av_test_profile_table(p, PERS, kv, 3, 2.25, 0.0625);
  p->cores = calloc(2, sizeof *p->cores);
  ck_assert_ptr_nonnull(p->cores);
  p->n_cores = 2;
  for (int i = 0; i < 2; i++) {
    av_profile_cores_t *c = &p->cores[i];
    c->tile = i ? PERS : PART;
    c->head_dim = 128;
    c->dtype = AV_DTYPE_FP16;
    c->n_k = 3;
    for (int k = 0; k < 3; k++) {
      c->slowdown[k] = 1 + 0.25 * k * (i + 1);
      c->dur_us[k] = 40 + 10.5 * k;
      c->hbm_dur_us[k] = 41 + 11.5 * k;
      c->hbm_GBps[k] = 1000 + 100 * k;
    }
  }
  p->n_merge = 1;
  av_profile_merge_t *m = &p->merge[0];
  m->head_dim = 128;
  m->dtype = AV_DTYPE_BF16;
  m->rows = 4;
  m->n = 3;
  for (int j = 0; j < 3; j++) {
    m->slots[j] = 1 << (2 * j);
    m->time_us[j] = 2.5 + j;
    m->time_cold_us[j] = 3.75 + 2 * j;
  }
  p->empty_cta_us = 1.125;
  p->start = calloc(1, sizeof *p->start);
  ck_assert_ptr_nonnull(p->start);
  p->n_start = 1;
  av_profile_start_t *s = &p->start[0];
  s->tile = PART;
  s->head_dim = 128;
  s->dtype = AV_DTYPE_FP16;
  s->n_k = 2;
  s->n_rows = 2;
  s->rows[0] = 1, s->rows[1] = 64;
  for (int k = 0; k < 2; k++) {
    s->ctas[k] = (k + 1) * 132;
    for (int r = 0; r < 2; r++)
      for (int j = 0; j < AV_PROF_START_KV; j++) {
        s->kv[j] = av_profile_start_kv[j];
        s->dur_us[k][r][j] = 5 + k + 0.5 * r + 0.25 * j;
      }
  }
  p->n_queue = 1;
  av_profile_queue_t *q = &p->queue[0];
  q->tile = PERS;
  q->head_dim = 128;
  q->dtype = AV_DTYPE_FP16;
  q->n = 2;
  q->loaded_ctas = 264;
  for (int j = 0; j < 2; j++) {
    q->kv[j] = 32 << (2 * j);
    q->first_us[j] = 6.5 + j, q->next_us[j] = 4.5 + j;
    q->loaded_first_us[j] = 8.25 + j, q->loaded_next_us[j] = 5.75 + j;
  }
}

static void check_grids(const av_profile_t *p, const av_profile_doc_t *d) {
  ck_assert_str_eq(d->gpu, p->gpu);
  ck_assert_int_eq(d->n, p->n);
  for (int i = 0; i < p->n; i++) {
    const av_profile_table_t *t = &p->t[i];
    const av_profile_grid_t *g = &d->t[i];
    ck_assert(av__profile_same_variant(&g->tile, g->head_dim, g->dtype, &t->tile, t->head_dim,
                                       t->dtype));
    ck_assert_int_eq(g->nx, t->n_nq);
    ck_assert_int_eq(g->ny, t->n_kv);
    for (int a = 0; a < t->n_nq; a++) ck_assert_int_eq(g->n_q[a], t->nq[a]);
    for (int b = 0; b < t->n_kv; b++) ck_assert_int_eq(g->n_kv[b], t->kv[b]);
    for (int a = 0; a < t->n_nq; a++)
      for (int b = 0; b < t->n_kv; b++)
        ck_assert_double_eq(g->time_us[(size_t)b * g->nx + a], t->time_us[a][b]);
  }
}

static void check_curves(const av_profile_t *p, const av_profile_doc_t *d) {
  ck_assert_int_eq(d->cores.n, p->n_cores);
  for (int i = 0; i < p->n_cores; i++) {
    const av_profile_cores_t *c = &p->cores[i];
    const av_profile_curve_t *r = &d->cores.c[i];
    ck_assert(av__profile_same_variant(&r->tile, r->head_dim, r->dtype, &c->tile, c->head_dim,
                                       c->dtype));
    ck_assert_int_eq(r->n, c->n_k);
    ck_assert_int_eq(r->has_dur, 1);
    for (int k = 0; k < c->n_k; k++) {
      ck_assert_double_eq(r->k[k], k + 1);
      ck_assert_double_eq(r->s[k], c->slowdown[k]);
      ck_assert_double_eq(r->dur[k], c->dur_us[k]);
    }
  }
  ck_assert_int_eq(d->merge.rows_per_cta, p->merge[0].rows);
  ck_assert_double_eq(d->merge.empty_cta_us, p->empty_cta_us);
  ck_assert_int_eq(d->merge.n, p->n_merge);
  const av_profile_merge_t *m = &p->merge[0];
  const av_profile_merge_curve_t *mc = &d->merge.c[0];
  ck_assert_int_eq(mc->head_dim, m->head_dim);
  ck_assert_int_eq(mc->dtype, m->dtype);
  ck_assert_int_eq(mc->n, m->n);
  for (int j = 0; j < m->n; j++) {
    ck_assert_double_eq(mc->slots[j], m->slots[j]);
    ck_assert_double_eq(mc->t[j], m->time_us[j]);
    ck_assert_double_eq(mc->cold[j], m->time_cold_us[j]);
  }
}

static void check_start(const av_profile_t *p, const av_profile_doc_t *d) {
  ck_assert_str_eq(d->start.from, "start");
  ck_assert_int_eq(d->start.n, p->n_start);
  const av_profile_start_t *s = &p->start[0];
  const av_profile_start_wave_t *v = &d->start.v[0];
  ck_assert(av__profile_same_variant(&v->tile, v->head_dim, v->dtype, &s->tile, s->head_dim,
                                     s->dtype));
  ck_assert_int_eq(v->n, s->n_k);
  ck_assert_int_eq(v->n_rows, s->n_rows);
  ck_assert_int_eq(v->n_kv, AV_PROF_START_KV);
  for (int j = 0; j < AV_PROF_START_KV; j++) ck_assert_int_eq(v->kv[j], s->kv[j]);
  for (int k = 0; k < s->n_k; k++) {
    ck_assert_int_eq(v->ctas[k], s->ctas[k]);
    for (int r = 0; r < s->n_rows; r++)
      for (int j = 0; j < AV_PROF_START_KV; j++)
        ck_assert_double_eq(v->dur_us[k][r][j], s->dur_us[k][r][j]);
  }
  for (int r = 0; r < s->n_rows; r++) {
    ck_assert_int_eq(v->rows[r], s->rows[r]);
    for (int j = 0; j < AV_PROF_START_KV; j++) ck_assert(isnan(v->lone_us[r][j]));
  }
}

/* The details file's queue curves as the start cost's fallback source. */
static void check_queue(const av_profile_t *p, const av_profile_starts_t *w) {
  ck_assert_str_eq(w->from, "queue");
  ck_assert_int_eq(w->n, p->n_queue);
  const av_profile_queue_t *q = &p->queue[0];
  const av_profile_start_wave_t *v = &w->v[0];
  ck_assert(av__profile_same_variant(&v->tile, v->head_dim, v->dtype, &q->tile, q->head_dim,
                                     q->dtype));
  ck_assert_int_eq(v->n, 1);
  ck_assert_int_eq(v->ctas[0], q->loaded_ctas);
  ck_assert_int_eq(v->n_kv, q->n);
  for (int j = 0; j < q->n; j++) {
    ck_assert_int_eq(v->kv[j], q->kv[j]);
    ck_assert_double_eq(v->lone_us[0][j], q->first_us[j]);
    ck_assert_double_eq(v->dur_us[0][0][j], q->loaded_first_us[j]);
  }
}

/* The profile at `out` and its details file loaded, and the profile read. */
static void read_back(const char *out, const char *dpath, json_t **root, json_t **details,
                      av_profile_doc_t *d) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_json_load_file(out, root, &err), &err);
  AV_CK_OK(av_json_load_file(dpath, details, &err), &err);
  av_jctx_t c = {.source = out, .err = &err};
  AV_CK_OK(av_profile_read(&c, *root, d), &err);
}

static void check_all(const av_profile_t *p, const av_profile_doc_t *d) {
  check_grids(p, d);
  check_curves(p, d);
  check_start(p, d);
}

START_TEST(write_then_read_is_equal) {
  av_profile_t p;
  build(&p);
  char out[1024], dpath[1100];
  snprintf(out, sizeof out, "%s/profile_format_round_trip.json", AV_BINARY_DIR);
  snprintf(dpath, sizeof dpath, "%s/profile_format_round_trip.details.json", AV_BINARY_DIR);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_profile_write(&p, out, AV_TEST_DIR "/../gpus/H200-SXM.json", &err), &err);
  json_t *root = NULL, *details = NULL;
  av_profile_doc_t d;
  read_back(out, dpath, &root, &details, &d);
  check_all(&p, &d);
  av_profile_starts_t q;
  av_jctx_t c = {.source = dpath, .err = &err};
  AV_CK_OK(av_profile_read_queue(&c, details, &q), &err);
  check_queue(&p, &q);
  av_profile_starts_free(&q);
  av_profile_doc_free(&d);
  json_decref(root);
  json_decref(details);
  av_profile_free(&p);
}
END_TEST

/* A profile without the optional steps reads back with none of their parts; a merge curve
 * measured warm only reads back with its warm times standing in for the cold ones. */
START_TEST(optional_parts_stay_absent) {
  av_profile_t p;
  const int64_t kv[] = {64, 1024};
  av_test_profile_init(&p);
  av_test_profile_table(&p, PART, kv, 2, 3.5, 0.0125);
  p.n_merge = 1;
  p.merge[0] = (av_profile_merge_t){.head_dim = 64, .dtype = AV_DTYPE_FP16, .rows = 2, .n = 1};
  p.merge[0].slots[0] = 2;
  p.merge[0].time_us[0] = 1.5;
  json_t *root = av_profile_to_json(&p);
  ck_assert_ptr_nonnull(root);
  av_error_t err;
  av_error_clear(&err);
  av_jctx_t c = {.source = "memory", .err = &err};
  av_profile_doc_t d;
  AV_CK_OK(av_profile_read(&c, root, &d), &err);
  check_grids(&p, &d);
  ck_assert_int_eq(d.cores.n, 0);
  ck_assert_int_eq(d.start.n, 0);
  ck_assert_ptr_null(d.start.from);
  ck_assert_int_eq(d.merge.n, 1);
  ck_assert_double_eq(d.merge.c[0].cold[0], 1.5);
  av_profile_doc_free(&d);
  json_decref(root);
  av_profile_free(&p);
}
END_TEST

/* A wide tile's table and co-residency curve (one point: it fills an SM alone), added to p. */
static const av_tile_t WIDE = {AV_KERNEL_PARTIAL, 128, 128, 12};
static void add_wide(av_profile_t *p) {
  const int64_t kv[] = {64, 1024, 16384};
  av_test_profile_table(p, WIDE, kv, 3, 4.75, 0.025);
  av_profile_cores_t *c = realloc(p->cores, sizeof *c * (size_t)(p->n_cores + 1));
  ck_assert_ptr_nonnull(c);
  p->cores = c;
  c = &p->cores[p->n_cores++];
  memset(c, 0, sizeof *c);
  *c = (av_profile_cores_t){.tile = WIDE, .head_dim = 128, .dtype = AV_DTYPE_FP16, .n_k = 1};
  c->slowdown[0] = 1, c->dur_us[0] = 80.5, c->hbm_dur_us[0] = 81.25, c->hbm_GBps[0] = 3000;
}

/* `anvil profile --add-tiles` adds a variant the profile lacks: the files read back as the
 * profile with that table and curve appended, the addition is recorded under "added", and a
 * profile that does not exist is an error that writes nothing. */
START_TEST(added_tiles_read_back) {
  av_profile_t p, add, want;
  build(&p);
  build(&want);
  add_wide(&want);
  av_test_profile_init(&add);
  add_wide(&add);
  snprintf(add.command, sizeof add.command, "anvil profile --add-tiles");
  char out[1024], dpath[1100];
  snprintf(out, sizeof out, "%s/profile_format_add.json", AV_BINARY_DIR);
  snprintf(dpath, sizeof dpath, "%s/profile_format_add.details.json", AV_BINARY_DIR);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_profile_write(&p, out, AV_TEST_DIR "/../gpus/H200-SXM.json", &err), &err);
  AV_CK_OK(av_profile_write_tiles(&add, out, &err), &err);
  json_t *root = NULL, *details = NULL;
  av_profile_doc_t d;
  read_back(out, dpath, &root, &details, &d);
  check_all(&want, &d);
  const json_t *added = json_array_get(json_object_get(root, "added"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(added, "command")), add.command);
  ck_assert_str_eq(json_string_value(json_array_get(json_object_get(added, "variants"), 0)),
                   "partial m128 n128 d128 fp16");
  ck_assert_int_eq(json_array_size(json_object_get(details, "occupancy")), 3);
  av_profile_doc_free(&d);
  json_decref(root);
  json_decref(details);
  snprintf(out, sizeof out, "%s/no_such_profile.json", AV_BINARY_DIR);
  av_error_clear(&err);
  ck_assert_int_eq(av_profile_write_tiles(&add, out, &err), AV_ERR_IO);
  ck_assert_int_ne(access(out, F_OK), 0);
  av_profile_free(&p);
  av_profile_free(&add);
  av_profile_free(&want);
}
END_TEST

static Suite *profile_format_suite(void) {
  Suite *s = suite_create("profile_format");
  TCase *tc = tcase_create("round_trip");
  tcase_add_test(tc, write_then_read_is_equal);
  tcase_add_test(tc, optional_parts_stay_absent);
  tcase_add_test(tc, added_tiles_read_back);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(profile_format_suite(), 0); }
