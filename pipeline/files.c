/* File-system and CSV helpers of the pipeline: directories made like mkdir -p, and CSV
 * fields quoted per RFC 4180. */
#include "pipeline/files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

int av_mkdirs(const char *dir, av_error_t *err) {
  char buf[1024];
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

size_t av_csv_field(char *dst, size_t cap, const char *s) {
  const int quote = strpbrk(s, ",\"\n") != NULL;
  size_t n = 0;
#define AV_PUT(c) \
  do {            \
    if (n + 1 < cap) dst[n] = (c); \
    n++;          \
  } while (0)
  if (quote) AV_PUT('"');
  for (const char *p = s; *p; p++) {
    if (*p == '"') AV_PUT('"');
    AV_PUT(*p);
  }
  if (quote) AV_PUT('"');
#undef AV_PUT
  if (cap) dst[n < cap ? n : cap - 1] = '\0';
  return n;
}
