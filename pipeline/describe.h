/* `anvil describe` as a library call: a batch's figures (requests, nodes, depth, sharing per
 * level, unique and query-centric KV, their ratio) and its floors on a GPU (bandwidth,
 * compute, roofline). Nothing is printed. */
#ifndef AV_PIPELINE_DESCRIBE_H
#define AV_PIPELINE_DESCRIBE_H

#include <stdint.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/workload.h"

/* The batch and its floors; borrowed for the callback's call only. */
typedef struct av_description {
  const char *name;               /* the workload's, else the file or the --levels text */
  const av_workload_t *w;
  av_workload_stats_t s;
  const av_gpu_t *gpu;
  double hbm_GBps;             /* the floor's bandwidth (av_gpu_floor_bw_GBps) */
  double floor_unique_us, floor_query_centric_us;  /* the KV at the bandwidth */
  double flops;
  av_floor_t floor;               /* roofline: bytes, FLOPs, the larger */
} av_description_t;

/* Nodes, lengths and sharing at one depth of the forest. */
typedef struct av_describe_level {
  int depth;
  int32_t nodes, min_share, max_share;
  int64_t min_len, max_len;
  double mean_share;
} av_describe_level_t;

typedef struct av_describe_opts {
  const char *spec, *levels;      /* exactly one */
  const char *gpu;
  av_heads_t heads;               /* when the spec has none */
  void (*description)(const av_description_t *d, void *user);   /* may be NULL */
  void (*level)(const av_describe_level_t *l, void *user);        /* may be NULL */
} av_describe_opts_t;

/* Loads the GPU and the batch, then hands the description over, then each depth. Messages
 * name "describe" and the option a user gave. */
int av_describe(const av_describe_opts_t *o, void *user, av_error_t *err);

#endif
