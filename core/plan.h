/* A plan: the contract between schedulers, the simulator and the GPU executor. Items are
 * CTAs' work (queries x KV segments, a tile, an output); launches group items into kernels on
 * streams; the merge lists say, per request, which partial states combine and in what fixed
 * order. The checker proves a plan exact; the CPU reference runs it in fp64. */
#ifndef AV_PLAN_H
#define AV_PLAN_H

#include <jansson.h>
#include <stdint.h>

#include "core/error.h"
#include "core/variants.h"
#include "core/workload.h"

/* KV tokens [begin, end) of one node. A segment is on the path of every query of its item. */
typedef struct av_segment {
  int32_t node;
  int64_t begin, end;
} av_segment_t;

typedef enum { AV_OUT_FINAL = 0, AV_OUT_PARTIAL = 1 } av_output_t;

typedef struct av_item {
  int32_t launch;
  int32_t q_begin, n_q;        /* queries: plan->item_queries[q_begin .. q_begin+n_q) */
  int32_t seg_begin, n_seg;    /* segments: plan->segments[seg_begin .. seg_begin+n_seg) */
  av_output_t output;          /* FINAL: writes the queries' outputs directly (the item covers
                                  each query's whole path); PARTIAL: writes (O, lse) states */
  int32_t slot_begin;          /* PARTIAL: query i of the item writes slot slot_begin + i;
                                  -1 for FINAL */
  int32_t cta;                 /* persistent launches: CTA id in the grid; else -1 */
  int32_t order;               /* persistent launches: position in that CTA's queue; else -1 */
} av_item_t;

/* How the executor issues a plan's launches, and so what the simulator charges for issuing
 * them (docs/kernels.md#launch-models): STREAMS, the host issues each launch in turn on its
 * CUDA stream; GRAPH, the plan's launches, their stream dependencies and the merge are
 * captured once as a CUDA graph and each run is one graph launch; PDL, streams with the
 * merge launched as a programmatic dependent of the attention launch before it (sm_90 and
 * later, plans of one stream; any other plan runs as STREAMS). */
typedef enum { AV_LAUNCH_STREAMS = 0, AV_LAUNCH_GRAPH = 1, AV_LAUNCH_PDL = 2 } av_launch_model_t;
/* "streams" / "graph" / "pdl" -> *out; -1 for anything else. */
int av_launch_model_from_name(const char *name, av_launch_model_t *out);
const char *av_launch_model_name(av_launch_model_t m);

/* How the kernels copy KV into shared memory (docs/kernels.md#the-copy-paths), and so how many tokens
 * the simulator charges a piece (docs/simulator.md#kv-copies-by-whole-boxes): TMA, in boxes
 * of whole pages where the hardware and cache layout allow it (sm_90, a power-of-two block
 * size >= 8, a head dim that is a multiple of 64), cp.async elsewhere; CP_ASYNC, token-exact
 * cp.async everywhere. */
typedef enum { AV_KV_COPY_TMA = 0, AV_KV_COPY_CP_ASYNC = 1 } av_kv_copy_t;
/* "tma" / "cp_async" -> *out; -1 for anything else. */
int av_kv_copy_from_name(const char *name, av_kv_copy_t *out);
const char *av_kv_copy_name(av_kv_copy_t c);

typedef struct av_launch {
  int32_t stream;              /* launches on one stream run in array order */
  av_tile_t tile;              /* the kernel variant; every item of the launch uses it */
  int32_t persistent_ctas;     /* 0: one CTA per item; > 0: persistent grid of this many CTAs */
  int32_t n_items;             /* derived by av_plan_finalize */
} av_launch_t;

typedef struct av_plan {
  char scheduler[64];
  char params[256];            /* "k=v,..." as planned, for the record */
  char workload_name[128];
  uint64_t workload_hash;      /* av_workload_hash of the workload planned */
  av_heads_t heads;
  int32_t n_requests, n_nodes;

  int32_t n_launches, cap_launches;
  av_launch_t *launches;
  int32_t n_items, cap_items;
  av_item_t *items;
  int32_t n_item_queries, cap_item_queries;
  int32_t *item_queries;
  int32_t n_segments, cap_segments;
  av_segment_t *segments;

  int32_t n_slots;             /* partial-state slots */
  int32_t *slot_request;       /* n_slots: which request a slot belongs to (derived) */
  int32_t *merge_offsets;      /* n_requests + 1 (derived by av_plan_finalize unless the */
  int32_t *merge_slots;        /*   scheduler set an explicit order with av_plan_set_merge) */
  int merge_explicit;
  av_launch_model_t launch_model; /* how the launches are issued (streams unless set) */
} av_plan_t;

/* An empty plan for workload w. Caller owns; av_plan_destroy. */
av_plan_t *av_plan_create(const av_workload_t *w, const char *scheduler);
void av_plan_destroy(av_plan_t *p);
/* The model the executor really issues p with on a GPU of compute capability sm_arch (x10):
 * PDL falls back to STREAMS before sm_90 and for plans of several streams. */
av_launch_model_t av_plan_issue_model(const av_plan_t *p, int sm_arch);

/* Appends a launch; returns its index or -1 (out of memory). */
int32_t av_plan_add_launch(av_plan_t *p, int32_t stream, const av_tile_t *tile,
                           int32_t persistent_ctas);
/* An item's work: the n_q queries it serves and the n_seg KV segments it reads. */
typedef struct av_item_work {
  const int32_t *queries;
  int32_t n_q;
  const av_segment_t *segs;
  int32_t n_seg;
} av_item_work_t;

/* Appends an item of `launch` over work's queries and segments (copied). PARTIAL items get
 * n_q consecutive new slots. cta/order are -1 for non-persistent launches. Returns the item
 * index or -1 (out of memory). */
int32_t av_plan_add_item(av_plan_t *p, int32_t launch, av_item_work_t work, av_output_t output,
                         int32_t cta, int32_t order);
/* Optional: makes room for `items` more items carrying `item_queries` queries and `segments`
 * segments in all, so a scheduler that knows its plan's size builds it without regrowing
 * (each regrowth copies the arrays into fresh memory). Returns 0 or -1 (out of memory). */
int av_plan_reserve(av_plan_t *p, int64_t items, int64_t item_queries, int64_t segments);
/* Computes derived fields: per-launch item counts, slot owners, and (unless set explicitly)
 * each request's merge list in slot order, which is item order: deterministic. */
int av_plan_finalize(av_plan_t *p, av_error_t *err);
/* Optional explicit merge order: offsets (n_requests+1) and slots, copied. */
int av_plan_set_merge(av_plan_t *p, const int32_t *offsets, const int32_t *slots,
                      av_error_t *err);
/* Structural equality (planning twice must give identical plans). */
int av_plan_equal(const av_plan_t *a, const av_plan_t *b);
/* The same launches, items, segments and merge lists, whatever scheduler and parameters made
 * them (two schedulers that agree on a batch run the same kernels). */
int av_plan_same_work(const av_plan_t *a, const av_plan_t *b);

/* JSON: the plan plus the explicit form of its workload, so `anvil check PLAN.json` is
 * self-contained. Caller owns the returned objects. */
json_t *av_plan_to_json(const av_plan_t *p, const av_workload_t *w);
/* Loads a plan file; *w_out receives the embedded workload (caller owns both). Every index
 * is range-checked against the workload; a mismatch (hash, counts, nodes) is AV_ERR_MISMATCH
 * naming the key path. */
int av_plan_load(const char *path, av_plan_t **p_out, av_workload_t **w_out, av_error_t *err);
/* The same from a parsed plan document; c->source names it in messages. */
int av_plan_from_doc(const json_t *root, const av_jctx_t *c, av_plan_t **p_out,
                     av_workload_t **w_out);
int av_plan_from_json(const json_t *root, const av_jctx_t *c, const av_workload_t *w,
                      av_plan_t **p_out);

/* --- figures -------------------------------------------------------------------- */
typedef struct av_plan_stats {
  int32_t items, launches, streams, partial_slots;
  int64_t kv_tokens_read;      /* sum over items of segment lengths (one KV head) */
  double kv_bytes, partial_bytes; /* all hkv heads: KV loads; partial-state writes+reads */
} av_plan_stats_t;
void av_plan_stats(const av_plan_t *p, av_plan_stats_t *out);

#endif
