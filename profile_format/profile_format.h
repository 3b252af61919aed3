/* The profile file format (docs/schedulers.md "The profile file"): what `anvil profile`
 * measures, held in av_profile_t, and the three files written from it: <base>.json (the
 * profile the `profile` cost model reads), <base>.spec.json (the GPU spec with the measured
 * figures) and <base>.details.json (every raw measurement). This layer is the format's only
 * writer (here) and only reader (profile_format/profile_read.h); the profiler (validation/)
 * fills av_profile_t and the cost model (costmodels/) evaluates what the reader gives. */
#ifndef AV_PROFILE_FORMAT_H
#define AV_PROFILE_FORMAT_H

#include <jansson.h>
#include <stdint.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/plan.h"

#define AV_PROF_MAX_NQ 8
#define AV_PROF_MAX_KV 12
#define AV_PROF_MAX_K 16                 /* co-resident CTAs per SM measured, at most */
#define AV_PROF_CORES_KV 2048            /* KV tokens of every co-residency CTA */

/* One variant's measurements. */
typedef struct av_profile_table {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n_nq, n_kv;
  int32_t nq[AV_PROF_MAX_NQ];            /* query rows (GQA group 1: rows = queries) */
  int64_t kv[AV_PROF_MAX_KV];            /* KV tokens */
  double time_us[AV_PROF_MAX_NQ][AV_PROF_MAX_KV]; /* C(nq[i], kv[j]): one CTA alone */
  int occ_predicted;                     /* core/occupancy.c from kernels/variants.json */
  int occ_measured;                      /* most CTAs seen resident on one SM; -1 unmeasured */
} av_profile_table_t;

/* One variant's co-residency curve (docs/simulator.md#co-residency): grids of exactly k
 * identical one-query CTAs per SM (k x SMs CTAs in one launch), each over AV_PROF_CORES_KV
 * tokens, L2 flushed first; mean per-CTA duration from the trace. Two batches per k:
 * "shared" (every CTA reads the same KV, which stays in L2 after the first touch: HBM cannot
 * be the bottleneck, so what remains is the SM's own contention) and "hbm" (every CTA its
 * own KV: adds HBM saturation at large k). The engine uses the shared curve; HBM is its
 * water level's business. */
typedef struct av_profile_cores {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n_k;                               /* k = 1 .. n_k (the variant's occupancy) */
  double dur_us[AV_PROF_MAX_K];          /* shared KV: mean CTA duration at k = i + 1 */
  double slowdown[AV_PROF_MAX_K];        /* (dur - fixed) / (dur at k=1 - fixed) */
  double hbm_dur_us[AV_PROF_MAX_K];      /* own KV: mean CTA duration */
  double hbm_GBps[AV_PROF_MAX_K];        /* own KV: all CTAs' KV bytes / launch span */
  int resident[AV_PROF_MAX_K];           /* most CTAs seen at once on one SM (shared run) */
} av_profile_cores_t;

#define AV_PROF_MAX_MERGE 12             /* slot counts measured per merge curve */
#define AV_PROF_MERGE_SEG 16             /* KV tokens of each measured partial item */

/* The merge kernel alone (profiler/measure_merge.c): one request of `slots` partial states
 * per query head, one merge CTA of `rows` (request, query head) rows; mean traced duration. */
typedef struct av_profile_merge {
  int head_dim;
  av_dtype_t dtype;
  int rows;                              /* rows per merge CTA (all of them busy) */
  int n;
  int32_t slots[AV_PROF_MAX_MERGE];
  double time_us[AV_PROF_MAX_MERGE];     /* the partial states still in L2 */
  double time_cold_us[AV_PROF_MAX_MERGE]; /* evicted first (av_profile_merge_cold_workload);
                                            0: not measured */
} av_profile_merge_t;

#define AV_PROF_QUEUE_ITEMS 8             /* items in each measured queue */
#define AV_PROF_MAX_QUEUE 8              /* persistent variants with a queue curve */
#define AV_PROF_QUEUE_PTS 3              /* item lengths per curve */

/* One persistent variant's queue curve (profiler/measure_queue.c): persistent CTAs whose
 * queues hold AV_PROF_QUEUE_ITEMS one-query items each, every item over its own root of kv[i]
 * tokens, L2 flushed; from the trace, the mean time of a queue's first item (from its CTA's
 * start) and of the others (each from the previous item's end). Once with one CTA alone on
 * the GPU, once with a full wave (loaded_ctas: SMs x the variant's occupancy), which is how
 * the schedulers launch persistent grids. */
typedef struct av_profile_queue {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n;
  int64_t kv[AV_PROF_QUEUE_PTS];
  double first_us[AV_PROF_QUEUE_PTS], next_us[AV_PROF_QUEUE_PTS];
  int loaded_ctas;
  double loaded_first_us[AV_PROF_QUEUE_PTS], loaded_next_us[AV_PROF_QUEUE_PTS];
} av_profile_queue_t;

#define AV_PROF_START_KV 2                /* item lengths of the start step */
#define AV_PROF_START_ROWS 2              /* query rows of the start step: 1 and the tile's m */

/* One variant's first-wave start waves (profiler/measure_start.c,
 * docs/simulator.md#a-launchs-first-wave): per k = 1 .. the variant's occupancy one launch of k x SMs
 * one-item CTAs, each item over its own root of kv[j] tokens with rows[r] queries (GQA group
 * 1), L2 flushed; the mean traced CTA duration. Against C(rows, kv) (the same CTA alone) it
 * gives what starting together with the others costs beyond the bandwidth they share. */
typedef struct av_profile_start {
  av_tile_t tile;
  int head_dim;
  av_dtype_t dtype;
  int n_k;                               /* waves k = 1 .. n_k */
  int32_t ctas[AV_PROF_MAX_K];           /* k x SMs */
  int n_rows;
  int32_t rows[AV_PROF_START_ROWS];
  int64_t kv[AV_PROF_START_KV];
  double dur_us[AV_PROF_MAX_K][AV_PROF_START_ROWS][AV_PROF_START_KV];
} av_profile_start_t;

typedef struct av_profile {
  char gpu[64];                          /* spec name, e.g. "H200-SXM" */
  char device[256];                      /* the driver's name */
  char command[512];
  double copy_GBps;                      /* read + write bytes / s, median */
  double read_GBps;                      /* read-only stream: bytes read / s, median (0: not
                                            measured) */
  double launch_us, launch_r2;           /* per-launch time on one stream (slope) and fit */
  double lone_GBps, cta_fixed_us, lone_r2; /* one CTA: KV bytes / slope, intercept, fit */
  double tensor_tflops;                  /* one CTA's mma rate x SMs (largest-m partial tile
                                            at its largest C); 0 when it was memory-bound */
  int n, cap;
  av_profile_table_t *t;
  int n_cores;                           /* co-residency curves (0: step not run) */
  av_profile_cores_t *cores;             /* owned */
  int n_merge;                           /* merge curves (0: step not run) */
  av_profile_merge_t merge[4];           /* per (head dim, dtype) profiled */
  double empty_cta_us;                   /* a persistent CTA with no work: its time in one
                                            CTA slot (0: not measured) */
  double empty_slope_us;                 /* the measured time per added empty CTA */
  int n_queue;                           /* queue curves (0: step not run) */
  av_profile_queue_t queue[AV_PROF_MAX_QUEUE];
  double join_us;                        /* last attention CTA's end -> first merge CTA */
  double tail_us;                        /* last CTA's end -> the run's end event */
  double refill_us;                      /* grid CTA: previous CTA's end -> its traced start
                                            on the slot, mean over the occupancy grids (0: none) */
  double launch_gap_us;                  /* one stream: a launch's last CTA end -> the next
                                            launch's first CTA start, traced (0: not measured) */
  /* The same three with the plans run as CUDA graphs (0: not measured); graph_tail_us is
   * the timed median minus the traced span (the graph's start and its end event). */
  double graph_gap_us, graph_join_us, graph_tail_us;
  /* The join with the merge a programmatic dependent launch (0: not measured). */
  double pdl_join_us;
  int n_start;                           /* start-wave measurements (0: step not run) */
  av_profile_start_t *start;             /* owned */
} av_profile_t;

void av_profile_free(av_profile_t *p);
/* Appends a zeroed table; NULL when out of memory. */
av_profile_table_t *av_profile_add(av_profile_t *p);

/* The KV lengths of the start step's items (AV_PROF_START_KV of them; the profile file's
 * "start.kv_tokens"). */
extern const int64_t av_profile_start_kv[AV_PROF_START_KV];

/* --- files --------------------------------------------------------------------------- */
/* The profile document (docs/schedulers.md "The profile file"). Caller owns. */
json_t *av_profile_to_json(const av_profile_t *p);
/* Every measurement, fit and occupancy comparison. Caller owns. */
json_t *av_profile_details_json(const av_profile_t *p);
/* spec (a gpus/<name>.json document) with the measured figures of p and their sources:
 * hbm_bw_measured_GBps, launch_overhead_us, cta_fixed_us, bytes_in_flight_per_sm (lone-CTA
 * rate x the spec's latency: Little's law, as the engine uses it) and fp16_tensor_tflops
 * (the rate the kernels' mma.sync loop reaches, when measured). Caller owns. */
json_t *av_profile_calibrate_spec(const json_t *spec, const av_profile_t *p, const char *date);
/* Writes <base>.json, <base>.spec.json and <base>.details.json (base: out path without
 * ".json"); the spec is calibrated from spec_path. All three or none. */
int av_profile_write(const av_profile_t *p, const char *out_path, const char *spec_path,
                     av_error_t *err);
/* Adds the launch models' figures p holds to an existing profile: those of the graph model
 * (av_profile_measure_graph; <base>.spec.json gains graph_stream_gap_us, less the spec's
 * cta_dispatch_us, graph_join_overhead_us and graph_run_tail_us) and of the pdl model
 * (av_profile_measure_pdl; pdl_join_overhead_us), <base>.details.json the raw figures. Both
 * files or neither. */
int av_profile_write_launch(const av_profile_t *p, const char *out_path, av_error_t *err);
/* Adds p's tables, co-residency curves, start waves and occupancies (tiles measured by
 * av_profile_measure_tiles) to the profile at out_path and its .details.json, and records
 * the command, device and date under the profile's "added" key; the files are left as they
 * were on failure. */
int av_profile_write_tiles(const av_profile_t *p, const char *out_path, av_error_t *err);
/* Sets the three graph fields of a calibrated spec from p (0 refill: none). */
void av__profile_graph_fields(json_t *spec, const av_profile_t *p, const char *date);
/* Sets pdl_join_overhead_us of a calibrated spec from p (nothing when not measured). */
void av__profile_pdl_field(json_t *spec, const av_profile_t *p, const char *date);
/* Loads a calibrated spec (<base>.spec.json); its name is the GPU's ("H200-SXM"), not the
 * file stem, so the profile cost model and replays accept it as that GPU. */
int av_profile_load_spec(const char *path, av_gpu_t *out, av_error_t *err);

/* The "merge" key of the profile file (profile_format/profile_read.h reads it). Caller owns. */
json_t *av_profile_merge_json(const av_profile_t *p);
/* The "start" key of the profile file (profile_format/profile_read.h reads it). Caller owns. */
json_t *av_profile_start_json(const av_profile_t *p);

#endif
