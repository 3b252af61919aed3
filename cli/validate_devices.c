/* `anvil validate --devices LIST` (cli/validate_devices.h). Each shard is this program run
 * again (/proc/self/exe), so it opens its CUDA device in a process of its own: a CUDA context
 * does not survive fork, and one process per GPU keeps the measurements of one device free
 * of the host threads of the others. */
#define _GNU_SOURCE
#include "cli/validate_devices.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anvil/anvil.h"
#include "cli/args.h"

extern char **environ;

int av_vdevices_parse(const char *text, av_vdevices_t *out, anvil_error_t *err) {
  out->n = 0;
  const char *p = text;
  for (;;) {
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno || v < 0 || v > 1023 || (*end && *end != ','))
      return av_cli_error(err, ANVIL_ERR_USAGE, "validate", "--devices",
                          "'%s' is not a list of CUDA device indices (e.g. 0,1)", text);
    if (out->n == AV_VDEVICES_MAX)
      return av_cli_error(err, ANVIL_ERR_USAGE, "validate", "--devices",
                          "more than %d devices", AV_VDEVICES_MAX);
    out->id[out->n++] = (int)v;
    if (!*end) return ANVIL_OK;
    p = end + 1;
  }
}

/* The value CUDA_VISIBLE_DEVICES gives a shard on device `id`: entry `id` of this process's
 * own list when it has one (so --devices counts the devices this process sees), else `id`. */
static int visible(int id, char *buf, size_t size, anvil_error_t *err) {
  const char *mine = getenv("CUDA_VISIBLE_DEVICES");
  if (!mine || !*mine) {
    snprintf(buf, size, "%d", id);
    return ANVIL_OK;
  }
  const char *p = mine;
  for (int i = 0; i < id && p; i++) {
    p = strchr(p, ',');
    if (p) p++;
  }
  const size_t n = p ? strcspn(p, ",") : 0;
  if (!n || n >= size)
    return av_cli_error(err, ANVIL_ERR_USAGE, "validate", "--devices",
                        "device %d is not among the devices CUDA_VISIBLE_DEVICES=%.200s lets "
                        "this process see", id, mine);
  snprintf(buf, size, "%.*s", (int)n, p);
  return ANVIL_OK;
}

/* environ with CUDA_VISIBLE_DEVICES set to `dev`. Caller frees the array (not its strings
 * but the last). */
static char **shard_env(const char *dev) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  char *var = malloc(strlen(dev) + 24);
  if (!env || !var) {
    free(env);
    free(var);
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) != 0) env[k++] = environ[i];
  sprintf(var, "CUDA_VISIBLE_DEVICES=%s", dev);
  env[k] = var;
  return env;
}

static void free_env(char **env) {
  if (!env) return;
  size_t k = 0;
  while (env[k + 1]) k++;
  free(env[k]);
  free(env);
}

/* Starts shard k; *pid receives its process. */
static int spawn_shard(const av_vdevices_t *d, int k, const char *dir, const char *const *args,
                       int n_args, pid_t *pid, anvil_error_t *err) {
  char sdir[1200], log[1300], shard[32], dev[64];
  snprintf(sdir, sizeof sdir, "%s/shards/%d", dir, k);
  snprintf(log, sizeof log, "%s/validate.log", sdir);
  snprintf(shard, sizeof shard, "%d/%d", k, d->n);
  int rc = visible(d->id[k], dev, sizeof dev, err);
  if (!rc) rc = anvil_mkdirs(sdir, err);
  if (rc) return rc;
  const char **argv = calloc((size_t)n_args + 8, sizeof *argv);
  char **env = argv ? shard_env(dev) : NULL;
  posix_spawn_file_actions_t fa;
  int fa_ok = env && posix_spawn_file_actions_init(&fa) == 0;
  if (!fa_ok) {
    free(argv);
    free_env(env);
    return av_cli_error(err, ANVIL_ERR_NOMEM, "validate", "--devices", "out of memory");
  }
  int n = 0;
  argv[n++] = "anvil";
  argv[n++] = "validate";
  for (int i = 0; i < n_args; i++) argv[n++] = args[i];
  argv[n++] = "--shard";
  argv[n++] = shard;
  argv[n++] = "--out";
  argv[n++] = sdir;
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int e = posix_spawn(pid, "/proc/self/exe", &fa, NULL, (char *const *)argv, env);
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  free_env(env);
  if (e)
    return av_cli_error(err, ANVIL_ERR_IO, "validate", "--devices",
                        "cannot start the shard for device %d: %s", d->id[k], strerror(e));
  fprintf(stderr, "validate: shard %s on CUDA device %s, log %s\n", shard, dev, log);
  return ANVIL_OK;
}

int av_vdevices_run(const av_vdevices_t *d, const char *dir, const char *const *args,
                    int n_args, anvil_error_t *err) {
  pid_t pid[AV_VDEVICES_MAX];
  int started = 0, rc = ANVIL_OK;
  for (; started < d->n && !rc; started++)
    rc = spawn_shard(d, started, dir, args, n_args, &pid[started], err);
  if (rc) started--;  /* the last one did not start */
  for (int k = 0; k < started; k++) {
    int st = 0;
    while (waitpid(pid[k], &st, 0) < 0 && errno == EINTR) {
    }
    const int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (ok) {
      fprintf(stderr, "validate: shard %d/%d done\n", k, d->n);
    } else if (!rc) {
      rc = av_cli_error(err, ANVIL_ERR_IO, "validate", "--devices",
                        "shard %d/%d on device %d %s %d; its output is in "
                        "%s/shards/%d/validate.log (--resume continues it)",
                        k, d->n, d->id[k], WIFEXITED(st) ? "exited with status" : "died of signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), dir, k);
    }
  }
  return rc;
}
