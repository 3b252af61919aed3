/* Parameter tables: defaults, validation against the declared type/range/choices, and
 * round-tripping to JSON so results record exactly what ran. */
#include "core/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find(const av_params_t *p, const char *name) {
  for (int i = 0; i < p->n; i++)
    if (strcmp(p->defs[i].name, name) == 0) return i;
  return -1;
}

int av_enum_parse(const char *const *names, const char *text, const char *source,
                  const char *path, int *out, av_error_t *err) {
  for (int i = 0; names && names[i]; i++)
    if (strcmp(names[i], text) == 0) {
      *out = i;
      return AV_OK;
    }
  char list[512];
  av_names_join(list, sizeof list, names, 0);
  return av_error_set(err, AV_ERR_NAME, source, path, "unknown value '%s'; expected one of: %s",
                      text, list);
}

static int valid_names(const av_params_t *p, char *out, size_t size) {
  const char *names[AV_MAX_PARAMS + 1];
  for (int i = 0; i < p->n; i++) names[i] = p->defs[i].name;
  names[p->n] = NULL;
  if (p->n == 0)
    snprintf(out, size, "(this one takes no parameters)");
  else
    av_names_join(out, size, names, 0);
  return 0;
}

/* Sets parameter i from a JSON value. */
static int set_value(av_params_t *p, int i, const json_t *v, const av_jctx_t *c,
                     const char *where) {
  const av_param_def_t *d = &p->defs[i];
  switch (d->type) {
    case AV_PARAM_INT: {
      int64_t x;
      int rc = av_json_as_int(c, v, where, (int64_t)d->min, (int64_t)d->max, &x);
      if (rc) return rc;
      p->num[i] = (double)x;
      return AV_OK;
    }
    case AV_PARAM_DOUBLE:
      return av_json_as_double(c, v, where, d->min, d->max, &p->num[i]);
    case AV_PARAM_BOOL:
      if (!json_is_boolean(v))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "expected true or false, got %s", av_json_type_name(v));
      p->num[i] = json_is_true(v);
      return AV_OK;
    case AV_PARAM_ENUM: {
      char names[512];
      av_names_join(names, sizeof names, d->choices, 0);
      if (!json_is_string(v))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "expected one of the strings: %s", names);
      int k, rc = av_enum_parse(d->choices, json_string_value(v), c->source, where, &k, c->err);
      if (!rc) p->num[i] = k;
      return rc;
    }
    case AV_PARAM_STRING: {
      if (!json_is_string(v))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "expected a string, got %s", av_json_type_name(v));
      const char *t = json_string_value(v);
      if (strlen(t) >= AV_PARAM_TEXT_MAX)
        return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                            "text is %zu bytes long; at most %d allowed", strlen(t),
                            AV_PARAM_TEXT_MAX - 1);
      snprintf(p->text[(int)p->num[i]], AV_PARAM_TEXT_MAX, "%s", t);
      return AV_OK;
    }
  }
  return av_error_set(c->err, AV_ERR_INTERNAL, c->source, where, "bad parameter type");
}

/* Parses a default or CLI text as JSON (bare words become strings). */
static json_t *text_value(const av_param_def_t *d, const char *text) {
  if (d->type == AV_PARAM_ENUM || d->type == AV_PARAM_STRING) return json_string(text);
  return json_loads(text, JSON_DECODE_ANY, NULL);
}

int av_params_init(av_params_t *p, const av_param_def_t *defs, av_error_t *err) {
  memset(p, 0, sizeof *p);
  p->defs = defs;
  while (defs && defs[p->n].name) p->n++;
  if (p->n > AV_MAX_PARAMS)
    return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL, "too many parameters");
  av_jctx_t c = {.source = "defaults", .err = err};
  int n_text = 0;
  for (int i = 0; i < p->n; i++) {
    if (defs[i].type != AV_PARAM_STRING) continue;
    if (n_text == AV_MAX_STRING_PARAMS)
      return av_error_set(err, AV_ERR_INTERNAL, NULL, defs[i].name,
                          "too many string parameters");
    p->num[i] = n_text++;  /* the STRING's slot in p->text */
  }
  for (int i = 0; i < p->n; i++) {
    json_t *v = text_value(&defs[i], defs[i].def);
    int rc = v ? set_value(p, i, v, &c, defs[i].name)
               : av_error_set(err, AV_ERR_INTERNAL, NULL, defs[i].name, "bad default '%s'",
                              defs[i].def);
    json_decref(v);
    if (rc) return rc;
  }
  return AV_OK;
}

int av_params_from_json(av_params_t *p, const av_param_def_t *defs, const json_t *obj,
                        const av_jctx_t *c, const char *path) {
  int rc = av_params_init(p, defs, c->err);
  if (rc || !obj) return rc;
  if ((rc = av_json_expect_object(c, obj, path))) return rc;
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)obj, key, v) {
    char where[256];
    av_jpath_key(where, sizeof where, path, key);
    int i = find(p, key);
    if (i < 0) {
      char names[512];
      valid_names(p, names, sizeof names);
      return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                          "unknown parameter '%s'; expected one of: %s", key, names);
    }
    if ((rc = set_value(p, i, v, c, where))) return rc;
  }
  return AV_OK;
}

int av_params_set_text(av_params_t *p, const char *assignment, const char *source,
                       av_error_t *err) {
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment)
    return av_error_set(err, AV_ERR_USAGE, source, NULL,
                        "'%s' is not a parameter assignment; expected key=value", assignment);
  char key[128];
  snprintf(key, sizeof key, "%.*s", (int)(eq - assignment), assignment);
  int i = find(p, key);
  if (i < 0) {
    char names[512];
    valid_names(p, names, sizeof names);
    return av_error_set(err, AV_ERR_NAME, source, key,
                        "unknown parameter '%s'; expected one of: %s", key, names);
  }
  json_t *v = text_value(&p->defs[i], eq + 1);
  if (!v) v = json_string(eq + 1);
  av_jctx_t c = {.source = source, .err = err};
  int rc = set_value(p, i, v, &c, key);
  json_decref(v);
  return rc;
}

int64_t av_params_int(const av_params_t *p, const char *name) {
  int i = find(p, name);
  return i < 0 ? 0 : (int64_t)llround(p->num[i]);
}

double av_params_double(const av_params_t *p, const char *name) {
  int i = find(p, name);
  return i < 0 ? 0.0 : p->num[i];
}

int av_params_bool(const av_params_t *p, const char *name) {
  int i = find(p, name);
  return i < 0 ? 0 : p->num[i] != 0.0;
}

const char *av_params_enum(const av_params_t *p, const char *name) {
  int i = find(p, name);
  return i < 0 ? "" : p->defs[i].choices[(int)p->num[i]];
}

int av_params_choice(const av_params_t *p, const char *name) {
  int i = find(p, name);
  return i < 0 || p->defs[i].type != AV_PARAM_ENUM ? -1 : (int)p->num[i];
}

const char *av_params_string(const av_params_t *p, const char *name) {
  int i = find(p, name);
  return i < 0 || p->defs[i].type != AV_PARAM_STRING ? "" : p->text[(int)p->num[i]];
}

static json_t *value_json(const av_params_t *p, int i) {
  switch (p->defs[i].type) {
    case AV_PARAM_INT: return json_integer((json_int_t)llround(p->num[i]));
    case AV_PARAM_DOUBLE: return json_real(p->num[i]);
    case AV_PARAM_BOOL: return json_boolean(p->num[i] != 0.0);
    case AV_PARAM_ENUM: return json_string(p->defs[i].choices[(int)p->num[i]]);
    case AV_PARAM_STRING: return json_string(p->text[(int)p->num[i]]);
  }
  return json_null();
}

json_t *av_params_to_json(const av_params_t *p) {
  json_t *o = json_object();
  for (int i = 0; o && i < p->n; i++) json_object_set_new(o, p->defs[i].name, value_json(p, i));
  return o;
}

/* Every plan records its parameters, so this runs per plan: values are written directly,
 * and only reals go through Jansson (the text JSON gives them). */
void av_params_format(const av_params_t *p, char *out, size_t size) {
  size_t used = 0;
  if (size) out[0] = '\0';
  for (int i = 0; i < p->n && used < size; i++) {
    char num[32], *t = NULL;
    const char *s = num;
    switch (p->defs[i].type) {
      case AV_PARAM_INT: snprintf(num, sizeof num, "%lld", (long long)llround(p->num[i])); break;
      case AV_PARAM_BOOL: s = p->num[i] != 0.0 ? "true" : "false"; break;
      case AV_PARAM_ENUM: s = p->defs[i].choices[(int)p->num[i]]; break;
      case AV_PARAM_STRING: s = p->text[(int)p->num[i]]; break;
      case AV_PARAM_DOUBLE: {
        json_t *v = value_json(p, i);
        t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        s = t ? t : "?";
        json_decref(v);
        break;
      }
      default: s = "null";
    }
    size_t k = strlen(p->defs[i].name), m = strlen(s);
    if (used + (i > 0) + k + 1 + m < size) { /* fits: copy (snprintf's result, faster) */
      if (i) out[used++] = ',';
      memcpy(out + used, p->defs[i].name, k);
      out[used + k] = '=';
      memcpy(out + used + k + 1, s, m + 1);
      used += k + 1 + m;
    } else {
      used += (size_t)snprintf(out + used, size - used, "%s%s=%s", i ? "," : "",
                               p->defs[i].name, s);
    }
    free(t);
  }
}
