/* Data-driven bad-input tests: every directory under tests/bad_input/ is one mistake a user
 * can make. The built `anvil` binary runs on it (in the case's directory, with the case's
 * `args`, default `run input.json --out {out}`) and must: exit 1, print exactly one line to
 * stderr containing `expected_error` (the message and location the user sees), and write
 * no files. With `--valgrind PATH` every case also runs under valgrind (leaks, bad reads),
 * which exits 99 on any error it finds; `--shard I/N` runs every N-th case from the I-th.
 * A case with a file `max_seconds` must also fail within that time (a limit that stops
 * unbounded work is checked before the work, not after it). A file `forbidden` holds text
 * stderr must not contain (a secret the input file holds). A file `setup` makes things in
 * the run's scratch directory first, one a line: `dir P`, `file P`, `fifo P` or
 * `symlink TARGET P`; they must all be there as they were, of the same kind, after the run.
 * {tmp} in args, setup and expected_error is that scratch directory, {out} is {tmp}/out. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/support.h"

#define MAX_CASES 256
#define MAX_ARGS 64

static char *g_cases[MAX_CASES];
static int g_n_cases;
static const char *g_valgrind;  /* NULL: run directly */

static int is_case(const struct dirent *d) { return d->d_name[0] != '.'; }

static void find_cases(void) {
  struct dirent **list;
  int n = scandir(AV_TEST_DIR "/bad_input", &list, is_case, alphasort);
  for (int i = 0; i < n; i++) {
    if (g_n_cases < MAX_CASES) g_cases[g_n_cases++] = strdup(list[i]->d_name);
    free(list[i]);
  }
  if (n >= 0) free(list);
}

/* `text` with every {tmp} replaced by `tmp` (caller frees). */
static char *with_tmp(const char *text, const char *tmp) {
  size_t cap = strlen(text) + 1, n = 0;
  for (const char *p = strstr(text, "{tmp}"); p; p = strstr(p + 5, "{tmp}")) cap += strlen(tmp);
  char *out = malloc(cap);
  for (const char *p = text; *p;) {
    if (strncmp(p, "{tmp}", 5) == 0) {
      n += (size_t)sprintf(out + n, "%s", tmp);
      p += 5;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = '\0';
  return out;
}

/* The setup lines: each entry made now (`check` 0) or checked after the run (`check` 1: it
 * must still be there with the same kind). */
static void setup_entries(const char *name, char *setup, int check) {
  for (char *line = setup, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char kind[16], a[512], b[512] = "";
    if (sscanf(line, "%15s %511s %511s", kind, a, b) < 2) continue;
    const char *at = strcmp(kind, "symlink") == 0 ? b : a;
    struct stat st;
    if (check) {
      const int ok = lstat(at, &st) == 0 &&
                     (strcmp(kind, "dir") == 0    ? S_ISDIR(st.st_mode)
                      : strcmp(kind, "file") == 0 ? S_ISREG(st.st_mode)
                      : strcmp(kind, "fifo") == 0 ? S_ISFIFO(st.st_mode)
                                                  : S_ISLNK(st.st_mode));
      ck_assert_msg(ok, "%s: '%s' (%s) is no longer there as it was", name, at, kind);
      continue;
    }
    int rc = -1;
    if (strcmp(kind, "dir") == 0) rc = mkdir(a, 0777);
    if (strcmp(kind, "fifo") == 0) rc = mkfifo(a, 0666);
    if (strcmp(kind, "symlink") == 0) rc = symlink(a, b);
    if (strcmp(kind, "file") == 0) {
      FILE *f = fopen(a, "w");
      rc = f && fputs("kept\n", f) >= 0 ? 0 : -1;
      if (f) fclose(f);
    }
    ck_assert_msg(rc == 0, "%s: setup line '%s' failed", name, line);
  }
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* Splits `text` into words like a shell would for simple cases: whitespace separates,
 * single or double quotes group; {out} becomes `out`. Returns the count. */
static int split_args(char *text, const char *out, char **argv, char *store, size_t cap) {
  int n = 0;
  size_t used = 0;
  char *p = text;
  while (*p && n < MAX_ARGS) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    argv[n++] = store + used;
    char quote = 0;
    while (*p && (quote || (*p != ' ' && *p != '\t' && *p != '\n')) && used + 1 < cap) {
      if (!quote && (*p == '"' || *p == '\'')) {
        quote = *p++;
      } else if (quote && *p == quote) {
        quote = 0;
        p++;
      } else if (strncmp(p, "{out}", 5) == 0 && used + strlen(out) + 1 < cap) {
        used += (size_t)sprintf(store + used, "%s", out);
        p += 5;
      } else {
        store[used++] = *p++;
      }
    }
    store[used++] = '\0';
  }
  return n;
}

/* Names of the files in dir, one string (so a before/after comparison shows new files). */
static void list_dir(const char *dir, char *out, size_t size) {
  struct dirent **list;
  size_t used = 0;
  out[0] = '\0';
  int n = scandir(dir, &list, is_case, alphasort);
  for (int i = 0; i < n; i++) {
    if (used < size) used += (size_t)snprintf(out + used, size - used, "%s ", list[i]->d_name);
    free(list[i]);
  }
  if (n >= 0) free(list);
}

static char *read_trimmed(const char *path) {
  char *s = av_test_read_file(path);
  if (!s) return NULL;
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
  return s;
}

/* The case's file `file`, trimmed, with {tmp} replaced; NULL when there is none. */
static char *case_file(const char *dir, const char *file, const char *tmp) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  char *text = read_trimmed(path);
  char *out = text ? with_tmp(text, tmp) : NULL;
  free(text);
  return out;
}

START_TEST(bad_input_case) {
  const char *name = g_cases[_i];
  char dir[1024], path[1200], tmp[] = "/tmp/anvil_bad_XXXXXX";
  snprintf(dir, sizeof dir, "%s/bad_input/%s", AV_TEST_DIR, name);
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  char out[256], out_txt[300], err_txt[300];
  snprintf(out, sizeof out, "%s/out", tmp);
  snprintf(out_txt, sizeof out_txt, "%s/stdout", tmp);
  snprintf(err_txt, sizeof err_txt, "%s/stderr", tmp);

  char *expected = case_file(dir, "expected_error", tmp);
  ck_assert_msg(expected && expected[0], "%s: missing or empty expected_error", name);
  char *args = case_file(dir, "args", tmp), *forbidden = case_file(dir, "forbidden", tmp);
  char *setup = case_file(dir, "setup", tmp), *setup_copy = setup ? strdup(setup) : NULL;
  if (setup) setup_entries(name, setup, 0);
  char deflt[] = "run input.json --out {out}";
  char store[8192], *words[MAX_ARGS];
  int nw = split_args(args ? args : deflt, out, words, store, sizeof store);

  char *argv[MAX_ARGS + 16];
  int na = 0;
  char anvil[] = AV_BINARY_DIR "/anvil";
  char vg_err[] = "--error-exitcode=99", vg_leak[] = "--leak-check=full",
       vg_kinds[] = "--errors-for-leak-kinds=definite", vg_q[] = "-q";
  if (g_valgrind) {
    argv[na++] = (char *)g_valgrind;
    argv[na++] = vg_err;
    argv[na++] = vg_leak;
    argv[na++] = vg_kinds;
    argv[na++] = vg_q;
  }
  argv[na++] = anvil;
  for (int i = 0; i < nw; i++) argv[na++] = words[i];
  argv[na] = NULL;

  char before[4096], after[4096];
  list_dir(dir, before, sizeof before);
  /* the child's CPU time, not the wall clock: a case must fail fast however busy the
   * machine running the tests is */
  const double cpu0 = av_test_children_cpu_s();
  int rc = av_test_spawn(dir, argv, out_txt, err_txt);
  const double took = av_test_children_cpu_s() - cpu0;
  list_dir(dir, after, sizeof after);
  snprintf(path, sizeof path, "%s/max_seconds", dir);
  char *max_s = g_valgrind ? NULL : read_trimmed(path);
  const char *slower = getenv("CK_TIMEOUT_MULTIPLIER");  /* sanitizer builds */
  const double most = max_s ? atof(max_s) * (slower ? atof(slower) : 1.0) : 0;
  ck_assert_msg(!max_s || took <= most, "%s: took %.2f s, expected at most %.1f s", name, took,
                most);
  free(max_s);
  char *err = av_test_read_file(err_txt);
  ck_assert_ptr_nonnull(err);

  ck_assert_msg(rc == 1, "%s: exit status %d, expected 1; stderr:\n%s", name, rc, err);
  ck_assert_msg(strstr(err, expected) != NULL,
                "%s: stderr does not contain the expected error\n  expected: %s\n  got:      %s",
                name, expected, err);
  ck_assert_msg(!forbidden || !strstr(err, forbidden), "%s: stderr quotes '%s':\n%s", name,
                forbidden, err);
  if (setup_copy) setup_entries(name, setup_copy, 1);
  char *nl = strchr(err, '\n');
  ck_assert_msg(strncmp(err, "anvil: ", 7) == 0 && nl && nl[1] == '\0',
                "%s: expected exactly one line starting with 'anvil: ', got:\n%s", name, err);
  struct stat st;
  ck_assert_msg(stat(out, &st) != 0, "%s: the output directory %s was created", name, out);
  ck_assert_msg(strcmp(before, after) == 0, "%s: files appeared in the case directory: %s",
                name, after);
  free(err);
  free(args);
  free(expected);
  free(forbidden);
  free(setup);
  free(setup_copy);
  nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

int main(int argc, char **argv) {
  int shard = 0, n_shards = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--valgrind") == 0) g_valgrind = argv[i + 1];
    if (strcmp(argv[i], "--shard") == 0 &&
        (sscanf(argv[i + 1], "%d/%d", &shard, &n_shards) != 2 || n_shards < 1 || shard < 0 ||
         shard >= n_shards)) {
      fprintf(stderr, "test_bad_input: --shard expects I/N with 0 <= I < N\n");
      return EXIT_FAILURE;
    }
  }
  find_cases();
  /* Shards let CTest run the slow valgrind pass on several cores. */
  int kept = 0;
  for (int i = 0; i < g_n_cases; i++) {
    if (i % n_shards == shard)
      g_cases[kept++] = g_cases[i];
    else
      free(g_cases[i]);
  }
  g_n_cases = kept;
  Suite *s = suite_create(g_valgrind ? "bad_input_valgrind" : "bad_input");
  TCase *tc = tcase_create("cases");
  tcase_set_timeout(tc, g_valgrind ? 120 : 20);
  if (g_n_cases == 0) {
    fprintf(stderr, "test_bad_input: no cases under %s/bad_input\n", AV_TEST_DIR);
    return EXIT_FAILURE;
  }
  tcase_add_loop_test(tc, bad_input_case, 0, g_n_cases);
  suite_add_tcase(s, tc);
  int rc = av_test_run(s, 0);
  for (int i = 0; i < g_n_cases; i++) free(g_cases[i]);
  return rc;
}
