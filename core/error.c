/* Error values: first-error-wins recording and the one-line format users see. */
#include "core/error.h"

#include "core/escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void av_error_clear(av_error_t *err) {
  if (err) memset(err, 0, sizeof *err);
}

int av_error_set(av_error_t *err, int code, const char *source, const char *path,
                 const char *fmt, ...) {
  if (!err || err->code != AV_OK) return code;
  err->code = code;
  snprintf(err->source, sizeof err->source, "%s", source ? source : "");
  snprintf(err->path, sizeof err->path, "%s", path ? path : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return code;
}

const char *av_error_code_name(int code) {
  static const char *const names[] = {
#define AV_X_NAME(c, cls, text) #c,
      AV_ERROR_CODES(AV_X_NAME)
#undef AV_X_NAME
  };
  return (code >= 0 && code < AV_ERR__COUNT) ? names[code] : "AV_ERR_UNKNOWN";
}

int av_error_exit_class(int code) {
  static const int classes[] = {
#define AV_X_CLASS(c, cls, text) cls,
      AV_ERROR_CODES(AV_X_CLASS)
#undef AV_X_CLASS
  };
  return (code >= 0 && code < AV_ERR__COUNT) ? classes[code] : 2;
}

char *av_error_format(const av_error_t *err, char *buf, size_t size) {
  if (!size) return buf;
  buf[0] = '\0';
  if (!err) return buf;
  char raw[sizeof err->source + sizeof err->path + sizeof err->message + 8];
  size_t n = 0;
  raw[0] = '\0';
  if (err->source[0]) n += (size_t)snprintf(raw + n, sizeof raw - n, "%s: ", err->source);
  if (err->path[0]) n += (size_t)snprintf(raw + n, sizeof raw - n, "%s: ", err->path);
  snprintf(raw + n, sizeof raw - n, "%s", err->message);
  /* messages quote names and paths as the user gave them */
  return av_escape_text(raw, buf, size);
}
