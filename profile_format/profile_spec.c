/* The calibrated GPU spec (<base>.spec.json, profile_format/profile_format.h): the gpus/
 * document with each figure the profile measured replaced, and a sentence on how it was
 * measured as its source. */
#include <math.h>
#include <stdio.h>

#include "profile_format/profile_format.h"

static void set_field(json_t *spec, const char *key, double v, const char *source) {
  json_object_set_new(spec, key, json_pack("{s:f, s:s}", "value", v, "source", source));
}

/* The grid CTA's dispatch cost: the refill gap traced in the occupancy grids, else the empty
 * persistent CTA's time per wave (the same path: a CTA starts, reads a record, exits). The
 * kernel gap of one stream as the engine adds it: the traced gap less the next kernel's first
 * CTA dispatch, which the engine charges to that CTA (docs/validation.md#profiling). */
static void dispatch_fields(json_t *s, const av_profile_t *p, const char *by, const char *date) {
  char src[1024];
  double cta = p->refill_us > 0 ? p->refill_us : p->empty_cta_us;
  if (cta > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): %s", p->device, by, date,
             p->refill_us > 0 ? "occupancy grids' traces, a refilled slot's gap between the "
                                "previous CTA's end and the next CTA's traced start (mean)"
                              : "empty persistent CTA, time per wave");
    set_field(s, "cta_dispatch_us", round(cta * 1000) / 1000, src);
  }
  if (p->launch_gap_us > 0) {
    double gap = p->launch_gap_us - cta;
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): 32 one-CTA launches on one stream, traced: "
             "a launch's first CTA start minus the previous one's last CTA end (mean), less "
             "cta_dispatch_us", p->device, by, date);
    set_field(s, "stream_gap_us", round((gap > 0 ? gap : 0) * 1000) / 1000, src);
  }
}

/* The graph launch model's figures (profiler/measure_graph.c), the stream gap less the
 * refill as above. */
void av__profile_graph_fields(json_t *s, const av_profile_t *p, const char *date) {
  const char *by = p->command[0] ? p->command : "anvil profile";
  if (p->graph_tail_us <= 0) return;
  char src[1024];
  const double cta = p->refill_us > 0 ? p->refill_us : p->empty_cta_us;
  snprintf(src, sizeof src,
           "measured on %.200s (%.300s, %.20s): 32 one-CTA launches on one stream captured as "
           "one CUDA graph, traced: a launch's first CTA start minus the previous one's last "
           "CTA end (mean), less cta_dispatch_us", p->device, by, date);
  const double gap = p->graph_gap_us - cta;
  set_field(s, "graph_stream_gap_us", round((gap > 0 ? gap : 0) * 1000) / 1000, src);
  snprintf(src, sizeof src,
           "measured on %.200s (%.300s, %.20s): merge-step plans captured as CUDA graphs, "
           "first merge CTA's start minus the last attention CTA's end (mean)", p->device, by,
           date);
  set_field(s, "graph_join_overhead_us", round(p->graph_join_us * 1000) / 1000, src);
  snprintf(src, sizeof src,
           "measured on %.200s (%.300s, %.20s): merge-step plans captured as CUDA graphs, "
           "timed median minus the traced span (the graph's start and its end event)",
           p->device, by, date);
  set_field(s, "graph_run_tail_us", round(p->graph_tail_us * 1000) / 1000, src);
}

/* The pdl launch model's join (profiler/measure_graph.c). */
void av__profile_pdl_field(json_t *s, const av_profile_t *p, const char *date) {
  if (p->pdl_join_us <= 0) return;
  char src[1024];
  snprintf(src, sizeof src,
           "measured on %.200s (%.300s, %.20s): merge-step plans with the merge a programmatic "
           "dependent launch, first merge CTA's start minus the last attention CTA's end (mean)",
           p->device, p->command[0] ? p->command : "anvil profile", date);
  set_field(s, "pdl_join_overhead_us", round(p->pdl_join_us * 1000) / 1000, src);
}

json_t *av_profile_calibrate_spec(const json_t *spec, const av_profile_t *p, const char *date) {
  json_t *s = json_deep_copy(spec);
  if (!s) return NULL;
  char src[1024];
  const char *by = p->command[0] ? p->command : "anvil profile";
  if (p->copy_GBps > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): device-to-device copy, bytes read + written / time "
             "(median)", p->device, by, date);
    set_field(s, "hbm_bw_measured_GBps", round(p->copy_GBps), src);
  }
  if (p->read_GBps > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): read-only stream, bytes read / time (median); "
             "the roofline floor's bandwidth", p->device, by, date);
    set_field(s, "hbm_bw_read_GBps", round(p->read_GBps), src);
  }
  if (p->launch_us > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): slope of plan time over 1..32 one-CTA launches on one "
             "stream (R^2 %.3f)", p->device, by, date, p->launch_r2);
    set_field(s, "launch_overhead_us", round(p->launch_us * 1000) / 1000, src);
  }
  if (p->lone_GBps > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): intercept of one CTA's time over its KV tokens "
             "(R^2 %.3f)", p->device, by, date, p->lone_r2);
    set_field(s, "cta_fixed_us", round(fmax(p->cta_fixed_us, 0) * 1000) / 1000, src);
    const json_t *lat = json_object_get(json_object_get(s, "mem_latency_ns"), "value");
    double lat_ns = json_is_number(lat) ? json_number_value(lat) : 0;
    if (lat_ns > 0) {
      snprintf(src, sizeof src,
               "measured on %.200s (%.300s, %.20s): a lone CTA streams KV at %.1f GB/s; x mem_latency_ns "
               "%.0f (Little's law, the engine's per-SM in-flight bound)",
               p->device, by, date, p->lone_GBps, lat_ns);
      set_field(s, "bytes_in_flight_per_sm", round(p->lone_GBps * lat_ns), src);
    }
  }
  if (p->join_us > 0 || p->tail_us > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): merge-step traces, first merge CTA's start "
             "minus the last attention CTA's end (mean)", p->device, by, date);
    set_field(s, "join_overhead_us", round(p->join_us * 1000) / 1000, src);
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): merge-step plans, timed median minus the "
             "traced span minus launch_overhead_us (the engine's first issue)", p->device, by,
             date);
    set_field(s, "run_tail_us", round(p->tail_us * 1000) / 1000, src);
  }
  dispatch_fields(s, p, by, date);
  av__profile_graph_fields(s, p, date);
  av__profile_pdl_field(s, p, date);
  if (p->tensor_tflops > 0) {
    snprintf(src, sizeof src,
             "measured on %.200s (%.300s, %.20s): one CTA of the largest-m partial tile, "
             "padded QK^T + PV FLOPs over (C(m, 16384) - cta_fixed_us), x SMs: the rate the "
             "kernels reach, not the datasheet's", p->device, by, date);
    set_field(s, "fp16_tensor_tflops", round(p->tensor_tflops * 10) / 10, src);
  }
  return s;
}

