/* Plans: a scheduler's answer for one batch on one GPU. A target names the GPU and the cost
 * model schedulers plan against; plan() runs one scheduler with "key=value" parameters;
 * check() proves a plan exact and reference() runs it in fp64 against plain attention. */
#ifndef ANVIL_PLAN_H
#define ANVIL_PLAN_H

#include <stdint.h>

#include "anvil/error.h"
#include "anvil/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GPU (a spec name such as "H200-SXM" or a path to a spec file) with the kernel variant
 * table and a cost model ("roofline" when NULL) with its "key=value" parameters. Reusable
 * across plans and batches; not safe to use from two threads at once. Caller owns. */
typedef struct anvil_target anvil_target_t;
int anvil_target_create(const char *gpu, const char *cost_model, const char *const *cost_params,
                        int n_cost_params, anvil_target_t **out, anvil_error_t *err);
void anvil_target_destroy(anvil_target_t *t);
/* How the plans made against t will be issued on a GPU: "streams" (the default: the host
 * issues each launch on its stream), "graph" (the plan replayed as one CUDA graph) or "pdl"
 * (streams, with the merge of a one-stream plan a programmatic dependent launch). Plans
 * carry it into their files, the simulator charges it, and `auto` ranks with it. */
int anvil_target_set_launch(anvil_target_t *t, const char *model, anvil_error_t *err);
/* The GPU's name and the HBM bandwidth the models use (GB/s). */
const char *anvil_target_gpu(const anvil_target_t *t);
double anvil_target_hbm_GBps(const anvil_target_t *t);

typedef struct anvil_plan anvil_plan_t;

/* The i-th registered scheduler's and cost model's names (`anvil list`); NULL past the last. */
const char *anvil_scheduler_name(int i);
const char *anvil_cost_model_name(int i);

/* Plans w with `scheduler` and its "key=value" parameters (defaults for the rest). The plan
 * keeps w alive; the caller owns the plan (anvil_plan_destroy). */
int anvil_plan(anvil_target_t *t, const anvil_workload_t *w, const char *scheduler,
               const char *const *params, int n_params, anvil_plan_t **out,
               anvil_error_t *err);
void anvil_plan_destroy(anvil_plan_t *p);
/* The batch the plan is for (borrowed from the plan). */
const anvil_workload_t *anvil_plan_workload(const anvil_plan_t *p);
/* Scheduler name and its parameters as planned ("k=v,..."); borrowed. */
const char *anvil_plan_scheduler(const anvil_plan_t *p);
const char *anvil_plan_params(const anvil_plan_t *p);
/* Its launch model, "streams", "graph" or "pdl". */
const char *anvil_plan_launch(const anvil_plan_t *p);

/* Proves the plan exact (ANVIL_ERR_PLAN naming the first offending item/request otherwise). */
int anvil_plan_check(const anvil_plan_t *p, anvil_error_t *err);
/* Runs the plan in fp64 on seeded Q/K/V and compares with direct attention per request.
 * dim 0 = the batch's head dim; max_requests 0 = all. */
int anvil_plan_reference(const anvil_plan_t *p, uint64_t seed, int dim, int32_t max_requests,
                         double *max_rel_err, anvil_error_t *err);

/* The plan file `anvil plan -o` writes (the plan with its batch), byte for byte. Caller
 * frees with anvil_free. */
char *anvil_plan_to_json(const anvil_plan_t *p);
/* Loads a plan document (text, or a file as `anvil check` does); indices are range-checked,
 * exactness is not (call anvil_plan_check). `source` names the text (NULL: "plan"). */
int anvil_plan_from_json(const char *json_text, const char *source, anvil_plan_t **out,
                         anvil_error_t *err);
int anvil_plan_load(const char *path, anvil_plan_t **out, anvil_error_t *err);

/* --- contents, copied out into caller arrays ------------------------------------------- */
typedef struct anvil_plan_counts {
  int32_t launches, items, item_queries, segments, slots, requests;
} anvil_plan_counts_t;
void anvil_plan_counts(const anvil_plan_t *p, anvil_plan_counts_t *out);

typedef enum { ANVIL_KERNEL_PARTIAL, ANVIL_KERNEL_PERSISTENT, ANVIL_KERNEL_DECODE,
               ANVIL_KERNEL_MERGE } anvil_kernel_kind_t;
typedef struct anvil_launch {
  int32_t stream;           /* launches of one stream run in order */
  int32_t kind;             /* anvil_kernel_kind_t of the tile */
  int32_t m_rows, n_tokens, warps;
  int32_t persistent_ctas;  /* 0: one CTA per item */
  int32_t n_items;
} anvil_launch_t;
typedef struct anvil_item {
  int32_t launch;
  int32_t q_begin, n_q;     /* its queries: item_queries[q_begin .. q_begin + n_q) */
  int32_t seg_begin, n_seg; /* its KV segments: segments[seg_begin .. seg_begin + n_seg) */
  int32_t partial;          /* 1: writes partial states to slots slot_begin..; 0: outputs */
  int32_t slot_begin;
  int32_t cta, order;       /* persistent launches: CTA and position in its queue; else -1 */
} anvil_item_t;
typedef struct anvil_segment {
  int32_t node;
  int32_t pad_;
  int64_t begin, end;       /* KV tokens [begin, end) of the node */
} anvil_segment_t;
/* Each writes counts.<x> entries. */
void anvil_plan_launches(const anvil_plan_t *p, anvil_launch_t *out);
void anvil_plan_items(const anvil_plan_t *p, anvil_item_t *out);
void anvil_plan_item_queries(const anvil_plan_t *p, int32_t *out);
void anvil_plan_segments(const anvil_plan_t *p, anvil_segment_t *out);
/* Merge lists: request r merges slots[offsets[r] .. offsets[r+1]) in that order
 * (offsets: requests + 1 entries, slots: counts.slots entries). */
void anvil_plan_merges(const anvil_plan_t *p, int32_t *offsets, int32_t *slots);

#ifdef __cplusplus
}
#endif
#endif
