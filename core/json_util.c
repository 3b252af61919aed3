/* JSON helpers shared by every reader: location-carrying errors, typed getters, unknown-key
 * rejection and atomic writes. */
#include "core/json_util.h"

#include "core/outfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void av_json_error_text(const json_error_t *je, char *out, size_t size) {
  static const char near[] = " near '";
  const char *cut = strstr(je->text, near);
  size_t n = strlen(je->text);
  /* a duplicate key is a key of an object the file really holds: naming it helps */
  if (cut && strncmp(je->text, "duplicate object key", 20) != 0) n = (size_t)(cut - je->text);
  snprintf(out, size, "%.*s", (int)n, je->text);
}

static int load_error(const json_error_t *je, const char *source, av_error_t *err) {
  char where[512], text[JSON_ERROR_TEXT_LENGTH];
  av_json_error_text(je, text, sizeof text);
  if (je->line > 0)
    snprintf(where, sizeof where, "%s:%d:%d", source, je->line, je->column);
  else
    snprintf(where, sizeof where, "%s", source);
  return av_error_set(err, AV_ERR_PARSE, where, NULL, "%s", text);
}

int av_json_load_file(const char *path, json_t **out, av_error_t *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return av_error_set(err, AV_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
  json_error_t je;
  json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
  fclose(f);
  if (!root) return load_error(&je, path, err);
  *out = root;
  return AV_OK;
}

int av_json_load_string(const char *text, const char *source, json_t **out, av_error_t *err) {
  json_error_t je;
  *out = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  return *out ? AV_OK : load_error(&je, source, err);
}

/* Key paths longer than the buffer are cut; the message stays readable either way. */
void av_jpath_key(char *out, size_t size, const char *parent, const char *key) {
  int n = (parent && parent[0]) ? snprintf(out, size, "%s.%s", parent, key)
                                : snprintf(out, size, "%s", key);
  if (n < 0 && size) out[0] = '\0';
}

void av_jpath_index(char *out, size_t size, const char *parent, size_t index) {
  int n = snprintf(out, size, "%s[%zu]", parent ? parent : "", index);
  if (n < 0 && size) out[0] = '\0';
}

void av_names_join(char *out, size_t size, const char *const *names, size_t n) {
  size_t used = 0;
  if (size) out[0] = '\0';
  for (size_t i = 0; (n ? i < n : names[i] != NULL) && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", names[i]);
}

const char *av_json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
  }
}

int av_json_expect_object(const av_jctx_t *c, const json_t *v, const char *path) {
  if (json_is_object(v)) return AV_OK;
  return av_error_set(c->err, AV_ERR_SCHEMA, c->source, path, "expected an object, got %s",
                      av_json_type_name(v));
}

int av_json_expect_array(const av_jctx_t *c, const json_t *v, const char *path) {
  if (json_is_array(v)) return AV_OK;
  return av_error_set(c->err, AV_ERR_SCHEMA, c->source, path, "expected an array, got %s",
                      av_json_type_name(v));
}

int av_json_check_keys(const av_jctx_t *c, const json_t *obj, const char *path,
                       const char *const *allowed) {
  const char *key;
  json_t *value;
  json_object_foreach((json_t *)obj, key, value) {
    int ok = 0;
    for (size_t i = 0; allowed[i]; i++)
      if (strcmp(key, allowed[i]) == 0) ok = 1;
    if (!ok) {
      char names[512], where[256];
      av_names_join(names, sizeof names, allowed, 0);
      av_jpath_key(where, sizeof where, path, key);
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                          "unknown key '%s'; expected one of: %s", key, names);
    }
  }
  return AV_OK;
}

int av_json_as_int(const av_jctx_t *c, const json_t *v, const char *path, int64_t min,
                   int64_t max, int64_t *out) {
  if (!json_is_integer(v))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, path, "expected an integer, got %s",
                        av_json_type_name(v));
  json_int_t x = json_integer_value(v);
  if (x < min || x > max)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, path,
                        "%lld is out of range; expected an integer in [%" PRId64 ", %" PRId64 "]",
                        (long long)x, min, max);
  *out = (int64_t)x;
  return AV_OK;
}

int av_json_as_double(const av_jctx_t *c, const json_t *v, const char *path, double min,
                      double max, double *out) {
  if (!json_is_number(v))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, path, "expected a number, got %s",
                        av_json_type_name(v));
  double x = json_number_value(v);
  if (!(x >= min && x <= max))
    return av_error_set(c->err, AV_ERR_RANGE, c->source, path,
                        "%g is out of range; expected a number in [%g, %g]", x, min, max);
  *out = x;
  return AV_OK;
}

/* Looks up `key`; returns 1 when found, 0 when absent and optional, -1 on error. */
static int lookup(const av_jctx_t *c, const json_t *obj, const char *path, const char *key,
                  int required, json_t **v, char *where, size_t wsize) {
  av_jpath_key(where, wsize, path, key);
  *v = json_object_get(obj, key);
  if (*v) return 1;
  if (!required) return 0;
  av_error_set(c->err, AV_ERR_SCHEMA, c->source, where, "missing required key '%s'", key);
  return -1;
}

int av_json_get_int(const av_jctx_t *c, const json_t *obj, av_json_field_t f, int64_t def,
                    int64_t min, int64_t max, int64_t *out) {
  json_t *v;
  char where[256];
  int found = lookup(c, obj, f.path, f.key, f.required, &v, where, sizeof where);
  if (found < 0) return c->err ? c->err->code : AV_ERR_SCHEMA;
  if (!found) {
    *out = def;
    return AV_OK;
  }
  return av_json_as_int(c, v, where, min, max, out);
}

int av_json_get_double(const av_jctx_t *c, const json_t *obj, av_json_field_t f, double def,
                       double min, double max, double *out) {
  json_t *v;
  char where[256];
  int found = lookup(c, obj, f.path, f.key, f.required, &v, where, sizeof where);
  if (found < 0) return c->err ? c->err->code : AV_ERR_SCHEMA;
  if (!found) {
    *out = def;
    return AV_OK;
  }
  return av_json_as_double(c, v, where, min, max, out);
}

int av_json_get_bool(const av_jctx_t *c, const json_t *obj, const char *path, const char *key,
                     int required, int def, int *out) {
  json_t *v;
  char where[256];
  int found = lookup(c, obj, path, key, required, &v, where, sizeof where);
  if (found < 0) return c->err ? c->err->code : AV_ERR_SCHEMA;
  if (!found) {
    *out = def;
    return AV_OK;
  }
  if (!json_is_boolean(v))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected true or false, got %s", av_json_type_name(v));
  *out = json_is_true(v);
  return AV_OK;
}

int av_json_get_string(const av_jctx_t *c, const json_t *obj, const char *path,
                       const char *key, int required, const char *def, const char **out) {
  json_t *v;
  char where[256];
  int found = lookup(c, obj, path, key, required, &v, where, sizeof where);
  if (found < 0) return c->err ? c->err->code : AV_ERR_SCHEMA;
  if (!found) {
    *out = def;
    return AV_OK;
  }
  if (!json_is_string(v))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where, "expected a string, got %s",
                        av_json_type_name(v));
  *out = json_string_value(v);
  return AV_OK;
}

int av_json_get_int_array(const av_jctx_t *c, const json_t *obj, av_json_field_t f, int allow_empty,
                          int64_t min, int64_t max, int64_t **out, size_t *n) {
  json_t *v;
  char where[256];
  *out = NULL;
  *n = 0;
  int found = lookup(c, obj, f.path, f.key, f.required, &v, where, sizeof where);
  if (found < 0) return c->err ? c->err->code : AV_ERR_SCHEMA;
  if (!found) return AV_OK;
  if (av_json_expect_array(c, v, where)) return c->err ? c->err->code : AV_ERR_SCHEMA;
  size_t len = json_array_size(v);
  if (len == 0 && !allow_empty)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected a non-empty array of integers");
  int64_t *vals = malloc((len ? len : 1) * sizeof *vals);
  if (!vals) return av_error_set(c->err, AV_ERR_NOMEM, c->source, where, "out of memory");
  for (size_t i = 0; i < len; i++) {
    char item[256];
    av_jpath_index(item, sizeof item, where, i);
    int rc = av_json_as_int(c, json_array_get(v, i), item, min, max, &vals[i]);
    if (rc) {
      free(vals);
      return rc;
    }
  }
  *out = vals;
  *n = len;
  return AV_OK;
}

int av_write_file_atomic(const char *path, const char *data, size_t len, av_error_t *err) {
  return av_outfile_write(path, data, len, 0, err);
}

char *av_json_dump_text(const json_t *v) {
  return json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
}

int av_json_dump_file(const json_t *v, const char *path, av_error_t *err) {
  char *text = av_json_dump_text(v);
  if (!text) return av_error_set(err, AV_ERR_NOMEM, path, NULL, "cannot serialise JSON");
  size_t len = strlen(text);
  text[len] = '\0';
  int rc = av_write_file_atomic(path, text, len, err);
  free(text);
  return rc;
}
