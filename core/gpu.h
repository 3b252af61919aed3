/* GPU specifications (gpus/<name>.json): every number the simulator and cost models use,
 * each stored in the file with its source (datasheet, CUDA Programming Guide, measured). */
#ifndef AV_GPU_H
#define AV_GPU_H

#include "core/error.h"

typedef struct av_gpu {
  char name[64];               /* file stem, e.g. "H200-SXM" */
  char path[512];              /* the spec file it was loaded from (provenance hashes it) */
  char description[128];
  int sm_arch;                 /* compute capability x10: 80, 89, 90 */
  int sm_count;
  /* Occupancy limits (CUDA Programming Guide, "Compute Capabilities" table). */
  int max_threads_per_sm, max_warps_per_sm, max_ctas_per_sm, max_threads_per_cta;
  int regs_per_sm, max_regs_per_thread, max_regs_per_cta;
  int reg_alloc_unit;          /* registers per warp are allocated in units of this (256) */
  int warp_alloc_granularity;  /* warps per CTA are rounded up to this for registers */
  int smem_per_sm_bytes;       /* usable by CTAs on one SM */
  int smem_per_cta_max_bytes;  /* opt-in maximum per CTA */
  int smem_alloc_unit_bytes;   /* allocation granularity (128 on sm_80+) */
  int smem_reserved_per_cta_bytes; /* system-reserved shared memory per CTA (1 KiB on sm_80+) */
  /* Memory system. */
  double hbm_bw_datasheet_GBps;
  double hbm_bw_measured_GBps; /* device copy (read+write bytes) / time; 0 when unmeasured */
  double l2_bytes;
  double l2_bw_GBps;
  double mem_latency_ns;
  double bytes_in_flight_per_sm; /* what one SM can keep outstanding (limits a lone CTA) */
  /* Compute. */
  double clock_MHz;
  double fp16_tensor_tflops;   /* dense */
  double fp32_tflops;
  /* Launch. */
  double launch_overhead_us;
  double cta_fixed_us;         /* per-CTA start/prologue/epilogue cost */
  /* Optional (0 when a spec omits them; anvil profile measures both): from the last
   * attention CTA's end to the merge's first CTA (the executor joins its streams with events,
   * then launches the merge), and from the last CTA's end to the run's end event. */
  double join_overhead_us;
  double run_tail_us;
  /* Optional (0 when omitted): what a grid CTA costs outside its own traced time (the block
   * scheduler retiring one CTA and starting the next, the item-table read before the kernel's
   * timer), and the gap between two launches of one stream that the host issued long before
   * (the first kernel drains, the next starts). anvil profile measures both from traces. */
  double cta_dispatch_us;
  double stream_gap_us;
  /* Optional (0 when omitted): the same gaps when a plan runs as one CUDA graph
   * (docs/kernels.md#launch-models), measured by anvil profile. The graph's kernels are
   * ready at once, so the start of the graph and the end event are one offset,
   * graph_run_tail_us; a spec without it charges a graph the host launch_overhead_us once
   * and the stream figures above. */
  double graph_stream_gap_us;
  double graph_join_overhead_us;
  double graph_run_tail_us;
  /* Optional (0 when omitted): the join before a merge launched as a programmatic dependent
   * of the launch before it on its stream (the pdl launch model, sm_90 and later): the last
   * attention CTA's end to the first merge CTA's start, measured by anvil profile. */
  double pdl_join_overhead_us;
  /* Optional (0 when omitted): a read-only stream's bytes read / time, measured by anvil
   * profile. Decode attention only reads KV, so this, not the copy, is the bandwidth a plan
   * cannot beat: the roofline floor divides by it (av_gpu_floor_bw_GBps). */
  double hbm_bw_read_GBps;
} av_gpu_t;

/* What issuing a plan's launches costs under one launch model: launch l (plan order, the
 * merge last) is issued at issue_first_us + l * issue_step_us; the rest as in av_gpu_t. */
typedef struct av_launch_costs {
  double issue_first_us, issue_step_us, stream_gap_us, join_us, tail_us;
} av_launch_costs_t;
/* model: the av_launch_model_t a plan is issued with (av_plan_issue_model): 0 streams (each
 * launch issued by the host in turn), 1 a graph, 2 streams with the merge a programmatic
 * dependent launch (its join is pdl_join_overhead_us where measured, else the streams'). */
void av_gpu_launch_costs(const av_gpu_t *g, int model, av_launch_costs_t *out);

/* Effective HBM bandwidth the models use: measured when present, else 0.9 x datasheet. */
double av_gpu_hbm_bw_GBps(const av_gpu_t *g);
/* The roofline floor's bandwidth: the measured read-only stream when present, else the
 * figure above. */
double av_gpu_floor_bw_GBps(const av_gpu_t *g);

/* Loads gpus/<name>.json from `dir` (NULL = the built-in data directory). Unknown names
 * give AV_ERR_NAME listing the available specs. A `name` that av_gpu_is_path() calls a path
 * is loaded from that file instead (a user's own spec); a missing file is AV_ERR_IO. */
int av_gpu_load(const char *name, const char *dir, av_gpu_t *out, av_error_t *err);
/* Is this GPU argument a spec file path (it has a '/' or ends in ".json") rather than the
 * name of a built-in spec? */
int av_gpu_is_path(const char *name);
/* Loads a spec from an explicit file path. */
int av_gpu_load_file(const char *path, av_gpu_t *out, av_error_t *err);
/* Names of the available specs in `dir` (NULL = built-in), sorted. Caller frees the array
 * and each string. */
int av_gpu_list(const char *dir, char ***names, int *n, av_error_t *err);
/* The directory holding the built-in data (GPU specs, kernels/variants.json): $ANVIL_DATA_DIR
 * if set, else <prefix>/share/anvil of an installed anvil (core/data_dir.c), else the source
 * tree the build came from (for the installed static library: its install prefix's). */
const char *av_data_dir(void);

#endif
