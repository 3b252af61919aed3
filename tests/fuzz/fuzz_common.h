/* Shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c, docs/reliability.md#fuzzing): the
 * loaders read paths, so each input is written to one scratch file per process first. */
#ifndef AV_TESTS_FUZZ_COMMON_H
#define AV_TESTS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

static char av_fuzz_path[128];

static inline void av_fuzz_cleanup(void) {
  if (av_fuzz_path[0]) unlink(av_fuzz_path);
}

/* The input as the file av_fuzz_path (suffix chosen by the harness: ".json", ".jsonl"). */
static inline const char *av_fuzz_file(const uint8_t *data, size_t size, const char *suffix) {
  if (!av_fuzz_path[0]) {
    const char *dir = getenv("TMPDIR");
    snprintf(av_fuzz_path, sizeof av_fuzz_path, "%s/anvil_fuzz_%ld%s", dir ? dir : "/tmp",
             (long)getpid(), suffix);
    atexit(av_fuzz_cleanup);
  }
  FILE *f = fopen(av_fuzz_path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  return av_fuzz_path;
}

/* The input parsed as the loaders parse files (duplicates rejected); NULL when not JSON. */
static inline json_t *av_fuzz_json(const uint8_t *data, size_t size) {
  json_error_t je;
  return json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
}

#endif
