/* Output files (core/outfile.h) and terminal-safe text (core/escape.h): only a regular file
 * or nothing is replaced, temporaries are exclusive, unpredictable and never left behind,
 * and control characters in names are escaped. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "core/escape.h"
#include "core/outfile.h"
#include "tests/support.h"

static char g_tmp[256];

static void setup(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/anvil_outfile_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_tmp));
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  ck_assert_int_eq(system(cmd), 0);
}

static char *at(const char *name) {
  static char buf[4][400];
  static int k;
  char *b = buf[k++ % 4];
  snprintf(b, sizeof buf[0], "%s/%s", g_tmp, name);
  return b;
}

/* Entries of the scratch directory, so a test sees a temporary left behind. */
static int entries(void) {
  DIR *d = opendir(g_tmp);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

START_TEST(writes_new_and_replaces_regular) {
  av_error_t err;
  av_error_clear(&err);
  const mode_t old = umask(027);
  ck_assert_int_eq(av_outfile_write(at("a.json"), "one\n", 4, 0, &err), AV_OK);
  struct stat st;
  ck_assert_int_eq(lstat(at("a.json"), &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0640); /* 0666 less the umask, not mkstemp's 0600 */
  umask(old);
  ck_assert_int_eq(av_outfile_write(at("a.json"), "two\n", 4, 1, &err), AV_OK);
  char *text = av_test_read_file(at("a.json"));
  ck_assert_str_eq(text, "two\n");
  free(text);
  ck_assert_int_eq(entries(), 1);
}
END_TEST

/* A FIFO, a directory and a symbolic link (to a file or to nothing) are refused and stay. */
START_TEST(refuses_what_is_not_a_regular_file) {
  ck_assert_int_eq(mkfifo(at("fifo"), 0666), 0);
  ck_assert_int_eq(mkdir(at("dir"), 0777), 0);
  ck_assert_int_eq(av_outfile_write(at("target"), "keep", 4, 0, NULL), AV_OK);
  ck_assert_int_eq(symlink(at("target"), at("link")), 0);
  ck_assert_int_eq(symlink(at("nowhere"), at("dangling")), 0);
  static const struct {
    const char *name, *what;
  } cases[] = {{"fifo", "a FIFO"},
               {"dir", "a directory"},
               {"link", "a symbolic link"},
               {"dangling", "a symbolic link"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    av_error_t err;
    av_error_clear(&err);
    ck_assert_int_eq(av_outfile_write(at(cases[i].name), "x", 1, 0, &err), AV_ERR_IO);
    ck_assert_str_eq(err.source, at(cases[i].name));
    ck_assert_msg(strstr(err.message, cases[i].what) != NULL, "%s: %s", cases[i].name,
                  err.message);
  }
  ck_assert_ptr_null(av_outfile_refusal(at("target")));
  ck_assert_ptr_null(av_outfile_refusal(at("absent")));
  ck_assert_str_eq(av_outfile_refusal("/dev/null"), "a character device");
  struct stat st;
  ck_assert(lstat(at("link"), &st) == 0 && S_ISLNK(st.st_mode));
  ck_assert(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
  ck_assert(lstat(at("nowhere"), &st) != 0); /* not created through the dangling link */
  char *text = av_test_read_file(at("target"));
  ck_assert_str_eq(text, "keep");
  free(text);
  ck_assert_int_eq(entries(), 5);
}
END_TEST

/* Something put at the target between the open and the commit is refused at the commit,
 * and the temporary goes. */
START_TEST(checks_again_at_commit) {
  av_outfile_t o;
  av_error_t err;
  av_error_clear(&err);
  ck_assert_int_eq(av_outfile_open(&o, at("late.json"), &err), AV_OK);
  fputs("data", o.f);
  ck_assert_int_eq(symlink("/etc/passwd", at("late.json")), 0);
  ck_assert_int_eq(av_outfile_commit(&o, 0, &err), AV_ERR_IO);
  ck_assert_msg(strstr(err.message, "a symbolic link") != NULL, "%s", err.message);
  struct stat st;
  ck_assert(lstat(at("late.json"), &st) == 0 && S_ISLNK(st.st_mode));
  ck_assert_int_eq(entries(), 1);
}
END_TEST

/* Temporaries: beside the target, named PATH.tmp-<16 hex digits> that differ each time, and
 * created exclusively (O_EXCL, so never through a link planted at the name). */
START_TEST(temporaries_are_unpredictable) {
  av_outfile_t a, b;
  ck_assert_int_eq(av_outfile_open(&a, at("t.json"), NULL), AV_OK);
  ck_assert_int_eq(av_outfile_open(&b, at("t.json"), NULL), AV_OK);
  const size_t n = strlen(at("t.json.tmp-"));
  ck_assert_int_eq(strncmp(a.tmp, at("t.json.tmp-"), n), 0);
  ck_assert_uint_eq(strlen(a.tmp), n + 16);
  ck_assert_str_ne(a.tmp, b.tmp);
  struct stat st;
  ck_assert(lstat(a.tmp, &st) == 0 && S_ISREG(st.st_mode));
  av_outfile_discard(&a);
  av_outfile_discard(&b);
  ck_assert_int_eq(entries(), 0);
}
END_TEST

/* A write that fails (a 4 KB file size limit, SIGXFSZ ignored: EFBIG) leaves the previous
 * file whole and no temporary. */
START_TEST(failed_write_leaves_nothing) {
  ck_assert_int_eq(av_outfile_write(at("big.json"), "old", 3, 0, NULL), AV_OK);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &rl);
    static char data[1 << 16];
    memset(data, 'x', sizeof data);
    av_error_t err;
    av_error_clear(&err);
    int rc = av_outfile_write(at("big.json"), data, sizeof data, 1, &err);
    _exit(rc == AV_ERR_IO && strstr(err.message, strerror(EFBIG)) ? 0 : 1);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char *text = av_test_read_file(at("big.json"));
  ck_assert_str_eq(text, "old");
  free(text);
  ck_assert_int_eq(entries(), 1);
}
END_TEST

START_TEST(escape_controls) {
  static const struct {
    const char *in, *out;
  } cases[] = {{"pat-3 U(512,2048)", "pat-3 U(512,2048)"},
               {"a\x1b[2Jb", "a\\x1b[2Jb"},
               {"row\nanvil: forged", "row\\x0aanvil: forged"},
               {"cr\r\t\x7f", "cr\\x0d\\x09\\x7f"},
               {"h\xc2\x9b" "31m", "h\\xc2\\x9b31m"},      /* C1 CSI */
               {"bad\xff\xc3", "bad\\xff\\xc3"},           /* not UTF-8 */
               {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},        /* overlong */
               {"2\xc2\xb2\xc2\xb2 \xe2\x80\x94 ok", "2\xc2\xb2\xc2\xb2 \xe2\x80\x94 ok"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    ck_assert_str_eq(av_escape_text(cases[i].in, buf, sizeof buf), cases[i].out);
  }
  char small[7];
  ck_assert_str_eq(av_escape_text("ab\x1b\x1b", small, sizeof small), "ab\\x1b");
}
END_TEST

/* What users see of an error: the names it quotes cannot reach the terminal raw. */
START_TEST(error_format_escapes) {
  av_error_t err;
  av_error_clear(&err);
  av_error_set(&err, AV_ERR_NAME, "in\x1b.json", "schedulers[0]", "unknown scheduler '%s'",
               "x\ny");
  char buf[256];
  ck_assert_str_eq(av_error_format(&err, buf, sizeof buf),
                   "in\\x1b.json: schedulers[0]: unknown scheduler 'x\\x0ay'");
}
END_TEST

int main(void) {
  Suite *s = suite_create("outfile");
  TCase *tc = tcase_create("outfile");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, writes_new_and_replaces_regular);
  tcase_add_test(tc, refuses_what_is_not_a_regular_file);
  tcase_add_test(tc, checks_again_at_commit);
  tcase_add_test(tc, temporaries_are_unpredictable);
  tcase_add_test(tc, failed_write_leaves_nothing);
  tcase_add_test(tc, escape_controls);
  tcase_add_test(tc, error_format_escapes);
  suite_add_tcase(s, tc);
  return av_test_run(s, 0);
}
