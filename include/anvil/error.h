/* Errors of the public API: a status code and the one-line message the `anvil` program prints
 * for the same mistake ("source: key path: what is wrong and what was expected"). */
#ifndef ANVIL_ERROR_H
#define ANVIL_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The codes of the library, in its order; class 1 is a mistake in the input, 2 internal. */
typedef enum {
  ANVIL_OK = 0,
  ANVIL_ERR_IO,           /* cannot read or write file */
  ANVIL_ERR_PARSE,        /* JSON syntax error */
  ANVIL_ERR_SCHEMA,       /* invalid content */
  ANVIL_ERR_NAME,         /* unknown name */
  ANVIL_ERR_RANGE,        /* value out of range */
  ANVIL_ERR_MISMATCH,     /* inconsistent input */
  ANVIL_ERR_PLAN,         /* plan is not exact */
  ANVIL_ERR_UNSUPPORTED,  /* unsupported configuration */
  ANVIL_ERR_USAGE,        /* bad call */
  ANVIL_ERR_NODEVICE,     /* no CUDA device */
  ANVIL_ERR_NOMEM,        /* out of memory */
  ANVIL_ERR_CUDA,         /* CUDA error */
  ANVIL_ERR_INTERNAL      /* internal error */
} anvil_status_t;

typedef struct anvil_error {
  int code;               /* anvil_status_t; ANVIL_OK when nothing failed */
  char message[2048];     /* one line, as `anvil` prints it after "anvil: " */
} anvil_error_t;

/* "ANVIL_ERR_NAME" etc. */
const char *anvil_status_name(int code);
/* 1 for mistakes in the input, 2 for internal errors, 0 for ANVIL_OK. */
int anvil_status_class(int code);
/* `text` with control characters and invalid UTF-8 escaped, as `anvil` prints names and
 * messages; written to buf (size bytes), which it returns. */
char *anvil_escape_text(const char *text, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
