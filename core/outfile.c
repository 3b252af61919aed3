/* Output files replaced whole (core/outfile.h): an exclusive temporary beside the target,
 * then one rename, and never over anything but a regular file. */
#define _GNU_SOURCE
#include "core/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *av_outfile_refusal(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) return NULL;
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

static int refuse(const char *path, const char *what, av_error_t *err) {
  return av_error_set(err, AV_ERR_IO, path, NULL,
                      "is %s, not a regular file; anvil replaces only regular files", what);
}

/* 64 unpredictable bits: the kernel's generator, or (where it is missing) the clock, the
 * process and a counter mixed by splitmix64 so that names still differ. */
static uint64_t random_bits(void) {
  uint64_t x;
  if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x) return x;
  static uint64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^
      ++counter;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int av_outfile_open(av_outfile_t *o, const char *path, av_error_t *err) {
  memset(o, 0, sizeof *o);
  if (strlen(path) >= sizeof o->path)
    return av_error_set(err, AV_ERR_IO, path, NULL, "path is too long");
  snprintf(o->path, sizeof o->path, "%s", path);
  const char *what = av_outfile_refusal(path);
  if (what) return refuse(path, what, err);
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 64; tries++) {
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp-%016llx", path, (unsigned long long)random_bits());
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int e = errno;
    o->tmp[0] = '\0';
    return av_error_set(err, AV_ERR_IO, path, NULL, "cannot write: %s", strerror(e));
  }
  o->f = fdopen(fd, "wb");
  if (!o->f) {
    int e = errno;
    close(fd);
    av_outfile_discard(o);
    return av_error_set(err, AV_ERR_IO, path, NULL, "cannot write: %s", strerror(e));
  }
  return AV_OK;
}

int av_outfile_commit(av_outfile_t *o, int sync, av_error_t *err) {
  int e = 0;
  if (ferror(o->f)) e = errno ? errno : EIO;
  if (!e && fflush(o->f) != 0) e = errno;
  if (!e && sync && fsync(fileno(o->f)) != 0) e = errno;
  if (fclose(o->f) != 0 && !e) e = errno;
  o->f = NULL;
  /* checked again just before the rename: the target may have changed since the open */
  const char *what = e ? NULL : av_outfile_refusal(o->path);
  if (!e && !what && rename(o->tmp, o->path) != 0) e = errno;
  if (!e && !what) {
    o->tmp[0] = '\0';
    return AV_OK;
  }
  av_outfile_discard(o);
  return what ? refuse(o->path, what, err)
              : av_error_set(err, AV_ERR_IO, o->path, NULL, "cannot write: %s", strerror(e));
}

void av_outfile_discard(av_outfile_t *o) {
  if (o->f) fclose(o->f);
  o->f = NULL;
  if (o->tmp[0]) unlink(o->tmp);
  o->tmp[0] = '\0';
}

int av_outfile_fail(av_outfile_t *o, av_error_t *err) {
  int e = errno ? errno : EIO;
  av_outfile_discard(o);
  return av_error_set(err, AV_ERR_IO, o->path, NULL, "cannot write: %s", strerror(e));
}

int av_outfile_write(const char *path, const char *data, size_t len, int sync,
                     av_error_t *err) {
  av_outfile_t o;
  int rc = av_outfile_open(&o, path, err);
  if (rc) return rc;
  if (len && fwrite(data, 1, len, o.f) != len) return av_outfile_fail(&o, err);
  return av_outfile_commit(&o, sync, err);
}

FILE *av_outfile_append(const char *path) {
  int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  FILE *f = fd >= 0 ? fdopen(fd, "ab") : NULL;
  if (fd >= 0 && !f) close(fd);
  return f;
}
