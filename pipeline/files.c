/* File-system and CSV helpers of the pipeline: directories made like mkdir -p, whole files
 * written and flushed, directory trees removed, CSV text fields quoted per RFC 4180 and
 * defused against spreadsheet formulas, and the
 * fault-injection hook the tests use to make a write fail or the process die. */
#define _XOPEN_SOURCE 700
#include "pipeline/files.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/outfile.h"

int av_fault(const char *kind, const char *name) {
  const char *f = getenv("ANVIL_FAULT");
  size_t k = strlen(kind);
  return f && strncmp(f, kind, k) == 0 && f[k] == ':' && strcmp(f + k + 1, name) == 0;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

int av_file_write(const char *path, const char *data, size_t len, av_error_t *err) {
  av_outfile_t o;
  int rc = av_outfile_open(&o, path, err);
  if (rc) return rc;
  /* ANVIL_FAULT=enospc:<name> stands for a disk that fills while this file is written */
  const int full = av_fault("enospc", base_name(path));
  size_t n = fwrite(data, 1, full ? len / 2 : len, o.f);
  if (full) errno = ENOSPC;
  if (full || n != len) return av_outfile_fail(&o, err);
  rc = av_outfile_commit(&o, 1, err);
  if (!rc && av_fault("kill-after", base_name(path))) raise(SIGKILL);
  return rc;
}

char *av_file_read(const char *path, av_error_t *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    av_error_set(err, AV_ERR_IO, path, NULL, "cannot read: %s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n + 1 < cap) break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) free(buf);
    buf = nb;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    av_error_set(err, buf ? AV_ERR_IO : AV_ERR_NOMEM, path, NULL, "cannot read the file");
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

int av_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int av_mkdirs(const char *dir, av_error_t *err) {
  char buf[1024];
  if (!dir[0]) return av_error_set(err, AV_ERR_IO, dir, NULL, "empty directory path");
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return av_error_set(err, AV_ERR_IO, dir, NULL, "path is too long");
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return av_error_set(err, AV_ERR_IO, buf, NULL, "cannot create directory: %s",
                            strerror(errno));
      *p = saved;
      if (!saved) break;
    }
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return av_error_set(err, AV_ERR_IO, dir, NULL, "is not a directory");
  return AV_OK;
}

/* A text that a spreadsheet would read as a number stays as it is: only text is defused. */
static int is_number(const char *s) {
  char *end;
  errno = 0;
  strtod(s, &end);
  return end != s && *end == '\0' && !isspace((unsigned char)s[0]);
}

size_t av_csv_field(char *dst, size_t cap, const char *s) {
  /* a leading = + - @ (or tab, CR) makes spreadsheets evaluate the cell as a formula */
  const int defuse = s[0] && strchr("=+-@\t\r", s[0]) && !is_number(s);
  const int quote = defuse || strpbrk(s, ",\"\r\n") != NULL;
  size_t n = 0;
#define AV_PUT(c) \
  do {            \
    if (n + 1 < cap) dst[n] = (c); \
    n++;          \
  } while (0)
  if (quote) AV_PUT('"');
  if (defuse) AV_PUT('\'');
  for (const char *p = s; *p; p++) {
    if (*p == '"') AV_PUT('"');
    AV_PUT(*p);
  }
  if (quote) AV_PUT('"');
#undef AV_PUT
  if (cap) dst[n < cap ? n : cap - 1] = '\0';
  return n;
}
