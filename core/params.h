/* Named parameters of schedulers and cost models: each declares a table of av_param_def_t
 * (name, type, default, range or choices, help); an experiment file's "params" object or a
 * CLI `-p key=value` is validated against it, unknown keys and bad values rejected by name. */
#ifndef AV_PARAMS_H
#define AV_PARAMS_H

#include <jansson.h>
#include <stdint.h>

#include "core/error.h"
#include "core/json_util.h"

typedef enum {
  AV_PARAM_INT, AV_PARAM_DOUBLE, AV_PARAM_BOOL, AV_PARAM_ENUM,
  AV_PARAM_STRING  /* free text, e.g. a file path; def is the bare text ("" allowed) */
} av_param_type_t;

typedef struct av_param_def {
  const char *name;
  av_param_type_t type;
  const char *def;              /* default, as JSON text ("4", "0.5", "true", "\"auto\"" not
                                   needed: enums give the bare choice, e.g. "heuristic") */
  double min, max;              /* INT and DOUBLE: inclusive range */
  const char *const *choices;   /* ENUM: NULL-terminated */
  const char *help;             /* one line, shown by `anvil list` */
} av_param_def_t;               /* tables end with an entry whose name is NULL */

#define AV_MAX_PARAMS 24
#define AV_MAX_STRING_PARAMS 4      /* STRING parameters per table */
#define AV_PARAM_TEXT_MAX 512       /* bytes per STRING value, including the NUL */

typedef struct av_params {
  const av_param_def_t *defs;
  int n;
  double num[AV_MAX_PARAMS];      /* INT, DOUBLE, BOOL (0/1), ENUM (index into choices),
                                     STRING (index into text) */
  char text[AV_MAX_STRING_PARAMS][AV_PARAM_TEXT_MAX]; /* STRING values */
} av_params_t;

/* Fills every parameter with its default. */
int av_params_init(av_params_t *p, const av_param_def_t *defs, av_error_t *err);
/* Defaults, then the keys of `obj` (may be NULL). `path` names obj in messages. */
int av_params_from_json(av_params_t *p, const av_param_def_t *defs, const json_t *obj,
                        const av_jctx_t *c, const char *path);
/* One "key=value" assignment (CLI). */
int av_params_set_text(av_params_t *p, const char *assignment, const char *source,
                       av_error_t *err);

/* Accessors; `name` must be in the table (a programming error otherwise: returns 0). */
int64_t av_params_int(const av_params_t *p, const char *name);
double av_params_double(const av_params_t *p, const char *name);
int av_params_bool(const av_params_t *p, const char *name);
const char *av_params_enum(const av_params_t *p, const char *name);
/* An ENUM parameter's value as its index in the definition's choices, so callers switch on
 * their own enum whose constants are declared in the choices' order (-1 when name is not an
 * ENUM parameter: a programming error). */
int av_params_choice(const av_params_t *p, const char *name);
/* Maps text to its index in the NULL-terminated `names` by full name. AV_ERR_NAME naming
 * source and path, and listing the valid names, when text is none of them. */
int av_enum_parse(const char *const *names, const char *text, const char *source,
                  const char *path, int *out, av_error_t *err);
/* STRING value (borrowed from p); "" when name is not a STRING parameter. */
const char *av_params_string(const av_params_t *p, const char *name);

/* {"name": value, ...} of every parameter. Caller owns the result. */
json_t *av_params_to_json(const av_params_t *p);
/* "k=v,k=v" (empty when there are no parameters). */
void av_params_format(const av_params_t *p, char *out, size_t size);

#endif
