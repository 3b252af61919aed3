/* The output directory as one unit (pipeline/results_dir.h): staging beside the target,
 * one exchange of the two directories, then the old results removed. */
#define _GNU_SOURCE
#include "pipeline/results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/outfile.h"
#include "pipeline/files.h"

/* The files a run writes into its directory. */
static const char *const k_own[] = {"results.json", "results.csv", "journal.jsonl", NULL};

/* `name` is `own` or a temporary of it (core/outfile.h: own.tmp-<hex>) a killed run left. */
static int is_own_name(const char *name, const char *own) {
  size_t n = strlen(own);
  return strncmp(name, own, n) == 0 && (name[n] == '\0' || strncmp(name + n, ".tmp-", 5) == 0);
}

static int is_own(const av_outdir_t *od, const char *name) {
  for (int i = 0; k_own[i]; i++)
    if (is_own_name(name, k_own[i])) return 1;
  return od->extra[0] && is_own_name(name, od->extra);
}

void av_outdir_path(const av_outdir_t *od, const char *name, char *out, size_t size) {
  snprintf(out, size, "%s/%s", od->stage, name);
}

/* Removes the run's own files from directory d, then d itself; -1 (errno ENOTEMPTY) when
 * something else is in it. */
static int remove_own(const av_outdir_t *od, const char *d) {
  DIR *dir = opendir(d);
  if (!dir) return errno == ENOENT ? 0 : -1;
  struct dirent *ent;
  while ((ent = readdir(dir))) {
    if (!is_own(od, ent->d_name)) continue;
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", d, ent->d_name);
    unlink(p);
  }
  closedir(dir);
  return rmdir(d) == 0 || errno == ENOENT ? 0 : -1;
}

static int copy_file(const char *from, const char *to, av_error_t *err) {
  char *text = av_file_read(from, err);
  if (!text) return err && err->code ? err->code : AV_ERR_IO;
  int rc = av_file_write(to, text, strlen(text), err);
  free(text);
  return rc;
}

/* The staging directory: a fresh one, or (resume) the killed run's or the finished run's
 * journal. */
static int stage(av_outdir_t *od, const char *opt, int resume, av_error_t *err) {
  struct stat st;
  int have = lstat(od->stage, &st) == 0;
  if (have && !S_ISDIR(st.st_mode))
    return av_error_set(err, AV_ERR_IO, od->cmd, opt, "'%s' is in the way of the staging "
                        "directory of '%s' (%s); remove it", od->stage, od->dir,
                        S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
  if (have && !resume && remove_own(od, od->stage) != 0)
    return av_error_set(err, AV_ERR_IO, od->cmd, opt,
                        "'%s' (an interrupted run's staging directory) holds files anvil "
                        "did not write; move them away", od->stage);
  if (have && resume) {
    od->resumed = 1;
    return AV_OK;
  }
  if (mkdir(od->stage, 0777) != 0)
    return av_error_set(err, AV_ERR_IO, od->cmd, opt, "cannot create '%s': %s", od->stage,
                        strerror(errno));
  char from[1300], to[1300];
  snprintf(from, sizeof from, "%s/journal.jsonl", od->dir);
  if (!resume || access(from, F_OK) != 0) return AV_OK;
  av_outdir_path(od, "journal.jsonl", to, sizeof to);
  int rc = copy_file(from, to, err);
  if (rc) av_outdir_abandon(od);
  return rc;
}

int av_outdir_check(const char *cmd, const char *dir, const char *opt, av_error_t *err) {
  struct stat st;
  if (lstat(dir, &st) != 0 || S_ISDIR(st.st_mode)) return AV_OK;
  if (!S_ISLNK(st.st_mode))
    return av_error_set(err, AV_ERR_USAGE, cmd, opt, "'%s' is a file, not a directory", dir);
  /* the swap would replace the link, not the directory it names, and move its files */
  char *to = realpath(dir, NULL);
  int rc = av_error_set(err, AV_ERR_USAGE, cmd, opt,
                        "'%s' is a symbolic link; the results directory is replaced as a "
                        "whole, so name the directory itself%s%s%s",
                        dir, to ? " ('" : "", to ? to : "", to ? "')" : "");
  free(to);
  return rc;
}

int av_outdir_begin(av_outdir_t *od, const char *cmd, const char *dir, const char *opt,
                    const char *extra, int resume, av_error_t *err) {
  memset(od, 0, sizeof *od);
  snprintf(od->cmd, sizeof od->cmd, "%s", cmd);
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 0)
    return av_error_set(err, AV_ERR_USAGE, od->cmd, opt,
                        "empty path; expected the results directory");
  if (n >= sizeof od->dir - 16)
    return av_error_set(err, AV_ERR_USAGE, od->cmd, opt, "'%s' is too long", dir);
  memcpy(od->dir, dir, n);
  od->dir[n] = '\0';
  const char *base = strrchr(od->dir, '/') ? strrchr(od->dir, '/') + 1 : od->dir;
  if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(od->dir, "/") == 0)
    return av_error_set(err, AV_ERR_USAGE, od->cmd, opt,
                        "'%s' cannot be replaced as a whole; name the results directory "
                        "itself, e.g. %s/out",
                        dir, od->dir);
  snprintf(od->stage, sizeof od->stage, "%s.partial", od->dir);
  if (extra) snprintf(od->extra, sizeof od->extra, "%s", extra);
  int rc = av_outdir_check(od->cmd, od->dir, opt, err);
  if (rc) return rc;
  /* the parent must exist (made like mkdir -p) and take a new directory */
  char parent[1024];
  snprintf(parent, sizeof parent, "%s", od->dir);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = '\0';
    av_error_t merr;
    av_error_clear(&merr);
    if (av_mkdirs(parent, &merr))
      return av_error_set(err, AV_ERR_IO, od->cmd, opt, "cannot create the directory of '%s': "
                          "%s: %s", od->dir, merr.source, merr.message);
  }
  return stage(od, opt, resume, err);
}

/* Moves what the run did not write from the old directory into the new one. */
static int carry_over(const av_outdir_t *od, const char *from, const char *to, av_error_t *err) {
  DIR *d = opendir(from);
  if (!d) return AV_OK;
  int rc = AV_OK;
  struct dirent *ent;
  while (!rc && (ent = readdir(d))) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0 ||
        is_own(od, ent->d_name))
      continue;
    char a[1400], b[1400];
    snprintf(a, sizeof a, "%s/%s", from, ent->d_name);
    snprintf(b, sizeof b, "%s/%s", to, ent->d_name);
    if (rename(a, b) != 0)
      rc = av_error_set(err, AV_ERR_IO, a, NULL, "cannot move into the new results: %s",
                        strerror(errno));
  }
  closedir(d);
  return rc;
}

int av_outdir_commit(av_outdir_t *od, av_error_t *err) {
  struct stat st;
  if (stat(od->dir, &st) != 0) {
    if (rename(od->stage, od->dir) == 0) return AV_OK;
    return av_error_set(err, AV_ERR_IO, od->dir, NULL, "cannot put the results in place: %s",
                        strerror(errno));
  }
  /* foreign files first (each move is atomic; the old results stay whole meanwhile) */
  int rc = carry_over(od, od->dir, od->stage, err);
  if (rc) return rc;
  if (renameat2(AT_FDCWD, od->stage, AT_FDCWD, od->dir, RENAME_EXCHANGE) != 0) {
    /* a file system without the exchange: two renames */
    char old[sizeof od->stage];
    snprintf(old, sizeof old, "%.1000s.old", od->dir);
    av_remove_tree(old);
    if (rename(od->dir, old) != 0 || rename(od->stage, od->dir) != 0)
      return av_error_set(err, AV_ERR_IO, od->dir, NULL, "cannot put the results in place: %s",
                          strerror(errno));
    snprintf(od->stage, sizeof od->stage, "%s", old);
  }
  /* the staging path now holds the previous results */
  if (remove_own(od, od->stage) != 0) av_remove_tree(od->stage);
  return AV_OK;
}

void av_outdir_abandon(av_outdir_t *od) {
  if (od->stage[0]) av_remove_tree(od->stage);
}

int av_path_check_writable(const char *cmd, const char *path, const char *opt,
                           av_error_t *err) {
  if (!path[0]) return av_error_set(err, AV_ERR_USAGE, cmd, opt, "empty path; expected a file");
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return av_error_set(err, AV_ERR_USAGE, cmd, opt, "'%s' is a directory, not a file", path);
  const char *what = av_outfile_refusal(path);
  if (what)
    return av_error_set(err, AV_ERR_USAGE, cmd, opt, "'%s' is %s, not a regular file; anvil "
                        "replaces only regular files", path, what);
  /* the probe is the writer's own temporary, made and removed */
  av_outfile_t probe;
  av_error_t perr;
  av_error_clear(&perr);
  if (av_outfile_open(&probe, path, &perr))
    return av_error_set(err, AV_ERR_USAGE, cmd, opt, "cannot write '%s': %s", path,
                        perr.message + (strncmp(perr.message, "cannot write: ", 14) ? 0 : 14));
  av_outfile_discard(&probe);
  return AV_OK;
}

int av_dir_check_writable(const char *cmd, const char *dir, const char *opt, av_error_t *err) {
  if (!dir[0])
    return av_error_set(err, AV_ERR_USAGE, cmd, opt, "empty path; expected a directory");
  char at[1024];
  if (strlen(dir) >= sizeof at)
    return av_error_set(err, AV_ERR_USAGE, cmd, opt, "'%s' is too long", dir);
  snprintf(at, sizeof at, "%s", dir);
  /* the nearest part of the path that exists must be a directory that takes new entries */
  for (;;) {
    struct stat st;
    if (stat(at, &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        return av_error_set(err, AV_ERR_USAGE, cmd, opt, "'%s' is a file, not a directory", at);
      /* a probe directory made and removed: access() says yes to root on /proc */
      char probe[1100];
      snprintf(probe, sizeof probe, "%s/.anvil-probe-XXXXXX", at);
      if (!mkdtemp(probe))
        return av_error_set(err, AV_ERR_USAGE, cmd, opt, "cannot write in '%s': %s", at,
                            strerror(errno));
      rmdir(probe);
      return AV_OK;
    }
    char *slash = strrchr(at, '/');
    if (!slash)
      snprintf(at, sizeof at, ".");  /* a relative name: the current directory */
    else if (slash == at)
      at[1] = '\0';
    else
      *slash = '\0';
  }
}
