/* JSON reading with user-facing errors: files load with duplicate keys rejected and syntax
 * errors located as file:line:column; typed getters name the key path and what was expected;
 * unknown keys are rejected with the list of valid ones. Every reader in anvil uses these. */
#ifndef AV_JSON_UTIL_H
#define AV_JSON_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Where values come from: the file name for messages and the error to fill. */
typedef struct av_jctx {
  const char *source;
  av_error_t *err;
} av_jctx_t;

/* Loads a JSON document. Caller owns *out (json_decref). */
int av_json_load_file(const char *path, json_t **out, av_error_t *err);
int av_json_load_string(const char *text, const char *source, json_t **out, av_error_t *err);

/* Jansson's message for a document that does not parse, without the token it quotes ("near
 * 'root'"): a file that is not JSON at all (a GPU spec path naming /etc/shadow) must not have
 * its contents echoed. Only a duplicate key, which the document really holds as a key, keeps
 * its name. */
void av_json_error_text(const json_error_t *je, char *out, size_t size);

/* Child key paths: "parent.key" / "parent[i]" (just "key" when parent is empty). */
void av_jpath_key(char *out, size_t size, const char *parent, const char *key);
void av_jpath_index(char *out, size_t size, const char *parent, size_t index);

/* "a, b, c" from a NULL-terminated list (or the first n entries when n > 0). */
void av_names_join(char *out, size_t size, const char *const *names, size_t n);

const char *av_json_type_name(const json_t *v);

int av_json_expect_object(const av_jctx_t *c, const json_t *v, const char *path);
int av_json_expect_array(const av_jctx_t *c, const json_t *v, const char *path);
/* Rejects keys not in `allowed` (NULL-terminated). */
int av_json_check_keys(const av_jctx_t *c, const json_t *obj, const char *path,
                       const char *const *allowed);

/* Value converters: v is the value at `path`. */
int av_json_as_int(const av_jctx_t *c, const json_t *v, const char *path, int64_t min,
                   int64_t max, int64_t *out);
int av_json_as_double(const av_jctx_t *c, const json_t *v, const char *path, double min,
                      double max, double *out);

/* A field of an object: the object's JSON path (for messages), the key, and whether a
 * missing key is an error. */
typedef struct av_json_field {
  const char *path;
  const char *key;
  int required;
} av_json_field_t;

/* Object getters: a missing key is an error when `required`, else *out = def. */
int av_json_get_int(const av_jctx_t *c, const json_t *obj, av_json_field_t f, int64_t def,
                    int64_t min, int64_t max, int64_t *out);
int av_json_get_double(const av_jctx_t *c, const json_t *obj, av_json_field_t f, double def,
                       double min, double max, double *out);
int av_json_get_bool(const av_jctx_t *c, const json_t *obj, const char *path, const char *key,
                     int required, int def, int *out);
/* *out borrows from obj (valid while obj lives). */
int av_json_get_string(const av_jctx_t *c, const json_t *obj, const char *path,
                       const char *key, int required, const char *def, const char **out);
/* An array of integers in [min, max]; caller owns *out (free). An empty array is an error
 * unless allow_empty. */
int av_json_get_int_array(const av_jctx_t *c, const json_t *obj, av_json_field_t f, int allow_empty,
                          int64_t min, int64_t max, int64_t **out, size_t *n);

/* The text av_json_dump_file writes (indented, keys in order, doubles round-trip). Caller
 * frees. */
char *av_json_dump_text(const json_t *v);
/* Writes a JSON value to `path` atomically (core/outfile.h: an exclusive temporary, then a
 * rename over a regular file or nothing), so a failure never leaves a partial file. */
int av_json_dump_file(const json_t *v, const char *path, av_error_t *err);
/* Same for plain text. */
int av_write_file_atomic(const char *path, const char *data, size_t len, av_error_t *err);

#endif
