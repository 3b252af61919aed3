/* Helpers shared by the test binaries (heads, GPU and variant fixtures, running a suite,
 * reading files, spawning the CLI). */
#include "tests/support.h"

#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "costmodels/costmodel.h"
#include "core/json_util.h"
#include "core/params.h"
#include "core/plan.h"
#include "proofs/proofs.h"
#include "profiler/profile.h"

av_heads_t av_test_heads(void) {
  av_heads_t h = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  return h;
}

av_gpu_t av_test_small_gpu(void) {
  av_gpu_t g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "test-gpu");
  g.sm_arch = 90;
  g.sm_count = 4;
  g.max_threads_per_sm = 2048;
  g.max_warps_per_sm = 64;
  g.max_ctas_per_sm = 32;
  g.max_threads_per_cta = 1024;
  g.regs_per_sm = 65536;
  g.max_regs_per_thread = 255;
  g.max_regs_per_cta = 65536;
  g.reg_alloc_unit = 256;
  g.warp_alloc_granularity = 4;
  g.smem_per_sm_bytes = 233472;
  g.smem_per_cta_max_bytes = 232448;
  g.smem_alloc_unit_bytes = 128;
  g.smem_reserved_per_cta_bytes = 1024;
  return g;
}

void av_test_tile_variants(av_variant_t out[2], int smem_bytes) {
  for (int i = 0; i < 2; i++)
    out[i] = (av_variant_t){
        .tile = {i ? AV_KERNEL_PERSISTENT : AV_KERNEL_PARTIAL, 16, 64, 4}, .head_dim = 128,
        .dtype = AV_DTYPE_FP16, .sm_arch = 90, .threads = 128, .regs_per_thread = 64,
        .smem_bytes = smem_bytes};
}

av_variants_t *av_test_variants(const av_gpu_t *g, const av_heads_t *h) {
  av_error_t err;
  av_error_clear(&err);
  av_variants_t *vs = av_variants_load(NULL, &err);
  if (vs) return vs;
  vs = calloc(1, sizeof *vs);
  ck_assert_ptr_nonnull(vs);
  vs->v = calloc(64, sizeof *vs->v);
  ck_assert_ptr_nonnull(vs->v);
  const int ms[] = {16, 32, 64, 128}, ns[] = {32, 64, 128};
  for (int kind = 0; kind < 3; kind++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) {
        if (kind != AV_KERNEL_PARTIAL && (ns[j] != 64 || ms[i] > 64)) continue;
        av_variant_t *v = &vs->v[vs->n++];
        v->tile = (av_tile_t){.kind = (av_kernel_kind_t)kind, .m_rows = ms[i],
                              .n_tokens = ns[j], .warps = 4};
        v->head_dim = h->head_dim;
        v->dtype = h->dtype;
        v->sm_arch = g->sm_arch;
        v->threads = 128;
        v->regs_per_thread = ms[i] >= 64 ? 168 : 96;
        v->smem_bytes = (ms[i] + 4 * ns[j]) * h->head_dim * 2;
      }
  return vs;
}

int av_test_run(Suite *s, int nofork) {
  SRunner *sr = srunner_create(s);
  if (nofork) srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int av_test_anvil_va(const char *cwd, const char *io_dir, va_list ap) {
  char *argv[32];
  int n = 0;
  static char bin[] = AV_BINARY_DIR "/anvil";
  argv[n++] = bin;
  for (char *a; n < 31 && (a = va_arg(ap, char *)) != NULL;) argv[n++] = a;
  argv[n] = NULL;
  char out[600], err[600];
  snprintf(out, sizeof out, "%s/stdout", io_dir);
  snprintf(err, sizeof err, "%s/stderr", io_dir);
  return av_test_spawn(cwd, argv, out, err);
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

int av_test_spawn(const char *cwd, char *const argv[], const char *out_path,
                  const char *err_path) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    if (cwd && chdir(cwd) != 0) _exit(127);
    execv(argv[0], argv);
    _exit(127);
  }
  int st;
  if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

av_costmodel_t *av_test_profile_model(const char *path, const av_gpu_t *g, const av_heads_t *h,
                                      const av_variants_t *vs, av_error_t *err) {
  const av_costmodel_ops_t *ops = av_costmodel_find("profile");
  ck_assert_ptr_nonnull(ops);
  av_params_t p;
  AV_CK_OK(av_params_init(&p, ops->params, err), err);
  char set[1200];
  snprintf(set, sizeof set, "path=%s", path);
  AV_CK_OK(av_params_set_text(&p, set, "test", err), err);
  av_cost_env_t env = {.gpu = g, .heads = h, .variants = vs};
  return av_costmodel_create(ops, &p, &env, err);
}

int av_test_bad_profiles(const char *rel, const av_gpu_t *g, const av_heads_t *h) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", AV_TEST_DIR, rel);
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  int cases = 0;
  struct dirent *ent;
  while ((ent = readdir(d))) {
    if (ent->d_name[0] == '.') continue;
    char input[1400], expect_path[1400];
    snprintf(input, sizeof input, "%s/%s/input.json", dir, ent->d_name);
    snprintf(expect_path, sizeof expect_path, "%s/%s/expected_error", dir, ent->d_name);
    char *expect = av_test_read_file(expect_path);
    ck_assert_msg(expect != NULL, "case %s has no expected_error", ent->d_name);
    char *nl = strchr(expect, '\n');
    ck_assert_msg(nl != NULL, "case %s: expected_error needs 2 lines", ent->d_name);
    *nl = '\0';
    char *msg = nl + 1;
    msg[strcspn(msg, "\n")] = '\0';
    av_error_t err;
    av_error_clear(&err);
    av_costmodel_t *m = av_test_profile_model(input, g, h, NULL, &err);
    ck_assert_msg(m == NULL, "case %s was accepted", ent->d_name);
    ck_assert_msg(strstr(err.source, "input.json") != NULL, "case %s: source '%s'", ent->d_name,
                  err.source);
    ck_assert_msg(strcmp(err.path, expect) == 0, "case %s: path '%s', expected '%s'",
                  ent->d_name, err.path, expect);
    ck_assert_msg(strstr(err.message, msg) != NULL, "case %s: message '%s' lacks '%s'",
                  ent->d_name, err.message, msg);
    free(expect);
    cases++;
  }
  closedir(d);
  return cases;
}

void av_test_profile_init(av_profile_t *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->gpu, sizeof p->gpu, "test-gpu");
  snprintf(p->command, sizeof p->command, "test");
}

av_profile_table_t *av_test_profile_table(av_profile_t *p, av_tile_t tile, const int64_t *kv,
                                          int n_kv, double fixed_us, double per_token_us) {
  av_profile_table_t *t = av_profile_add(p);
  ck_assert_ptr_nonnull(t);
  ck_assert_int_le(n_kv, (int)(sizeof t->kv / sizeof t->kv[0]));
  t->tile = tile;
  t->head_dim = 128;
  t->dtype = AV_DTYPE_FP16;
  t->n_nq = 2, t->nq[0] = 1, t->nq[1] = 16;
  t->n_kv = n_kv;
  for (int j = 0; j < n_kv; j++) t->kv[j] = kv[j];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < n_kv; j++) t->time_us[i][j] = fixed_us + per_token_us * (double)kv[j];
  return t;
}

av_profile_cores_t *av_test_profile_cores(av_profile_t *p, av_tile_t tile, int n_k) {
  ck_assert_ptr_null(p->cores);
  p->cores = calloc(1, sizeof *p->cores);
  ck_assert_ptr_nonnull(p->cores);
  p->n_cores = 1;
  av_profile_cores_t *c = &p->cores[0];
  c->tile = tile;
  c->head_dim = 128;
  c->dtype = AV_DTYPE_FP16;
  c->n_k = n_k;
  return c;
}

const char *av_test_write_profile(const struct av_profile *p, const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/%s.json", AV_BINARY_DIR, name);
  json_t *doc = av_profile_to_json(p);
  ck_assert_ptr_nonnull(doc);
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_json_dump_file(doc, path, &err), &err);
  json_decref(doc);
  return path;
}

/* --- plan fixtures ------------------------------------------------------------------- */

/* B=[1,2,4], L=[64,32,16]: 7 nodes, 4 requests of 112 tokens each; 32/8 heads (group 4). */
av_workload_t *av_test_small_forest(void) {
  int64_t B[] = {1, 2, 4}, L[] = {64, 32, 16};
  av_heads_t h = av_test_heads();
  av_error_t err;
  av_error_clear(&err);
  av_workload_t *w = av_workload_from_levels(B, L, 3, &h, &err);
  AV_CK_OK(w ? AV_OK : err.code, &err);
  return w;
}

av_tile_t av_test_partial_tile(int m) {
  av_tile_t t = {.kind = AV_KERNEL_PARTIAL, .m_rows = m, .n_tokens = 64, .warps = 4};
  return t;
}

/* Request r's path nodes root first; returns the depth. */
static int32_t path_of(const av_workload_t *w, int32_t r, int32_t *nodes) {
  int32_t n = 0, tmp[64];
  for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) tmp[n++] = u;
  for (int32_t i = 0; i < n; i++) nodes[i] = tmp[n - 1 - i];
  return n;
}

/* Segments covering path tokens [b, e) of request r. */
int32_t av_test_path_segs(const av_workload_t *w, int32_t r, int64_t b, int64_t e,
                         av_segment_t *segs) {
  int32_t nodes[64], n = path_of(w, r, nodes), ns = 0;
  int64_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t len = w->nodes[nodes[i]].kv_len_tokens;
    int64_t lo = b > off ? b : off, hi = e < off + len ? e : off + len;
    if (lo < hi) segs[ns++] = (av_segment_t){nodes[i], lo - off, hi - off};
    off += len;
  }
  return ns;
}

/* Query-centric: request r in `pieces` even cuts of its path (1 = one FINAL item). With
 * `ctas` > 0 the launch is persistent and items go round-robin over the CTAs. */
av_plan_t *av_test_plan_qc(const av_workload_t *w, int pieces, int ctas) {
  av_plan_t *p = av_plan_create(w, "test_qc");
  ck_assert_ptr_nonnull(p);
  av_tile_t t = av_test_partial_tile(16);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &t, ctas), 0);
  int32_t k = 0;
  for (int32_t r = 0; r < w->n_requests; r++) {
    int64_t len = w->request_kv_tokens[r];
    for (int i = 0; i < pieces; i++) {
      av_segment_t segs[64];
      int32_t ns = av_test_path_segs(w, r, i * len / pieces, (i + 1) * len / pieces, segs);
      int32_t cta = ctas ? k % ctas : -1, order = ctas ? k / ctas : -1;
      ck_assert_int_ge(av_plan_add_item(p, 0, (av_item_work_t){&r, 1, segs, ns},
                                        pieces > 1 ? AV_OUT_PARTIAL : AV_OUT_FINAL, cta, order),
                       0);
      k++;
    }
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  return p;
}

/* KV-centric: one PARTIAL item per node over every request below it. */
av_plan_t *av_test_plan_nodes(const av_workload_t *w, int m_rows) {
  av_plan_t *p = av_plan_create(w, "test_nodes");
  av_tile_t t = av_test_partial_tile(m_rows);
  ck_assert_int_eq(av_plan_add_launch(p, 0, &t, 0), 0);
  for (int32_t u = 0; u < w->n_nodes; u++) {
    av_segment_t s = {u, 0, w->nodes[u].kv_len_tokens};
    int32_t b = w->node_req_offsets[u], n = w->node_req_offsets[u + 1] - b;
    ck_assert_int_ge(av_plan_add_item(p, 0, (av_item_work_t){w->node_reqs + b, n, &s, 1},
                                      AV_OUT_PARTIAL, -1, -1),
                     0);
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_finalize(p, &err), &err);
  return p;
}

void av_test_expect_exact(const av_plan_t *p, const av_workload_t *w) {
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_plan_check(p, w, &err), &err);
  av_reference_opts_t o = {.seed = 7};
  av_reference_result_t res;
  AV_CK_OK(av_reference_run(p, w, &o, &res, &err), &err);
  ck_assert_int_eq(res.checked, w->n_requests * av_heads_group(&w->heads));
  ck_assert_msg(res.max_rel_err < 1e-12, "rel err %g (request %d)", res.max_rel_err,
                res.worst_request);
}

/* --- workload fixtures --------------------------------------------------------------- */

av_workload_t *av_test_levels(const int64_t *B, const int64_t *L, int n) {
  av_error_t err;
  av_error_clear(&err);
  av_heads_t h = av_test_heads();
  av_workload_t *w = av_workload_from_levels(B, L, n, &h, &err);
  AV_CK_OK(err.code, &err);
  ck_assert_ptr_nonnull(w);
  return w;
}

av_random_spec_t av_test_random_spec(uint64_t seed) {
  av_random_spec_t s = {.seed = seed,
                        .min_depth = 1,
                        .max_depth = 6,
                        .max_requests = 512,
                        .max_children = 6,
                        .min_len = 1,
                        .max_len = 2048};
  return s;
}

/* --- simulator fixtures -------------------------------------------------------------- */

av_heads_t av_test_heads_hkv(int hkv) {
  av_heads_t h = {.hq = 4 * hkv, .hkv = hkv, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  return h;
}

/* Workload: `n` roots of the given lengths, request i at root i. */
av_workload_t *av_test_flat_workload(int n, const int64_t *len, int hkv) {
  av_workload_t *w = av_workload_create(n, n);
  ck_assert_ptr_nonnull(w);
  w->heads = av_test_heads_hkv(hkv);
  w->block_size_tokens = 16;
  for (int i = 0; i < n; i++) {
    w->nodes[i].parent = -1;
    w->nodes[i].kv_len_tokens = len[i];
    w->request_node[i] = i;
  }
  av_error_t err;
  av_error_clear(&err);
  AV_CK_OK(av_workload_finalize(w, &err), &err);
  return w;
}

/* One FINAL item per request (its whole root) on launch `launch`. */
void av_test_request_items(av_plan_t *p, const av_workload_t *w, int32_t launch, int r0,
                           int r1) {
  for (int32_t r = r0; r < r1; r++) {
    av_segment_t sg = {r, 0, w->nodes[r].kv_len_tokens};
    ck_assert_int_ge(
        av_plan_add_item(p, launch, (av_item_work_t){&r, 1, &sg, 1}, AV_OUT_FINAL, -1, -1), 0);
  }
}

int64_t *av_test_lens(int n, int64_t v) {
  int64_t *l = malloc(sizeof *l * (size_t)n);
  for (int i = 0; i < n; i++) l[i] = v;
  return l;
}

double av_test_children_cpu_s(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}
