/* Where an installed anvil keeps its data: <prefix>/share/anvil beside the lib/ (or bin/)
 * directory of the binary that holds this code (libanvil.so, the `anvil` program, the
 * Python extension, which carries a copy at <package>/share/anvil). Found from the binary's
 * own path (dladdr), so an installed anvil needs no environment variable. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data_dir.h"

static char installed[PATH_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int has_specs(const char *dir) {
  char p[PATH_MAX + 48];
  struct stat st;
  snprintf(p, sizeof p, "%s/gpus", dir);
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void find_installed(void) {
  Dl_info info;
  char self[PATH_MAX], dir[PATH_MAX];
  if (dladdr((void *)&find_installed, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
    snprintf(self, sizeof self, "%s", info.dli_fname);
  else {
    /* The main program's own path is not in its link map entry. */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = '\0';
  }
  if (!realpath(self, dir)) return;
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  *slash = '\0';
  const char *const rel[] = {"/../share/anvil", "/share/anvil"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char cand[PATH_MAX], real[PATH_MAX];
    snprintf(cand, sizeof cand, "%s%s", dir, rel[i]);
    if (has_specs(cand) && realpath(cand, real)) {
      snprintf(installed, sizeof installed, "%s", real);
      return;
    }
  }
}

const char *av__data_dir_installed(void) {
  pthread_once(&once, find_installed);
  return installed[0] ? installed : NULL;
}
