/* Sweeps in experiment files (docs/experiments.md#sweeps): a "grid" object maps keys to value
 * generators — a list of values, an arithmetic range {"from", "to", "step"} or a geometric one
 * {"from", "to", "times"} — and a sweep is their cross product, so a 10^5-point study is a few
 * lines. Points are computed on demand from their index (nothing is expanded up front), and a
 * point's values are written into one reusable JSON object. */
#ifndef AV_PIPELINE_SWEEP_H
#define AV_PIPELINE_SWEEP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/json_util.h"

#define AV_SWEEP_MAX_AXES 8
#define AV_SWEEP_MAX_POINTS 1000000

typedef struct av_sweep_axis {
  const char *key;       /* borrowed from the document */
  const json_t *list;    /* the values of a list; NULL for a range */
  double from, step;     /* range: from + i * step, or from * step^i when geometric */
  int geometric;
  int integer;           /* range values are integers */
  int64_t n;             /* values on this axis */
  int from_seeds;        /* given as "seeds", not in the grid */
} av_sweep_axis_t;

typedef struct av_sweep {
  int n_axes;
  av_sweep_axis_t axes[AV_SWEEP_MAX_AXES];
  int64_t n_points;      /* product of the axes' sizes; 1 without axes */
  char grid_path[128];   /* where the generators were: "...grid", "...seeds" */
  char seeds_path[128];
} av_sweep_t;

/* Reads the generators of `grid` (an object, may be NULL) at key path `where` ("...grid"),
 * plus `seeds` (may be NULL; a generator for the key "seed", named `seeds_path` in
 * messages). Every key may appear once. Nothing is allocated; the sweep borrows from the
 * document, which must outlive it. */
int av_sweep_parse(const av_jctx_t *c, const json_t *grid, const char *where,
                   const json_t *seeds, const char *seeds_path, av_sweep_t *out);
/* Writes point `point`'s value of every axis into `obj` (replacing what is there). */
int av_sweep_apply(const av_sweep_t *s, int64_t point, json_t *obj);
/* An error raised on a point's values (at `set_path`.<key>, where apply wrote them) is moved
 * to the generator that made the value (<grid>.<key> or the seeds) and names the point. */
void av_sweep_blame(const av_sweep_t *s, av_error_t *err, const char *set_path,
                    const char *point_name);
/* "k=v,k=v" of point `point`, cut to `size`. */
void av_sweep_label(const av_sweep_t *s, int64_t point, char *out, size_t size);

#endif
