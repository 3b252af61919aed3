/* The experiment-level calls of the public C API (include/anvil/): each runs what its
 * `anvil` command runs and hands its rows to a callback instead of printing them; their
 * errors are the lines the command prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/anvil.h"
#include "tests/support.h"

#define API_OK(call, e) ck_assert_msg((call) == ANVIL_OK, "%s", (e)->message)

typedef struct trace_seen {
  int starts, rows, stop_at;
  int32_t steps_at_start, reused;
  double total_us;
} trace_seen_t;

static void trace_start(const anvil_trace_start_t *s, void *user) {
  trace_seen_t *t = user;
  ck_assert_int_eq(t->rows, 0);
  ck_assert_str_eq(s->scheduler, "profit_pack");
  ck_assert_str_eq(s->cost_model, "roofline");
  ck_assert_str_eq(s->gpu, "H200-SXM");
  t->starts++;
  t->steps_at_start = s->steps;
}

static int trace_row(const anvil_trace_row_t *r, void *user) {
  trace_seen_t *t = user;
  ck_assert_int_eq(r->step, t->rows);
  ck_assert_msg(r->predicted_us > 0 && r->items > 0, "step %d", r->step);
  t->rows++;
  t->reused += r->reused;
  t->total_us += r->predicted_us;
  return t->stop_at >= 0 && r->step == t->stop_at;
}

START_TEST(test_trace_rows) {
  anvil_trace_options_t o;
  anvil_trace_options_default(&o);
  o.path = "tests/data/workloads/trace_good.jsonl";
  o.scheduler = "profit_pack";
  o.on_start = trace_start;
  trace_seen_t seen = {.stop_at = -1};
  anvil_trace_summary_t s;
  anvil_error_t err;
  API_OK(anvil_trace(&o, trace_row, &seen, &s, &err), &err);
  ck_assert_int_eq(seen.starts, 1);
  ck_assert_int_eq(seen.steps_at_start, 3);
  ck_assert_int_eq(seen.rows, 3);
  ck_assert_int_eq(s.steps, 3);
  ck_assert_int_eq(s.plans + s.reused, 3);
  ck_assert_int_eq(s.reused, seen.reused);
  ck_assert_msg(fabs(s.total_us - seen.total_us) < 1e-9, "%g vs %g", s.total_us, seen.total_us);
}
END_TEST

START_TEST(test_trace_errors) {
  anvil_trace_options_t o;
  anvil_trace_options_default(&o);
  o.path = "tests/data/workloads/trace_good.jsonl";
  anvil_error_t err;
  ck_assert_int_eq(anvil_trace(&o, NULL, NULL, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message,
                   "trace: --scheduler: missing; name the scheduler (anvil list shows them)");
  o.scheduler = "profit_pack";
  o.sim = "exact";
  ck_assert_int_eq(anvil_trace(&o, NULL, NULL, NULL, &err), ANVIL_ERR_NAME);
  ck_assert_msg(strstr(err.message, "trace: --sim: "), "%s", err.message);
  o.sim = "engine";
  trace_seen_t seen = {.stop_at = 1};
  ck_assert_int_eq(anvil_trace(&o, trace_row, &seen, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_int_eq(seen.rows, 2);
  ck_assert_msg(strstr(err.message, "stopped by the row callback at step 1"), "%s",
                err.message);
}
END_TEST

typedef struct replay_seen {
  int reports, rows, merge_rows;
  double predicted_us;
} replay_seen_t;

static void replay_report(const anvil_replay_report_t *r, void *user) {
  replay_seen_t *s = user;
  ck_assert_int_eq(s->rows, 0);
  ck_assert_int_eq(r->plan_items, 8);
  ck_assert_int_eq(r->kv_heads, 2);
  ck_assert_int_eq(r->cta_records, 17);
  ck_assert_int_eq(r->merge_records, 1);
  ck_assert_str_eq(r->trace_gpu, "H200-SXM");
  ck_assert_int_eq(r->n_launches, r->plan_launches);
  ck_assert_msg(r->launches[0].ctas == 16 && r->replayed_us > 0, "%d CTAs, %g us",
                r->launches[0].ctas, r->replayed_us);
  ck_assert_msg(fabs(r->measured_us - 12.5) < 1e-12, "%g", r->measured_us);
  s->reports++;
}

static int replay_row(const anvil_replay_row_t *r, void *user) {
  replay_seen_t *s = user;
  if (s->rows) ck_assert_double_eq(r->predicted_makespan_us, s->predicted_us);
  s->predicted_us = r->predicted_makespan_us;
  if (r->launch < 0) {
    s->merge_rows++;
    ck_assert_int_eq(r->m_rows, 0);
  } else {
    ck_assert_msg(r->m_rows > 0 && r->n_tokens > 0 && r->ctas == 16, "launch %d", r->launch);
  }
  s->rows++;
  return 0;
}

START_TEST(test_replay_rows) {
  anvil_replay_options_t o = {.plan = "tests/data/replay/h200_plan.json",
                              .trace = "tests/data/replay/h200_trace.json",
                              .cost_model = "roofline", .on_report = replay_report};
  replay_seen_t seen = {0};
  anvil_replay_summary_t s;
  anvil_error_t err;
  API_OK(anvil_replay(&o, replay_row, &seen, &s, &err), &err);
  ck_assert_int_eq(seen.reports, 1);
  ck_assert_int_eq(seen.rows, 2);
  ck_assert_int_eq(seen.merge_rows, 1);
  ck_assert_int_eq(s.compared, 1);
  ck_assert_double_eq(s.predicted_us, seen.predicted_us);
  o.cost_model = "nope";
  ck_assert_int_eq(anvil_replay(&o, NULL, NULL, &s, &err), ANVIL_ERR_NAME);
  ck_assert_msg(strstr(err.message, "replay: --cost-model: unknown cost model 'nope'"), "%s",
                err.message);
  o.cost_model = NULL;
  o.trace = NULL;
  ck_assert_int_eq(anvil_replay(&o, NULL, NULL, &s, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message, "replay: --trace: missing");
}
END_TEST

typedef struct table2_seen {
  int starts, cells, measured_cells;
  double prev_us;
} table2_seen_t;

static void table2_start(void *user) {
  table2_seen_t *t = user;
  ck_assert_int_eq(t->cells, 0);
  t->starts++;
}

/* Cells in row order; a CTA over more KV tokens takes longer. */
static int table2_cell(const anvil_table2_cell_t *c, void *user) {
  table2_seen_t *t = user;
  const int per_table = ANVIL_TABLE2_ROWS * ANVIL_TABLE2_COLS;
  ck_assert_int_eq(c->row * ANVIL_TABLE2_COLS + c->col, t->cells % per_table);
  ck_assert_int_eq(c->table, t->cells / per_table);
  ck_assert_str_eq(c->gpu, "H200-SXM");
  if (c->col > 0) ck_assert_msg(c->us > t->prev_us, "cell %d,%d: %g", c->row, c->col, c->us);
  t->prev_us = c->us;
  t->cells++;
  t->measured_cells += c->measured;
  return 0;
}

START_TEST(test_table2_cells) {
  const char *gpus[] = {"H200-SXM"};
  anvil_table2_options_t o = {.gpus = gpus, .n_gpus = 1, .measured = "profiles/H200-SXM.json",
                              .on_start = table2_start};
  table2_seen_t seen = {0};
  anvil_error_t err;
  API_OK(anvil_table2(&o, table2_cell, &seen, &err), &err);
  ck_assert_int_eq(seen.starts, 1);
  ck_assert_int_eq(seen.cells, 2 * ANVIL_TABLE2_ROWS * ANVIL_TABLE2_COLS);
  ck_assert_int_eq(seen.measured_cells, ANVIL_TABLE2_ROWS * ANVIL_TABLE2_COLS);
  ck_assert_int_eq(anvil_table2_rows()[ANVIL_TABLE2_ROWS - 1], 16);
  o.n_gpus = 0;
  o.measured = NULL;
  ck_assert_int_eq(anvil_table2(&o, NULL, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message, "table2: give at least one --gpu NAME or --measured FILE");
}
END_TEST

/* Rows by index: a run's, and the merge of its two shards'. */
enum { MAX_ROWS = 1024 };
typedef struct rows_seen {
  int heads, rows, failed;
  double predicted_us[MAX_ROWS];
  char name[64];
} rows_seen_t;

static void rows_head(const anvil_results_head_t *h, void *user) {
  rows_seen_t *r = user;
  ck_assert_int_eq(r->rows, 0);
  snprintf(r->name, sizeof r->name, "%s", h->name);
  r->failed = h->failed;
  r->heads++;
}

static int rows_row(const anvil_result_row_t *x, void *user) {
  rows_seen_t *r = user;
  ck_assert_msg(x->index >= 0 && x->index < MAX_ROWS, "row %lld", (long long)x->index);
  ck_assert_msg(x->status != ANVIL_OK || (x->predicted_us > 0 && x->items > 0 &&
                                          x->predicted_us >= x->floor_us * 0.999),
                "row %lld", (long long)x->index);
  r->predicted_us[x->index] = x->predicted_us;
  r->rows++;
  return 0;
}

START_TEST(test_run_shards_merge) {
  char tmp[] = "/tmp/anvil_api_run_XXXXXX", out[3][300], cmd[400];
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  for (int i = 0; i < 3; i++) snprintf(out[i], sizeof out[i], "%s/%d", tmp, i);
  static rows_seen_t whole, part, merged;
  anvil_run_options_t o = {.experiment = "experiments/quickstart.json", .out_dir = out[0],
                           .jobs = 2, .on_head = rows_head};
  anvil_error_t err;
  int root = 0;
  API_OK(anvil_run_files(&o, rows_row, &whole, &root, &err), &err);
  ck_assert_int_eq(root, 1);
  ck_assert_int_eq(whole.heads, 1);
  ck_assert_int_eq(whole.failed, 0);
  ck_assert_msg(whole.rows > 2, "%d rows", whole.rows);
  for (int s = 0; s < 2; s++) {
    o.out_dir = out[1 + s];
    o.shard_index = s;
    o.shard_count = 2;
    memset(&part, 0, sizeof part);
    API_OK(anvil_run_files(&o, rows_row, &part, NULL, &err), &err);
    ck_assert_msg(part.rows > 0 && part.rows < whole.rows, "shard %d: %d rows", s, part.rows);
  }
  const char *dirs[] = {out[1], out[2]};
  char merged_dir[320];
  snprintf(merged_dir, sizeof merged_dir, "%s/merged", tmp);
  anvil_merge_options_t m = {.dirs = dirs, .n_dirs = 2, .out = merged_dir,
                             .on_head = rows_head};
  API_OK(anvil_merge(&m, rows_row, &merged, &err), &err);
  ck_assert_int_eq(merged.rows, whole.rows);
  ck_assert_str_eq(merged.name, whole.name);
  for (int i = 0; i < whole.rows; i++)
    ck_assert_msg(merged.predicted_us[i] == whole.predicted_us[i], "row %d", i);
  m.n_dirs = 1;   /* one shard alone is not the experiment */
  snprintf(merged_dir, sizeof merged_dir, "%s/merged1", tmp);
  ck_assert_int_eq(anvil_merge(&m, NULL, NULL, &err), ANVIL_ERR_MISMATCH);
  ck_assert_msg(strstr(err.message, "give every shard's directory"), "%s", err.message);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

typedef struct validate_seen {
  int rows, summaries, recorded_measurements;
  anvil_validate_summary_t s;
  char worst[128];
} validate_seen_t;

static int validate_row(const anvil_validate_row_t *r, void *user) {
  validate_seen_t *v = user;
  ck_assert_msg(r->predicted_us > 0 && r->floor_us > 0 && r->measured_us > 0, "row %d",
                v->rows);
  v->recorded_measurements += r->measured_min_us <= r->measured_us &&
                              r->measured_us <= r->measured_max_us;
  v->rows++;
  return 0;
}

static void validate_summary(const anvil_validate_summary_t *s, void *user) {
  validate_seen_t *v = user;
  ck_assert_int_eq(v->summaries, 0);
  v->summaries++;
  v->s = *s;
  snprintf(v->worst, sizeof v->worst, "%s", s->worst_batch ? s->worst_batch : "");
  int pairs = 0;
  for (int k = 0; k < s->n_schedulers; k++) pairs += s->schedulers[k].pairs;
  ck_assert_int_eq(pairs, s->pairs);
}

START_TEST(test_validate_offline_rows) {
  anvil_validate_options_t o = {.offline = "results/h100/validation/heldout/validation.json",
                                .on_summary = validate_summary};
  static validate_seen_t seen;
  anvil_error_t err;
  API_OK(anvil_validate(&o, validate_row, &seen, &err), &err);
  ck_assert_int_eq(seen.rows, 231);
  ck_assert_int_eq(seen.recorded_measurements, 231);
  ck_assert_int_eq(seen.summaries, 1);
  ck_assert_int_eq(seen.s.offline, 1);
  ck_assert_int_eq(seen.s.rows, 231);
  ck_assert_int_eq(seen.s.overall, 1);
  ck_assert_int_eq(seen.s.pairs, 231);
  ck_assert_ptr_null(seen.s.dir);
  ck_assert_msg(seen.s.mape > 0 && seen.s.mape < seen.s.worst_ape && seen.worst[0], "%g %g",
                seen.s.mape, seen.s.worst_ape);
  o.offline = "tests/data/nope.json";
  ck_assert_int_eq(anvil_validate(&o, NULL, NULL, &err), ANVIL_ERR_IO);
  ck_assert_msg(strstr(err.message, "tests/data/nope.json"), "%s", err.message);
  o.offline = NULL;
  ck_assert_int_eq(anvil_validate(&o, NULL, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_msg(strstr(err.message, "missing the experiment file"), "%s", err.message);
}
END_TEST

/* The checks made before the device is opened: they hold with a GPU or without. */
START_TEST(test_profile_checks) {
  anvil_profile_options_t o = {.graph_only = 1, .pdl_only = 1};
  anvil_error_t err;
  ck_assert_int_eq(anvil_profile(&o, NULL, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message, "profile: --graph-only: --graph-only, --pdl-only and --add-tiles "
                                "are separate runs; give one");
  o = (anvil_profile_options_t){.out = "tests"};
  ck_assert_int_eq(anvil_profile(&o, NULL, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message, "profile: --out: 'tests' is a directory, not a file");
  o = (anvil_profile_options_t){.out = "tests/data/no_profile.json", .add_tiles = 1};
  ck_assert_int_eq(anvil_profile(&o, NULL, NULL, &err), ANVIL_ERR_IO);
  ck_assert_msg(strstr(err.message, "'tests/data/no_profile.spec.json' does not exist"), "%s",
                err.message);
}
END_TEST

/* The checks made before the device is opened, and the names of the run's modes. */
START_TEST(test_exec_checks) {
  ck_assert_int_eq(anvil_l2_flush_from_name("read"), ANVIL_L2_FLUSH_READ);
  ck_assert_int_eq(anvil_l2_flush_from_name("none"), ANVIL_L2_FLUSH_NONE);
  ck_assert_int_eq(anvil_l2_flush_from_name("hot"), -1);
  ck_assert_int_eq(anvil_kv_copy_from_name("cp_async"), ANVIL_KV_COPY_CP_ASYNC);
  ck_assert_int_eq(anvil_kv_copy_from_name("dma"), -1);
  anvil_exec_options_t o;
  anvil_exec_options_default(&o);
  ck_assert_int_eq(o.l2_flush, ANVIL_L2_FLUSH_READ);
  ck_assert_int_eq(o.kv_copy, ANVIL_KV_COPY_EXPERIMENT);
  ck_assert_msg(o.verify && o.repeats > 0, "defaults");
  anvil_error_t err;
  ck_assert_int_eq(anvil_exec_experiment(&o, NULL, NULL, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message,
                   "exec: give an experiment file or --plan PLAN.json (exactly one)");
  o.experiment = "experiments/quickstart.json";
  o.gpu_spec = "RTX-4090";
  ck_assert_int_eq(anvil_exec_experiment(&o, NULL, NULL, NULL, &err), ANVIL_ERR_MISMATCH);
  ck_assert_msg(strstr(err.message, "--gpu-spec 'RTX-4090' is not a GPU of this experiment"),
                "%s", err.message);
}
END_TEST

/* What `anvil --version` prints, and the registration every scheduler lookup makes. */
START_TEST(test_init_and_commit) {
  anvil_error_t err;
  API_OK(anvil_init(&err), &err);
  API_OK(anvil_init(&err), &err);   /* once per process: a second call is no mistake */
  const char *c = anvil_git_commit();   /* a commit, or "unknown" outside a git tree */
  ck_assert_msg(c && (!strcmp(c, "unknown") || strspn(c, "0123456789abcdef") == 40), "'%s'", c);
}
END_TEST

typedef struct models_seen {
  int n, has_auto, enums, enums_with_choices;
} models_seen_t;

static void model_seen(const anvil_model_info_t *m, void *user) {
  models_seen_t *s = user;
  s->n++;
  s->has_auto |= !strcmp(m->name, "auto");
  for (int i = 0; i < m->n_params; i++)
    if (m->params[i].type == ANVIL_PARAM_ENUM) {
      s->enums++;
      s->enums_with_choices += m->params[i].choices && strchr(m->params[i].choices, ',');
    }
}

START_TEST(test_catalog) {
  char **names = NULL;
  int n = 0;
  anvil_error_t err;
  API_OK(anvil_gpu_names(&names, &n, &err), &err);
  int h200 = -1;
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], "H200-SXM")) h200 = i;
  ck_assert_int_ge(h200, 0);
  anvil_gpu_info_t g;
  API_OK(anvil_gpu_info(names[h200], &g, &err), &err);
  ck_assert_int_eq(g.sm_count, 132);
  ck_assert_int_eq(g.sm_arch, 90);
  ck_assert_int_eq(g.profiled, 1);
  for (int i = 0; i < n; i++) anvil_free(names[i]);
  anvil_free(names);
  ck_assert_int_eq(anvil_gpu_info("B300", &g, &err), ANVIL_ERR_NAME);
  models_seen_t sch = {0}, cm = {0};
  anvil_schedulers_info(model_seen, &sch);
  anvil_cost_models_info(model_seen, &cm);
  ck_assert_msg(sch.n > 5 && sch.has_auto && sch.enums && sch.enums == sch.enums_with_choices,
                "%d schedulers, auto %d, %d enums", sch.n, sch.has_auto, sch.enums);
  ck_assert_msg(cm.n >= 2 && !cm.has_auto, "%d cost models", cm.n);
}
END_TEST

typedef struct check_seen {
  int exact, reference;
  double max_rel_err;
} check_seen_t;

static void check_exact(const anvil_check_exact_t *x, void *user) {
  check_seen_t *c = user;
  ck_assert_int_eq(c->reference, 0);
  ck_assert_msg(x->items == 8 && x->requests == 4 && !strcmp(x->scheduler, "profit_pack"),
                "%d items, %d requests, %s", x->items, x->requests, x->scheduler);
  c->exact++;
}

static void check_reference(const anvil_check_reference_t *r, void *user) {
  check_seen_t *c = user;
  c->reference++;
  c->max_rel_err = r->max_rel_err;
  ck_assert_int_gt(r->checked, 0);
}

START_TEST(test_check_plan_file) {
  anvil_check_options_t o;
  anvil_check_options_default(&o);
  o.path = "tests/data/replay/h200_plan.json";
  o.on_exact = check_exact;
  o.on_reference = check_reference;
  check_seen_t seen = {0};
  anvil_error_t err;
  API_OK(anvil_check(&o, &seen, &err), &err);
  ck_assert_msg(seen.exact == 1 && seen.reference == 1 && seen.max_rel_err < 1e-9, "%g",
                seen.max_rel_err);
  o.tolerance = seen.max_rel_err / 2;   /* a reference off by more than the tolerance */
  seen = (check_seen_t){0};
  ck_assert_int_eq(anvil_check(&o, &seen, &err), ANVIL_ERR_PLAN);
  ck_assert_msg(strstr(err.message, "tests/data/replay/h200_plan.json: the CPU reference"),
                "%s", err.message);
  o.path = NULL;
  ck_assert_int_eq(anvil_check(&o, NULL, &err), ANVIL_ERR_USAGE);
}
END_TEST

static void count_level(const anvil_describe_level_t *l, void *user) {
  int *nodes = user;
  *nodes += l->nodes;
}

/* The figures of B=[1,4] L=[128,32]: 5 nodes over two depths, 4 requests sharing the root. */
START_TEST(test_describe_and_plan_file) {
  anvil_describe_options_t d = {.levels = "B=1,4 L=128,32"};
  anvil_description_t x;
  int nodes = 0;
  anvil_error_t err;
  API_OK(anvil_describe(&d, count_level, &nodes, &x, &err), &err);
  ck_assert_int_eq(nodes, 5);
  ck_assert_int_eq(x.nodes, 5);
  ck_assert_int_eq(x.requests, 4);
  ck_assert_int_eq(x.unique_kv_tokens, 128 + 4 * 32);
  ck_assert_int_eq(x.query_centric_kv_tokens, 4 * (128 + 32));
  ck_assert_str_eq(x.gpu, "H200-SXM");
  ck_assert_msg(x.floor_unique_us > 0 && x.floor_us >= x.floor_unique_us, "%g", x.floor_us);
  d.spec = "tests/data/replay/h200_plan.json";   /* a spec and --levels: one too many */
  ck_assert_int_eq(anvil_describe(&d, NULL, NULL, NULL, &err), ANVIL_ERR_USAGE);
  char tmp[] = "/tmp/anvil_api_plan_XXXXXX", out[300], cmd[300];
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  snprintf(out, sizeof out, "%s/plan.json", tmp);
  anvil_plan_file_options_t p = {.levels = "B=1,4 L=512,64", .scheduler = "profit_pack",
                                 .q_heads = 8, .kv_heads = 2, .out = out,
                                 .launch = anvil_launch_from_name("graph")};
  anvil_plan_file_result_t r;
  API_OK(anvil_plan_file(&p, &r, &err), &err);
  ck_assert_str_eq(r.scheduler, "profit_pack");
  ck_assert_int_eq(r.items, 8);
  anvil_plan_t *plan = NULL;
  API_OK(anvil_plan_load(out, &plan, &err), &err);
  API_OK(anvil_plan_check(plan, &err), &err);
  ck_assert_str_eq(anvil_plan_launch(plan), "graph");
  anvil_plan_destroy(plan);
  p.scheduler = NULL;
  ck_assert_int_eq(anvil_plan_file(&p, NULL, &err), ANVIL_ERR_USAGE);
  ck_assert_str_eq(err.message,
                   "plan: --scheduler: missing; name the scheduler (anvil list shows them)");
  ck_assert_int_eq(anvil_launch_from_name("cuda"), -1);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *commands_suite(void) {
  Suite *s = suite_create("api_commands");
  TCase *tc = tcase_create("api_commands");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_trace_rows);
  tcase_add_test(tc, test_trace_errors);
  tcase_add_test(tc, test_replay_rows);
  tcase_add_test(tc, test_table2_cells);
  tcase_add_test(tc, test_run_shards_merge);
  tcase_add_test(tc, test_validate_offline_rows);
  tcase_add_test(tc, test_profile_checks);
  tcase_add_test(tc, test_exec_checks);
  tcase_add_test(tc, test_init_and_commit);
  tcase_add_test(tc, test_catalog);
  tcase_add_test(tc, test_check_plan_file);
  tcase_add_test(tc, test_describe_and_plan_file);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return av_test_run(commands_suite(), 0); }
