/* Studies at scale, run as a user runs them (the built `anvil` in a child process): a result
 * set is byte-identical whether it comes from one thread, --jobs 2, a run killed part-way
 * and resumed, shards merged by `anvil merge` (a shard holds whole batches), or (an MPI
 * build) mpirun -n 2; `auto` reusing the other rows of its batch, listed before or after it,
 * gives the rows it gives alone. A failing row
 * is reported alone; the RTX 4090 batch with a 32k shared prefix completes. The output
 * directory is one unit: a kill between its files, a full disk (injected, or a real
 * file-size limit) or a bad timeline path leave
 * the previous results as they were, and files a run does not write are kept. */
#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support.h"

static char g_tmp[256];

/* anvil with the arguments (NULL-terminated), in g_tmp; `fault` sets ANVIL_FAULT. Returns
 * the exit status (-1 when killed). */
static int anvil(const char *fault, ...) {
  va_list ap;
  va_start(ap, fault);
  if (fault) setenv("ANVIL_FAULT", fault, 1);
  const int rc = av_test_anvil_va(g_tmp, g_tmp, ap);
  unsetenv("ANVIL_FAULT");
  va_end(ap);
  return rc;
}

static char *slurp(const char *dir, const char *name) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s/%s", g_tmp, dir, name);
  return av_test_read_file(p);
}

static int exists(const char *name) {
  char p[600];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", g_tmp, name);
  return stat(p, &st) == 0;
}

/* The three files of two result directories are byte-identical. */
static void same_results(const char *a, const char *b) {
  static const char *const files[] = {"results.json", "results.csv", "journal.jsonl"};
  for (int i = 0; i < 3; i++) {
    char *x = slurp(a, files[i]), *y = slurp(b, files[i]);
    ck_assert_msg(x && y, "%s or %s lacks %s", a, b, files[i]);
    ck_assert_msg(strcmp(x, y) == 0, "%s/%s and %s/%s differ", a, files[i], b, files[i]);
    free(x);
    free(y);
  }
}

static void write_file(const char *name, const char *text) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", g_tmp, name);
  FILE *f = fopen(p, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* 12 random forests x 2 GPUs x 5 schedulers: 120 rows, auto after the ones it reuses. */
static void write_study(void) {
  char text[4096];
  size_t used = (size_t)snprintf(text, sizeof text,
                                 "{\"name\": \"study\", \"gpus\": [\"H200-SXM\", \"RTX-4090\"],\n"
                                 " \"workloads\": [");
  for (int i = 0; i < 12; i++)
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "%s{\"kind\": \"random\", \"name\": \"r%d\", \"seed\": %d, "
                             "\"max_depth\": 3, \"max_requests\": 48}",
                             i ? ", " : "", i, 100 + i);
  snprintf(text + used, sizeof text - used,
           "],\n \"schedulers\": [\"query_centric\", \"node_naive\", \"greedy_division\", "
           "\"profit_pack\", \"auto\"]}\n");
  write_file("study.json", text);
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "one", "-q", NULL), 0);
}

static void setup(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/anvil_studies_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_tmp));
  write_study();
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  ck_assert_int_eq(system(cmd), 0);
}

START_TEST(jobs_two_equal_one) {
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "two", "-q", "--jobs", "2", NULL), 0);
  same_results("one", "two");
}
END_TEST

START_TEST(killed_and_resumed_equals_uninterrupted) {
  /* killed once 37 rows are journaled, with two workers */
  int rc = anvil("kill-after-rows:37", "run", "study.json", "--out", "k", "-q", "-j", "2", NULL);
  ck_assert_int_eq(rc, -1);
  ck_assert(!exists("k") && exists("k.partial/journal.jsonl"));
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "k", "-q", "--resume", NULL), 0);
  ck_assert(!exists("k.partial"));
  same_results("one", "k");
  /* resuming a finished run recomputes nothing and changes nothing */
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "k", "-q", "--resume", NULL), 0);
  same_results("one", "k");
}
END_TEST

START_TEST(shards_merged_equal_one) {
  char *dirs[] = {"s0", "s1", "s2"}, shard[8];
  for (int i = 0; i < 3; i++) {
    snprintf(shard, sizeof shard, "%d/3", i);
    ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", dirs[i], "--shard", shard, "-q",
                           NULL),
                     0);
  }
  ck_assert_int_eq(anvil(NULL, "merge", "s2", "s0", "s1", "--out", "merged", "-q", NULL), 0);
  same_results("one", "merged");
}
END_TEST

/* The "gpu,workload" keys of the rows of dir's results.csv, one per row, into keys. */
static int row_batches(const char *dir, char keys[][64], int cap) {
  char *csv = slurp(dir, "results.csv");
  ck_assert_ptr_nonnull(csv);
  int n = 0;
  char *save = NULL;
  strtok_r(csv, "\n", &save);  /* the header */
  for (char *line = strtok_r(NULL, "\n", &save); line && n < cap;
       line = strtok_r(NULL, "\n", &save)) {
    char *second = strchr(line, ',');
    char *third = second ? strchr(second + 1, ',') : NULL;
    ck_assert_ptr_nonnull(third);
    snprintf(keys[n++], 64, "%.*s", (int)(third - line), line);
  }
  free(csv);
  return n;
}

/* Shards take whole batches: every row of one (GPU, batch) runs in one shard, so `auto`
 * finds the other rows' predictions there; the rows of 24 batches split 12/12 over two. */
START_TEST(shards_split_by_batch) {
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "b0", "--shard", "0/2", "-q", NULL), 0);
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "b1", "--shard", "1/2", "-q", NULL), 0);
  static char a[200][64], b[200][64];
  const int na = row_batches("b0", a, 200), nb = row_batches("b1", b, 200);
  ck_assert_int_eq(na, 60);
  ck_assert_int_eq(nb, 60);
  for (int i = 0; i < na; i++) {
    int same = 0;
    for (int j = 0; j < na; j++) same += strcmp(a[i], a[j]) == 0;
    ck_assert_msg(same == 5, "%s has %d of its 5 rows in shard 0", a[i], same);
    for (int j = 0; j < nb; j++)
      ck_assert_msg(strcmp(a[i], b[j]) != 0, "%s has rows in both shards", a[i]);
  }
  ck_assert_int_eq(anvil(NULL, "merge", "b1", "b0", "--out", "bm", "-q", NULL), 0);
  same_results("one", "bm");
}
END_TEST

#ifdef AV_MPI
START_TEST(mpirun_two_ranks_equal_one) {
  char *argv[] = {"/bin/sh", "-c",
                  "mpirun --allow-run-as-root --oversubscribe -n 2 " AV_BINARY_DIR
                  "/anvil run study.json --out mpi -q",
                  NULL};
  char out[300], err[300];
  snprintf(out, sizeof out, "%s/stdout", g_tmp);
  snprintf(err, sizeof err, "%s/stderr", g_tmp);
  ck_assert_int_eq(av_test_spawn(g_tmp, argv, out, err), 0);
  same_results("one", "mpi");
}
END_TEST
#endif

/* The auto rows of "auto" alone (nothing to reuse), listed first and listed last (it reuses
 * the four other rows either way: a batch's auto rows run after its other rows) are the
 * same lines. */
static char *auto_lines(const char *dir) {
  char *csv = slurp(dir, "results.csv"), *out = calloc(1, strlen(csv) + 1);
  for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n"))
    if (strstr(line, ",auto,auto,")) strcat(strcat(out, line), "\n");
  free(csv);
  return out;
}

START_TEST(auto_reuse_changes_nothing) {
  static const char *const orders[] = {
      "\"auto\", \"query_centric\", \"greedy_division\", \"profit_pack\", \"streamk_balance\"",
      "\"query_centric\", \"greedy_division\", \"profit_pack\", \"streamk_balance\", \"auto\"",
      "\"auto\""};
  for (int k = 0; k < 3; k++) {
    char text[2048], name[16], dir[16];
    snprintf(text, sizeof text,
             "{\"name\": \"reuse\", \"gpus\": [\"H200-SXM\", \"A100-80GB-SXM\"], "
             "\"workloads\": [{\"kind\": \"random\", \"seed\": 3, \"max_requests\": 200}, "
             "{\"kind\": \"random\", \"seed\": 4, \"max_requests\": 200}], "
             "\"schedulers\": [%s]}\n",
             orders[k]);
    snprintf(name, sizeof name, "reuse%d.json", k);
    snprintf(dir, sizeof dir, "reuse%d", k);
    write_file(name, text);
    ck_assert_int_eq(anvil(NULL, "run", name, "--out", dir, "-q", NULL), 0);
  }
  char *first = auto_lines("reuse0"), *last = auto_lines("reuse1"), *alone = auto_lines("reuse2");
  ck_assert_msg(strlen(first) > 0 && strcmp(first, last) == 0, "auto differs:\n%s\n%s", first,
                last);
  ck_assert_msg(strcmp(first, alone) == 0, "auto differs:\n%s\n%s", first, alone);
  free(first);
  free(last);
  free(alone);
}
END_TEST

/* profit_pack limited to tiles of at most 8 rows cannot plan anything: that row fails, the
 * others are written, and the exit status and last line say so. */
START_TEST(failing_row_reported_alone) {
  write_file("fail.json",
             "{\"name\": \"fail\", \"workloads\": [{\"kind\": \"levels\", \"B\": [1, 8], "
             "\"L\": [1024, 64]}],\n \"schedulers\": [\"query_centric\", {\"name\": "
             "\"profit_pack\", \"label\": \"pp8\", \"params\": {\"max_m_rows\": 8}}, "
             "\"node_naive\"]}\n");
  ck_assert_int_eq(anvil(NULL, "run", "fail.json", "--out", "f", "-q", NULL), 1);
  char *csv = slurp("f", "results.csv"), *out = slurp("", "stdout");
  ck_assert_ptr_nonnull(csv);
  int ok = 0, failed = 0;
  for (char *p = csv; (p = strstr(p, ",ok,")); p++) ok++;
  for (char *p = csv; (p = strstr(p, ",failed,")); p++) failed++;
  ck_assert_int_eq(ok, 2);
  ck_assert_int_eq(failed, 1);
  ck_assert_ptr_nonnull(strstr(csv, "max_m_rows = 8"));
  ck_assert_ptr_nonnull(strstr(out, "fail: 1 workloads, 2 plans checked, 1 of 3 rows failed\n"));
  free(csv);
  free(out);
}
END_TEST

START_TEST(rtx4090_prefix32k_completes) {
  write_file("rtx.json",
             "{\"name\": \"rtx\", \"gpu\": \"RTX-4090\", \"workloads\": [{\"kind\": "
             "\"levels\", \"B\": [1, 64], \"L\": [32768, 128]}],\n \"schedulers\": "
             "[\"query_centric\", \"node_naive\", \"fixed_division\", \"greedy_division\", "
             "\"profit_pack\", \"streamk_balance\", \"auto\"]}\n");
  ck_assert_int_eq(anvil(NULL, "run", "rtx.json", "--out", "rtx", "-q", NULL), 0);
  char *csv = slurp("rtx", "results.csv");
  int ok = 0;
  for (char *p = csv; (p = strstr(p, ",ok,")); p++) ok++;
  ck_assert_int_eq(ok, 7);
  free(csv);
}
END_TEST

/* Temporaries of the writers (PATH.tmp-<hex>, core/outfile.h) or probes left in g_tmp/dir. */
static int temporaries(const char *dir) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", g_tmp, dir);
  DIR *d = opendir(p);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strstr(e->d_name, ".tmp") != NULL || strstr(e->d_name, "probe") != NULL;
  if (d) closedir(d);
  return n;
}

/* The previous results as they were: "one" is study.json's run. */
static void previous_intact(const char *what) {
  char *json = slurp("one", "results.json"), *csv = slurp("one", "results.csv");
  ck_assert_msg(json && csv, "%s: the previous results are gone", what);
  ck_assert_msg(strstr(json, "\"experiment\": \"study\"") && strstr(csv, "r11"),
                "%s: the previous results changed", what);
  free(json);
  free(csv);
  ck_assert_msg(!temporaries("one") && !temporaries("."), "%s: leftovers", what);
}

START_TEST(output_set_is_one_unit) {
  write_file("other.json",
             "{\"name\": \"other\", \"workloads\": [{\"kind\": \"levels\", \"B\": [1, 4], "
             "\"L\": [128, 32]}], \"schedulers\": [\"query_centric\"]}\n");
  /* killed between results.json and results.csv */
  ck_assert_int_eq(anvil("kill-after:results.json", "run", "other.json", "--out", "one", "-q",
                         NULL),
                   -1);
  previous_intact("kill between files");
  /* the disk fills while results.csv is written */
  ck_assert_int_eq(anvil("enospc:results.csv", "run", "other.json", "--out", "one", "-q", NULL),
                   1);
  previous_intact("disk full");
  ck_assert_msg(!exists("one.partial"), "disk full: the staging directory stayed");
  /* a timeline path that cannot be written is refused before any row runs */
  ck_assert_int_eq(anvil(NULL, "run", "other.json", "--out", "one", "--timeline",
                         "/proc/anvil-timeline.json", NULL),
                   1);
  previous_intact("unwritable timeline");
  /* files a run does not write are carried into the new results */
  char p[600];
  snprintf(p, sizeof p, "%s/one/validation", g_tmp);
  ck_assert_int_eq(mkdir(p, 0777), 0);
  write_file("one/validation/note.txt", "kept\n");
  ck_assert_int_eq(anvil(NULL, "run", "other.json", "--out", "one", "-q", "--timeline",
                         "one/tl.json", NULL),
                   0);
  char *note = slurp("one/validation", "note.txt"), *json = slurp("one", "results.json");
  ck_assert_msg(note && strcmp(note, "kept\n") == 0, "a file anvil did not write was lost");
  ck_assert_ptr_nonnull(strstr(json, "\"experiment\": \"other\""));
  ck_assert(exists("one/tl.json") && !exists("one.partial"));
  free(note);
  free(json);
}
END_TEST

/* A real short write: the child inherits a 4 KB file-size limit (RLIMIT_FSIZE) with SIGXFSZ
 * ignored, so its writes past 4 KB fail with EFBIG as on a full disk. */
START_TEST(file_size_limit_keeps_previous) {
  write_file("wide.json",
             "{\"name\": \"wide\", \"workloads\": [{\"kind\": \"random\", \"name\": \"w\", "
             "\"seeds\": {\"from\": 1, \"to\": 40}, \"max_requests\": 16}], "
             "\"schedulers\": [\"query_centric\", \"node_naive\"]}\n");
  struct rlimit old, small;
  ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 4096;
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  const int rc = anvil(NULL, "run", "wide.json", "--out", "one", "-q", NULL);
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, prev);
  ck_assert_int_eq(rc, 1);
  previous_intact("file-size limit");
  ck_assert_msg(!exists("one.partial"), "file-size limit: the staging directory stayed");
}
END_TEST

/* --out naming a symbolic link to the results is refused before any row runs, and loses
 * nothing: the link stays a link, its target keeps its results and the user's files. */
START_TEST(out_through_symlink_loses_nothing) {
  char p[600];
  snprintf(p, sizeof p, "%s/one/validation", g_tmp);
  ck_assert_int_eq(mkdir(p, 0777), 0);
  write_file("one/validation/note.txt", "kept\n");
  write_file("one/notes.md", "mine\n");
  snprintf(p, sizeof p, "%s/link", g_tmp);
  ck_assert_int_eq(symlink("one", p), 0);
  ck_assert_int_eq(anvil(NULL, "run", "study.json", "--out", "link", "-q", NULL), 1);
  char *err = slurp(".", "stderr");
  ck_assert_msg(err && strstr(err, "run: --out: 'link' is a symbolic link"), "%s", err);
  free(err);
  struct stat st;
  ck_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
  previous_intact("--out through a link");
  char *note = slurp("one/validation", "note.txt"), *mine = slurp("one", "notes.md");
  ck_assert_msg(note && mine && strcmp(note, "kept\n") == 0 && strcmp(mine, "mine\n") == 0,
                "the user's files in the link's target were lost");
  ck_assert(!exists("link.partial") && !exists("one.partial"));
  free(note);
  free(mine);
}
END_TEST

/* `test_studies --mpi` (CTest test_studies_mpi) runs the MPI test alone, and exits 77
 * (skipped) on a build without MPI; without it, everything else. */
int main(int argc, char **argv) {
  const int mpi = argc > 1 && strcmp(argv[1], "--mpi") == 0;
#ifndef AV_MPI
  if (mpi) {
    puts("skipped: mpirun_two_ranks_equal_one needs a build with -DAV_MPI=ON");
    return 77;
  }
#endif
  Suite *s = suite_create("studies");
  TCase *tc = tcase_create("studies");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
#ifdef AV_MPI
  if (mpi) {
    tcase_add_test(tc, mpirun_two_ranks_equal_one);
    suite_add_tcase(s, tc);
    return av_test_run(s, 0);
  }
#endif
  tcase_add_test(tc, jobs_two_equal_one);
  tcase_add_test(tc, killed_and_resumed_equals_uninterrupted);
  tcase_add_test(tc, shards_merged_equal_one);
  tcase_add_test(tc, shards_split_by_batch);
  tcase_add_test(tc, auto_reuse_changes_nothing);
  tcase_add_test(tc, failing_row_reported_alone);
  tcase_add_test(tc, rtx4090_prefix32k_completes);
  tcase_add_test(tc, output_set_is_one_unit);
  tcase_add_test(tc, file_size_limit_keeps_previous);
  tcase_add_test(tc, out_through_symlink_loses_nothing);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
