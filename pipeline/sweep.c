/* Sweep generators and the cross product of their values (pipeline/sweep.h). */
#include "pipeline/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail_code(const av_jctx_t *c) {
  return c->err && c->err->code ? c->err->code : AV_ERR_SCHEMA;
}

/* {"from": a, "to": b, "step": s} or {"from": a, "to": b, "times": f}. */
static int parse_range(const av_jctx_t *c, const json_t *v, const char *where,
                       av_sweep_axis_t *a) {
  static const char *const keys[] = {"from", "to", "step", "times", NULL};
  if (av_json_check_keys(c, v, where, keys)) return fail_code(c);
  const json_t *from = json_object_get(v, "from"), *to = json_object_get(v, "to");
  const json_t *step = json_object_get(v, "step"), *times = json_object_get(v, "times");
  if (!json_is_number(from) || !json_is_number(to) || (step && !json_is_number(step)) ||
      (times && !json_is_number(times)) || (step && times))
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected a range {\"from\": A, \"to\": B} with numbers, and "
                        "optionally \"step\" (default 1) or \"times\" (geometric), not both");
  double lo = json_number_value(from), hi = json_number_value(to);
  a->geometric = times != NULL;
  a->from = lo;
  a->step = times ? json_number_value(times) : step ? json_number_value(step) : 1.0;
  a->integer = json_is_integer(from) && json_is_integer(to) && (!step || json_is_integer(step));
  double n;
  if (a->geometric) {
    if (lo <= 0 || a->step <= 1 || hi < lo)
      return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                          "a geometric range needs 0 < from <= to and times > 1 (got from %g, "
                          "to %g, times %g)",
                          lo, hi, a->step);
    n = floor(log(hi / lo) / log(a->step) + 1e-9) + 1;
  } else {
    if (a->step <= 0 || hi < lo)
      return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                          "a range needs from <= to and step > 0 (got from %g, to %g, step %g)",
                          lo, hi, a->step);
    n = floor((hi - lo) / a->step + 1e-9) + 1;
  }
  if (n > AV_SWEEP_MAX_POINTS)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "the range has %.0f values; at most %d", n, AV_SWEEP_MAX_POINTS);
  a->n = (int64_t)n;
  return AV_OK;
}

static int parse_axis(const av_jctx_t *c, const char *key, const json_t *v, const char *where,
                      av_sweep_t *s) {
  for (int i = 0; i < s->n_axes; i++)
    if (strcmp(s->axes[i].key, key) == 0)
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                          "'%s' is swept twice; give it once", key);
  if (s->n_axes == AV_SWEEP_MAX_AXES)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "at most %d swept keys", AV_SWEEP_MAX_AXES);
  av_sweep_axis_t *a = &s->axes[s->n_axes];
  memset(a, 0, sizeof *a);
  a->key = key;
  if (json_is_array(v)) {
    if (json_array_size(v) == 0)
      return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                          "expected a non-empty list of values");
    a->list = v;
    a->n = (int64_t)json_array_size(v);
  } else if (json_is_object(v)) {
    if (parse_range(c, v, where, a)) return fail_code(c);
  } else {
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected a list of values or a range {\"from\": A, \"to\": B, "
                        "\"step\": S} / {\"from\": A, \"to\": B, \"times\": F}, got %s",
                        av_json_type_name(v));
  }
  if (s->n_points > AV_SWEEP_MAX_POINTS / a->n)
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "the sweep has more than %d points; split it into several experiments",
                        AV_SWEEP_MAX_POINTS);
  s->n_points *= a->n;
  s->n_axes++;
  return AV_OK;
}

int av_sweep_parse(const av_jctx_t *c, const json_t *grid, const char *where,
                   const json_t *seeds, const char *seeds_path, av_sweep_t *out) {
  memset(out, 0, sizeof *out);
  out->n_points = 1;
  snprintf(out->grid_path, sizeof out->grid_path, "%s", where);
  snprintf(out->seeds_path, sizeof out->seeds_path, "%s", seeds_path ? seeds_path : "");
  if (seeds && parse_axis(c, "seed", seeds, seeds_path, out)) return fail_code(c);
  out->axes[0].from_seeds = seeds != NULL;
  if (!grid) return AV_OK;
  if (!json_is_object(grid) || json_object_size(grid) == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "expected an object of swept keys such as {\"k\": [2, 4, 8]}, got %s",
                        json_is_object(grid) ? "an empty object" : av_json_type_name(grid));
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)grid, key, v) {
    char kp[256];
    av_jpath_key(kp, sizeof kp, where, key);
    if (parse_axis(c, key, v, kp, out)) return fail_code(c);
  }
  return AV_OK;
}

void av_sweep_blame(const av_sweep_t *s, av_error_t *err, const char *set_path,
                    const char *point_name) {
  if (!err) return;
  for (int a = 0; a < s->n_axes; a++) {
    char kp[256];
    av_jpath_key(kp, sizeof kp, set_path, s->axes[a].key);
    size_t n = strlen(kp);
    const char *rest = err->path + n;
    if (strncmp(err->path, kp, n) != 0 || (*rest && *rest != '.' && *rest != '[')) continue;
    char moved[sizeof err->path];
    if (s->axes[a].from_seeds)
      snprintf(moved, sizeof moved, "%s%s", s->seeds_path, rest);
    else
      snprintf(moved, sizeof moved, "%s.%s%s", s->grid_path, s->axes[a].key, rest);
    snprintf(err->path, sizeof err->path, "%s", moved);
    break;
  }
  size_t n = strlen(err->message);
  snprintf(err->message + n, sizeof err->message - n, " (sweep point %s)", point_name);
}

/* Index on axis a of point `point` (the last axis varies fastest). */
static int64_t axis_index(const av_sweep_t *s, int a, int64_t point) {
  for (int k = s->n_axes - 1; k > a; k--) point /= s->axes[k].n;
  return point % s->axes[a].n;
}

static json_t *axis_value(const av_sweep_axis_t *a, int64_t i) {
  if (a->list) return json_incref(json_array_get(a->list, (size_t)i));
  double x = a->geometric ? a->from * pow(a->step, (double)i) : a->from + (double)i * a->step;
  return a->integer ? json_integer((json_int_t)llround(x)) : json_real(x);
}

int av_sweep_apply(const av_sweep_t *s, int64_t point, json_t *obj) {
  for (int a = 0; a < s->n_axes; a++)
    if (json_object_set_new(obj, s->axes[a].key, axis_value(&s->axes[a], axis_index(s, a, point))))
      return AV_ERR_NOMEM;
  return AV_OK;
}

void av_sweep_label(const av_sweep_t *s, int64_t point, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int a = 0; a < s->n_axes && used < size; a++) {
    json_t *v = axis_value(&s->axes[a], axis_index(s, a, point));
    char text[96];
    if (json_is_integer(v))
      snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
      snprintf(text, sizeof text, "%g", json_real_value(v));
    else if (json_is_string(v))
      snprintf(text, sizeof text, "%s", json_string_value(v));
    else {
      char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
      snprintf(text, sizeof text, "%s", d ? d : "?");
      free(d);
    }
    json_decref(v);
    used += (size_t)snprintf(out + used, size - used, "%s%s=%s", a ? "," : "", s->axes[a].key,
                             text);
  }
}
