/* The `anvil` program's happy paths, run as a user would run them (the built binary in a
 * child process): run writes results.json/results.csv and ends with the summary line; plan
 * writes a plan that check proves exact; describe, list and every --help exit 0. The
 * failure paths are data: tests/bad_input/ (test_bad_input.c). */
#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/files.h"
#include "cli/cli_util.h"
#include "pipeline/experiment.h"
#include "tests/support.h"

static char g_tmp[256];

/* Runs anvil with the given arguments (NULL-terminated) in `cwd`; stdout and stderr land
 * in g_tmp/stdout and g_tmp/stderr. Returns the exit status. */
static int anvil(const char *cwd, ...) {
  va_list ap;
  va_start(ap, cwd);
  const int rc = av_test_anvil_va(cwd, g_tmp, ap);
  va_end(ap);
  return rc;
}

static char *tmp_file(const char *name) {
  static char buf[4][400];
  static int k;
  char *b = buf[k++ % 4];
  snprintf(b, sizeof buf[0], "%s/%s", g_tmp, name);
  return b;
}

static char *output(const char *which) { return av_test_read_file(tmp_file(which)); }

static void setup(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/anvil_cli_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_tmp));
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  ck_assert_int_eq(system(cmd), 0);
}

/* The last line of text (without its newline). */
static const char *last_line(char *text) {
  size_t n = strlen(text);
  while (n && text[n - 1] == '\n') text[--n] = '\0';
  char *nl = strrchr(text, '\n');
  return nl ? nl + 1 : text;
}

/* CSV fields: plain names stay plain; commas, quotes and newlines are quoted (RFC 4180), as
 * FlashInfer's batch names "U(512,2048) b=4" need; truncation reports the needed length. */
START_TEST(csv_field_quoting) {
  static const struct {
    const char *in, *out;
  } cases[] = {{"pat-3", "pat-3"},
               {"U(512,2048) b=4", "\"U(512,2048) b=4\""},
               {"say \"hi\"", "\"say \"\"hi\"\"\""},
               {"a\nb", "\"a\nb\""},
               {"", ""}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    const size_t n = av_csv_field(buf, sizeof buf, cases[i].in);
    ck_assert_str_eq(buf, cases[i].out);
    ck_assert_uint_eq(n, strlen(cases[i].out));
  }
  char small[4];
  ck_assert_uint_eq(av_csv_field(small, sizeof small, "x,y"), 5);
  ck_assert_str_eq(small, "\"x,");
}
END_TEST

/* A carriage return is quoted like a line feed (it would split the row), and a text a
 * spreadsheet would run as a formula gets a single quote before it inside quotes; a number
 * that begins with '-' or '+' stays a number. */
START_TEST(csv_field_defuses_formulas) {
  static const struct {
    const char *in, *out;
  } cases[] = {{"a\rb", "\"a\rb\""},
               {"=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""},
               {"+1+2", "\"'+1+2\""},
               {"-cmd", "\"'-cmd\""},
               {"@SUM(A1)", "\"'@SUM(A1)\""},
               {"\tx", "\"'\tx\""},
               {"\rx", "\"'\rx\""},
               {"-1.5", "-1.5"},
               {"+2e3", "+2e3"},
               {"a=b", "a=b"},
               {"-", "\"'-\""}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    const size_t n = av_csv_field(buf, sizeof buf, cases[i].in);
    ck_assert_str_eq(buf, cases[i].out);
    ck_assert_uint_eq(n, strlen(cases[i].out));
  }
}
END_TEST

/* Labels holding control characters and formulas: the table escapes them (an ESC cannot
 * reach the terminal, a line feed cannot forge a row) and results.csv quotes and defuses
 * them. */
START_TEST(run_hostile_labels) {
  char *exp = tmp_file("hostile.json");
  FILE *f = fopen(exp, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"name\": \"hostile\", \"gpu\": \"H200-SXM\", "
        "\"workloads\": [{\"kind\": \"levels\", \"B\": [1, 4], \"L\": [128, 32]}], "
        "\"schedulers\": [{\"name\": \"node_naive\", \"label\": \"=1+2\"}, "
        "{\"name\": \"query_centric\", \"label\": \"a\\r\\u001b[2J\\nb\"}]}", f);
  fclose(f);
  char *dir = tmp_file("hostile");
  int rc = anvil(NULL, "run", exp, "--out", dir, NULL);
  char *out = output("stdout"), *err = output("stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  ck_assert_msg(strstr(out, "a\\x0d\\x1b[2J\\x0ab") != NULL, "not escaped:\n%s", out);
  ck_assert_msg(!strchr(out, '\x1b') && !strchr(out, '\r'), "control bytes reached stdout");
  char path[512];
  snprintf(path, sizeof path, "%s/results.csv", dir);
  char *csv = av_test_read_file(path);
  ck_assert_ptr_nonnull(csv);
  ck_assert_msg(strstr(csv, ",\"'=1+2\",") != NULL, "formula not defused:\n%s", csv);
  ck_assert_msg(strstr(csv, ",\"a\r\x1b[2J\nb\",") != NULL, "CR not quoted:\n%s", csv);
  free(csv);
  free(out);
  free(err);
}
END_TEST

/* Every auto row of a results document carries the candidate its verdict chose and the
 * predicted margin over the runner-up, and the printed table shows them in its scheduler
 * column ("auto→greedy_division (+3.1 %)"); other rows carry neither. */
static void auto_rows_show_their_choice(const json_t *rows, const char *table) {
  int autos = 0;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    const json_t *r = json_array_get(rows, i);
    const char *params = json_string_value(json_object_get(r, "params"));
    const json_t *chose = json_object_get(r, "auto_chose");
    if (strcmp(json_string_value(json_object_get(r, "scheduler")), "auto") != 0) {
      ck_assert(json_is_null(chose) && json_is_null(json_object_get(r, "auto_margin")));
      continue;
    }
    autos++;
    const char *c = strstr(params, "chose="), *m = strstr(params, ",margin=");
    ck_assert_msg(c && m && json_is_string(chose), "params %s", params);
    char want[300];
    snprintf(want, sizeof want, "%.*s", (int)(m - c - 6), c + 6);
    ck_assert_str_eq(json_string_value(chose), want);
    const double margin = json_real_value(json_object_get(r, "auto_margin"));
    ck_assert_double_eq_tol(margin, atof(m + 8), 1e-12);
    snprintf(want, sizeof want, " auto\u2192%s (%+.1f %%) ", json_string_value(chose),
             100 * margin);
    ck_assert_msg(strstr(table, want), "no '%s' in the table", want);
  }
  ck_assert_int_gt(autos, 0);
}

START_TEST(run_quickstart_writes_results) {
  char *dir = tmp_file("results");
  int rc = anvil(NULL, "run", "experiments/quickstart.json", "--out", dir, NULL);
  char *err = output("stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  char path[512];
  snprintf(path, sizeof path, "%s/results.json", dir);
  json_error_t je;
  json_t *doc = json_load_file(path, 0, &je);
  ck_assert_msg(doc != NULL, "%s: %s", path, je.text);
  json_t *rows = json_object_get(doc, "rows");
  size_t n_rows = json_array_size(rows);
  size_t n_sched = json_array_size(json_object_get(doc, "schedulers"));
  ck_assert_uint_ge(n_sched, 1);
  ck_assert_uint_eq(n_rows, 20 * n_sched); /* PAT's 20 trees x every scheduler */
  for (size_t i = 0; i < n_rows; i++) {
    json_t *r = json_array_get(rows, i);
    double floor = json_real_value(json_object_get(r, "floor_us"));
    double pred = json_real_value(json_object_get(r, "predicted_us"));
    ck_assert_msg(floor > 0 && pred > 0, "row %zu: floor %g predicted %g", i, floor, pred);
    ck_assert(json_real_value(json_object_get(r, "query_centric_kv_bytes")) >=
              json_real_value(json_object_get(r, "unique_kv_bytes")));
  }
  snprintf(path, sizeof path, "%s/results.csv", dir);
  char *csv = av_test_read_file(path);
  ck_assert_ptr_nonnull(csv);
  ck_assert_msg(strncmp(csv, "gpu,workload,hq,hkv,head_dim,dtype,scheduler,", 45) == 0,
                "csv header: %.120s", csv);
  size_t lines = 0;
  for (char *p = csv; *p; p++) lines += *p == '\n';
  ck_assert_uint_eq(lines, n_rows + 1);
  char *out = output("stdout");
  char want[128];
  snprintf(want, sizeof want, "quickstart: 20 workloads, %zu plans checked", n_rows);
  ck_assert_str_eq(last_line(out), want);
  ck_assert_ptr_nonnull(strstr(out, "pat-20"));
  ck_assert_msg(strstr(csv, ",status,error,auto_chose,auto_margin\n"), "csv header: %.400s", csv);
  auto_rows_show_their_choice(rows, out);
  free(out);
  free(csv);
  free(err);
  json_decref(doc);
}
END_TEST

/* Without --out, results go to out/<experiment name> under the working directory. */
START_TEST(run_default_output_dir) {
  int rc = anvil(g_tmp, "run", AV_TEST_DIR "/../experiments/quickstart.json", "--quiet", NULL);
  char *err = output("stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  struct stat st;
  ck_assert_int_eq(stat(tmp_file("out/quickstart/results.json"), &st), 0);
  ck_assert_int_eq(stat(tmp_file("out/quickstart/results.csv"), &st), 0);
  char *out = output("stdout");
  const char *last = last_line(out);
  ck_assert_msg(strncmp(last, "quickstart: 20 workloads, ", 26) == 0 &&
                    strstr(last, " plans checked") != NULL,
                "last line: %s", last);
  free(out);
  free(err);
}
END_TEST

START_TEST(run_timeline_is_json) {
  char *tl = tmp_file("timeline.json");
  int rc = anvil(NULL, "run", "experiments/quickstart.json", "--out", tmp_file("r"),
                 "--timeline", tl, "--timeline-of", "pat-3", "--quiet", NULL);
  char *err = output("stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  json_error_t je;
  json_t *doc = json_load_file(tl, 0, &je);
  ck_assert_msg(doc != NULL, "%s: %s", tl, je.text);
  json_decref(doc);
  free(err);
}
END_TEST

/* "launch": "graph" (docs/kernels.md#launch-models): the results say so, and a small plan of
 * several launches is predicted faster than the same plan issued launch by launch. */
static json_t *run_launch(const char *launch) {
  char *exp = tmp_file("launch.json");
  FILE *f = fopen(exp, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"name\": \"launch\", \"gpu\": \"H100-SXM\", \"launch\": \"%s\", "
          "\"workloads\": [{\"kind\": \"levels\", \"B\": [1, 16], \"L\": [256, 16]}], "
          "\"schedulers\": [\"profit_pack\", \"query_centric\"]}", launch);
  fclose(f);
  char *dir = tmp_file(launch);
  int rc = anvil(NULL, "run", exp, "--out", dir, "--quiet", NULL);
  char *err = output("stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  char path[512];
  snprintf(path, sizeof path, "%s/results.json", dir);
  json_t *doc = json_load_file(path, 0, NULL);
  ck_assert_ptr_nonnull(doc);
  return doc;
}

START_TEST(run_graph_launch_model) {
  json_t *s = run_launch("streams"), *g = run_launch("graph");
  ck_assert_ptr_null(json_object_get(s, "launch"));
  ck_assert_str_eq(json_string_value(json_object_get(g, "launch")), "graph");
  json_t *rs = json_object_get(s, "rows"), *rg = json_object_get(g, "rows");
  ck_assert_uint_eq(json_array_size(rs), json_array_size(rg));
  /* profit_pack's two launches: the second is issued with the first in a graph */
  const double two_s = json_real_value(json_object_get(json_array_get(rs, 0), "predicted_us"));
  const double two_g = json_real_value(json_object_get(json_array_get(rg, 0), "predicted_us"));
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(rg, 0), "launches")), 2);
  ck_assert_msg(two_g < two_s, "profit_pack: graph %g us, streams %g us", two_g, two_s);
  json_decref(s);
  json_decref(g);
}
END_TEST

START_TEST(plan_then_check) {
  char *plan = tmp_file("plan.json");
  int rc = anvil(NULL, "plan", "--levels", "B=1,4,16 L=256,64,32", "--scheduler",
                 "query_centric", "-p", "split=fixed", "-p", "splits=2", "-o", plan, NULL);
  char *err = output("stderr");
  ck_assert_msg(rc == 0, "plan: exit %d: %s", rc, err);
  free(err);
  rc = anvil(NULL, "check", plan, "--seed", "7", NULL);
  err = output("stderr");
  ck_assert_msg(rc == 0, "check: exit %d: %s", rc, err);
  char *out = output("stdout");
  ck_assert_ptr_nonnull(strstr(out, "exact"));
  ck_assert_ptr_nonnull(strstr(out, "max rel err"));
  free(out);
  free(err);
}
END_TEST

START_TEST(describe_levels_and_spec) {
  int rc = anvil(NULL, "describe", "--levels", "B=1,128 L=16384,512", NULL);
  char *out = output("stdout");
  ck_assert_msg(rc == 0, "exit %d", rc);
  ck_assert_ptr_nonnull(strstr(out, "requests: 128"));
  ck_assert_ptr_nonnull(strstr(out, "unique KV"));
  ck_assert_ptr_nonnull(strstr(out, "floor on H200-SXM"));
  free(out);
  const char *spec = "{\"kind\": \"kary\", \"arity\": 2, \"depth\": 3, \"L\": [512]}\n";
  FILE *f = fopen(tmp_file("spec.json"), "w");
  ck_assert_ptr_nonnull(f);
  fputs(spec, f);
  fclose(f);
  rc = anvil(NULL, "describe", tmp_file("spec.json"), "--gpu", "A100-80GB-SXM", NULL);
  out = output("stdout");
  ck_assert_msg(rc == 0, "exit %d", rc);
  ck_assert_ptr_nonnull(strstr(out, "floor on A100-80GB-SXM"));
  free(out);
}
END_TEST

START_TEST(list_names_everything) {
  int rc = anvil(NULL, "list", NULL);
  char *out = output("stdout");
  ck_assert_int_eq(rc, 0);
  ck_assert_ptr_nonnull(strstr(out, "H200-SXM"));
  ck_assert_ptr_nonnull(strstr(out, "query_centric"));
  ck_assert_ptr_nonnull(strstr(out, "roofline"));
  /* auto, registered by the selectors' layer, with its description and parameters */
  ck_assert_ptr_nonnull(strstr(out, "simulates every other scheduler's plan"));
  ck_assert_ptr_nonnull(strstr(out, "simulator model that ranks the candidates"));
  free(out);
}
END_TEST

START_TEST(help_everywhere) {
  static const char *const cmds[] = {"run", "plan", "check", "describe", "list", NULL};
  int rc = anvil(NULL, "--help", NULL);
  char *out = output("stdout");
  ck_assert_int_eq(rc, 0);
  ck_assert_ptr_nonnull(strstr(out, "usage: anvil"));
  free(out);
  for (int i = 0; cmds[i]; i++) {
    rc = anvil(NULL, cmds[i], "--help", NULL);
    out = output("stdout");
    ck_assert_msg(rc == 0, "%s --help: exit %d", cmds[i], rc);
    ck_assert_msg(strstr(out, "usage: anvil") != NULL, "%s --help: %s", cmds[i], out);
    free(out);
  }
  ck_assert_int_eq(anvil(NULL, NULL), 1); /* no command: usage on stderr, exit 1 */
}
END_TEST


/* Experiment parsing in-process: the cross product and naming rules of docs/experiments.md. */
START_TEST(experiment_cross_product) {
  const char *text =
      "{\"name\": \"x\", \"gpus\": [\"H200-SXM\", \"A100-80GB-SXM\"],"
      " \"heads\": [[32, 8], [64, 8]], \"head_dim\": 64,"
      " \"workloads\": ["
      "  {\"kind\": \"collection\", \"path\": \"workloads/pat_kernel_trees.json\","
      "   \"ids\": [20, 3]},"
      "  {\"kind\": \"levels\", \"name\": \"mine\", \"B\": [1, 2], \"L\": [64, 8]},"
      "  {\"kind\": \"ratio\", \"batch\": 4, \"context\": 100, \"shared_ratio\": 0.5,"
      "   \"heads\": [16, 1]}],"
      " \"schedulers\": [\"query_centric\", {\"name\": \"query_centric\", \"label\": \"q2\","
      "   \"params\": {\"split\": \"none\"}}]}";
  av_error_t err;
  av_error_clear(&err);
  json_t *root = NULL;
  AV_CK_OK(av_json_load_string(text, "exp", &root, &err), &err);
  av_experiment_t *e = NULL;
  /* The path anchors the collection's relative path: experiments/. */
  AV_CK_OK(av_experiment_from_json(root, "experiments/x.json", &e, &err), &err);
  ck_assert_int_eq(e->n_gpus, 2);
  ck_assert_str_eq(e->gpus[1].name, "A100-80GB-SXM");
  ck_assert_int_eq(e->n_heads, 2);
  ck_assert_int_eq(e->n_specs, 3);
  /* 2 trees x 2 heads + 1 levels x 2 heads + 1 ratio with its own heads. */
  ck_assert_int_eq(e->n_batches, 7);
  ck_assert_str_eq(e->batches[0].name, "pat-20");
  ck_assert_int_eq(e->batches[0].w->heads.hq, 32);
  ck_assert_int_eq(e->batches[1].w->heads.hq, 64);
  ck_assert_int_eq(e->batches[1].w->heads.head_dim, 64);
  ck_assert_int_eq(e->batches[0].w->block_size_tokens, 32); /* the file's kv_block */
  ck_assert_str_eq(e->batches[2].name, "pat-3");
  ck_assert_str_eq(e->batches[4].name, "mine");
  ck_assert_str_eq(e->batches[6].name, "ratio-2");
  ck_assert_int_eq(e->batches[6].heads_index, -1);
  ck_assert_int_eq(e->batches[6].w->heads.hkv, 1);
  ck_assert_int_eq(e->n_scheds, 2);
  ck_assert_str_eq(e->scheds[0].label, "query_centric");
  ck_assert_str_eq(e->scheds[1].label, "q2");
  ck_assert_int_eq(e->sim, AV_SIM_ENGINE);
  ck_assert_str_eq(e->cost_ops->name, "roofline");
  av_experiment_destroy(e);
  json_decref(root);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("happy_paths");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, csv_field_quoting);
  tcase_add_test(tc, run_quickstart_writes_results);
  tcase_add_test(tc, run_default_output_dir);
  tcase_add_test(tc, csv_field_defuses_formulas);
  tcase_add_test(tc, run_hostile_labels);
  tcase_add_test(tc, run_timeline_is_json);
  tcase_add_test(tc, plan_then_check);
  tcase_add_test(tc, run_graph_launch_model);
  tcase_add_test(tc, describe_levels_and_spec);
  tcase_add_test(tc, list_names_everything);
  tcase_add_test(tc, help_everywhere);
  tcase_add_test(tc, experiment_cross_product);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
