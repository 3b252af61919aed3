/* The traced runs every profile step takes (profiler/profile.h): an evicted L2 before each
 * run, the executor's options for one traced, unverified, untimed run, and the mean CTA
 * duration of a trace. Shared by the measuring loop (measure_run.c) and its steps
 * (measure_queue.c, measure_merge.c, measure_start.c), which call nothing above them. */
#include <math.h>

#include "executor/executor.h"
#include "profiler/profile.h"

#define SRC "profile"

/* Evicts the L2 (a copy of twice its size) so the next run reads KV from HBM. */
int av__profile_flush_l2(const av_gpu_t *g, av_error_t *err) {
  double gbps;
  return av_exec_copy_bandwidth((size_t)(2 * (g->l2_bytes > 0 ? g->l2_bytes : 64e6)), 1, &gbps,
                                err);
}

void av__profile_traced_opts(av_exec_opts_t *o) {
  av_exec_opts_default(o);
  o->verify = 0;
  o->trace = 1;
  o->repeats = 0;
  o->warmup = 0;
}

/* Mean duration of the traced attention items (any head) and, from the same trace, the span
 * from the first start to the last end. */
int av__profile_trace_stats(const json_t *trace, int32_t n_items, double *mean_us,
                            double *span_us, av_error_t *err) {
  const json_t *ctas = json_object_get(trace, "ctas");
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  int32_t n = 0;
  for (size_t i = 0; i < json_array_size(ctas); i++) {
    const json_t *c = json_array_get(ctas, i);
    json_int_t item = json_integer_value(json_object_get(c, "item"));
    if (item < 0 || item >= n_items) continue;
    double s = json_number_value(json_object_get(c, "start_us"));
    double e = json_number_value(json_object_get(c, "end_us"));
    sum += e - s;
    n++;
    lo = fmin(lo, s);
    hi = fmax(hi, e);
  }
  if (n == 0)
    return av_error_set(err, AV_ERR_INTERNAL, SRC, NULL,
                        "the trace has no CTA of the %d items", (int)n_items);
  *mean_us = sum / n;
  *span_us = hi - lo;
  return AV_OK;
}
