/* The public error and the small shared pieces of the API: codes and their names, the
 * one-line message, version, data directory, anvil_free. */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_internal.h"
#include "core/escape.h"
#include "pipeline/files.h"
#include "pipeline/provenance.h"
#include "selectors/selectors.h"

_Static_assert((int)ANVIL_ERR_INTERNAL == (int)AV_ERR_INTERNAL &&
                   (int)ANVIL_ERR_USAGE == (int)AV_ERR_USAGE &&
                   (int)ANVIL_ERR_PLAN == (int)AV_ERR_PLAN,
               "anvil_status_t follows AV_ERROR_CODES");

int av__api_error(anvil_error_t *out, const av_error_t *err, int rc) {
  int code = err && err->code ? err->code : rc ? AV_ERR_INTERNAL : AV_OK;
  if (out) {
    out->code = code;
    out->message[0] = '\0';
    if (code) {
      av_error_format(err, out->message, sizeof out->message);
      if (!out->message[0])
        snprintf(out->message, sizeof out->message, "%s", av_error_code_name(code));
    }
  }
  return code;
}

const char *anvil_status_name(int code) {
  static const char *const names[] = {
      "ANVIL_OK",         "ANVIL_ERR_IO",       "ANVIL_ERR_PARSE",       "ANVIL_ERR_SCHEMA",
      "ANVIL_ERR_NAME",   "ANVIL_ERR_RANGE",    "ANVIL_ERR_MISMATCH",    "ANVIL_ERR_PLAN",
      "ANVIL_ERR_UNSUPPORTED", "ANVIL_ERR_USAGE", "ANVIL_ERR_NODEVICE", "ANVIL_ERR_NOMEM",
      "ANVIL_ERR_CUDA",   "ANVIL_ERR_INTERNAL"};
  _Static_assert(sizeof names / sizeof names[0] == AV_ERR__COUNT, "one name per code");
  return code >= 0 && code < AV_ERR__COUNT ? names[code] : "ANVIL_ERR_INTERNAL";
}

int anvil_status_class(int code) { return av_error_exit_class(code); }

char *anvil_escape_text(const char *text, char *buf, size_t size) {
  return av_escape_text(text, buf, size);
}

const char *anvil_version(void) { return av_version(); }

const char *anvil_git_commit(void) { return av_git_commit(); }

int anvil_init(anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int rc = av_selectors_register(&e);
  return av__api_error(err, &e, rc);
}

const char *anvil_data_dir(void) { return av_data_dir(); }

int anvil_mkdirs(const char *path, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int rc = av_mkdirs(path, &e);
  return av__api_error(err, &e, rc);
}

void anvil_free(void *p) { free(p); }

av_heads_t av__api_heads(const anvil_heads_t *h) {
  av_heads_t out = {.hq = 32, .hkv = 8, .head_dim = 128, .dtype = AV_DTYPE_FP16};
  if (h) {
    out.hq = h->q_heads;
    out.hkv = h->kv_heads;
    out.head_dim = h->head_dim;
    out.dtype = h->dtype == ANVIL_DTYPE_BF16 ? AV_DTYPE_BF16 : AV_DTYPE_FP16;
  }
  return out;
}

int av__api_params(av_params_t *p, const av_param_def_t *defs, const char *const *kv, int n,
                   const char *source, av_error_t *err) {
  int rc = av_params_init(p, defs, err);
  for (int i = 0; !rc && i < n; i++) rc = av_params_set_text(p, kv[i], source, err);
  return rc;
}
