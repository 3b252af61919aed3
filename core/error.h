/* Errors are values: library functions return an int status (AV_OK or a code below) and fill
 * an optional av_error_t with the first error: where it came from (file[:line:col] and a key
 * path such as `workloads[1].L[2]`) and a sentence a user can act on. Only main() prints. */
#ifndef AV_ERROR_H
#define AV_ERROR_H

#include <stddef.h>

/* X(code, exit_class, summary): exit_class 1 = the user's input is wrong, 2 = internal. */
#define AV_ERROR_CODES(X)                                   \
  X(AV_OK, 0, "ok")                                         \
  X(AV_ERR_IO, 1, "cannot read or write file")              \
  X(AV_ERR_PARSE, 1, "JSON syntax error")                   \
  X(AV_ERR_SCHEMA, 1, "invalid content")                    \
  X(AV_ERR_NAME, 1, "unknown name")                         \
  X(AV_ERR_RANGE, 1, "value out of range")                  \
  X(AV_ERR_MISMATCH, 1, "inconsistent input")               \
  X(AV_ERR_PLAN, 1, "plan is not exact")                    \
  X(AV_ERR_UNSUPPORTED, 1, "unsupported configuration")     \
  X(AV_ERR_USAGE, 1, "bad command line")                    \
  X(AV_ERR_NODEVICE, 1, "no CUDA device")                   \
  X(AV_ERR_NOMEM, 2, "out of memory")                       \
  X(AV_ERR_CUDA, 2, "CUDA error")                           \
  X(AV_ERR_INTERNAL, 2, "internal error")

typedef enum {
#define AV_X_ENUM(code, cls, text) code,
  AV_ERROR_CODES(AV_X_ENUM)
#undef AV_X_ENUM
  AV_ERR__COUNT
} av_status_t;

typedef struct av_error {
  int code;           /* av_status_t; AV_OK when no error was recorded */
  char source[512];   /* file, with :line:column for syntax errors; may be empty */
  char path[256];     /* key path inside the source, e.g. workloads[1].L[2]; may be empty */
  char message[768];  /* what is wrong and what was expected */
} av_error_t;

void av_error_clear(av_error_t *err);

/* Records the first error only (later calls leave an existing error untouched, so the root
 * cause survives unwinding). Returns `code`, so callers can `return av_error_set(...)`.
 * err may be NULL. source and path may be NULL. */
int av_error_set(av_error_t *err, int code, const char *source, const char *path,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

const char *av_error_code_name(int code);
/* 1 for errors in the user's input, 2 for internal ones, 0 for AV_OK. */
int av_error_exit_class(int code);
/* "source: path: message" (parts that are empty are left out), with control characters
 * escaped (core/escape.h): it is what users see. Returns buf. */
char *av_error_format(const av_error_t *err, char *buf, size_t size);

#endif
