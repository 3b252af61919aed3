/* Incremental planning for a serving loop (docs/schedulers.md#per-step-planning): the
 * planner's index of its batch, what changed in the engine's block table since the last step
 * (requests that grew, possibly by new KV blocks, arrived or finished), the batch's forest
 * edited to match, the plan patched to match, and the cheap cost estimate of the drift rule.
 *
 * Patching handles the batch shape of a serving engine: every request owns a leaf of the
 * forest (its own blocks, share 1) and every inner node holds whole blocks shared by at least
 * two children. A growing request extends its leaf; an arrival under an existing inner node
 * adds a leaf (its queries join the items that read its parent's path, or copies of them); a
 * finish removes a leaf. Anything else (a shared node that would split or merge, a block
 * seen elsewhere, a batch of another shape) is a structural change: the planner builds the
 * forest from the table and plans anew. All memory is the planner's, kept and grown across
 * steps. */
#ifndef AV_PLAN_PATCH_H
#define AV_PLAN_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/plan.h"
#include "core/workload.h"
#include "costmodels/costmodel.h"

/* Grows *pp to hold n elements of `elem` bytes (by half again, so a growing batch reallocates
 * rarely); 0, or -1 when out of memory (*pp kept). */
int av__reserve(void *pp, size_t *cap, size_t n, size_t elem);

/* What a step changed (av__delta_match), by request: old index -> new (-1: finished), new ->
 * old (-1: arrived); per arrival its row, the old request whose parent it hangs under, and
 * the new leaf node. */
typedef struct av__changes {
  int32_t n_old, n_new, n_fin, n_arr, n_newblocks;
  int32_t *new_of, *old_of;
  int32_t *arr_row, *arr_sib, *arr_leaf;
  int32_t *arr_par;      /* per arrival: the (old) inner node it hangs under */
  int32_t *nmap;         /* old node -> new node (-1: removed) */
  int64_t *old_len;      /* old node lengths */
  int64_t *new_len;      /* new node lengths */
  int32_t n_new_nodes;
  size_t cap_old, cap_new, cap_nodes, cap_new_nodes;
} av__changes_t;

/* The planner's index of its batch: inner nodes' block ids, each request's own ids (in a
 * kept row at the ids' own columns), and the set of ids in use. */
typedef struct av__delta {
  int ok;                /* the batch has the shape patching handles */
  int bs;
  int64_t kstride;       /* columns of a kept row */
  int32_t *noff, *nchild;
  size_t cap_noff, cap_nchild;
  int32_t *nid;          /* inner node u's ids: nid[noff[u] ..] */
  size_t cap_nid;
  int32_t *nb, *pb, *tok, *row_of; /* per request: blocks, blocks above its leaf, tokens, row */
  size_t cap_req;
  int32_t *kept, *free_rows;
  int32_t n_free, n_rows;
  size_t cap_kept, cap_free;
  uint64_t *bits;        /* ids in use */
  size_t cap_bits;
  /* The forest's own arrays are grown here (they may be larger than the batch). */
  size_t cap_w_nodes, cap_w_off, cap_w_req, cap_w_kv, cap_w_reqs;
  int32_t *scratch;
  size_t cap_scratch;
  av__changes_t ch;
} av__delta_t;

void av__delta_free(av__delta_t *d);
/* Room for n requests in the per-request arrays. */
int av__delta_reserve_requests(av__delta_t *d, size_t n);
/* Indexes w, the forest just built from `table`; d->ok says whether its shape is one patching
 * handles. Returns -1 only when out of memory (d->ok is then 0). */
int av__delta_index(av__delta_t *d, av_workload_t *w, const int32_t *table, int64_t stride,
                    const int32_t *tokens);
/* Reads the step's table against the index: 0 when the changes are ones patching handles
 * (d->ch says which), else -1 (build anew). Changes nothing. */
int av__delta_match(av__delta_t *d, const av_workload_t *w, const int32_t *table,
                    int64_t stride, const int32_t *tokens, int32_t n);
/* Claims the new blocks (checks that no other request uses them): 0, or -1 when one is in
 * use elsewhere (the index is then stale: build anew). */
int av__delta_claim(av__delta_t *d, const av_workload_t *w, const int32_t *table,
                    int64_t stride, const int32_t *tokens);
/* Edits w (and the index) into the step's forest (after av__delta_maps). -1 when out of
 * memory or past a limit (build anew). */
int av__delta_apply(av__delta_t *d, av_workload_t *w, const int32_t *table, int64_t stride,
                    const int32_t *tokens);
/* The node maps and lengths of the step (d->ch: nmap, old_len, new_len, arrivals' leaves)
 * without editing anything, for the plan's patch, which reads the old forest. */
int av__delta_maps(av__delta_t *d, const av_workload_t *w, const int32_t *tokens);

/* The plan's second set of arrays (patching writes them, then swaps them with the plan's). */
typedef struct av__plan_buf {
  av_item_t *items;
  int32_t *iq, *slot_req, *moff, *mslots;
  av_segment_t *segs;
  int32_t *maxo, *list, *qpos, *smap, *cur;
  int32_t *src;          /* per new item: the old item whose estimate it keeps, or -1 */
  double *load;          /* per persistent CTA: its queue's estimated time */
  int32_t *route;        /* where arrivals join or copy items (plan_patch.c) */
  size_t cap_items, cap_iq, cap_slots, cap_moff, cap_mslots, cap_segs, cap_maxo, cap_list,
      cap_qpos, cap_smap, cap_cur, cap_src, cap_load, cap_route;
  size_t cap_slots_p, cap_moff_p, cap_mslots_p; /* of the plan's slot and merge arrays */
  /* The other set, the plan's while `held`: a fresh plan's arrays are copied into it, so
   * the two sets live as long as the planner and a patch never meets a scheduler's. */
  av_item_t *items2;
  int32_t *iq2, *slot_req2, *moff2, *mslots2;
  av_segment_t *segs2;
  size_t cap_items2, cap_iq2, cap_segs2;
  int held;
} av__plan_buf_t;
void av__plan_buf_free(av__plan_buf_t *b);
/* Moves a fresh plan's arrays into the planner's second set (-1: out of memory, p kept). */
int av__plan_buf_adopt(av__plan_buf_t *b, av_plan_t *p);
/* Takes the planner's arrays back from p before p is destroyed. */
void av__plan_buf_reclaim(av__plan_buf_t *b, av_plan_t *p);
/* The drift rule's estimate of a plan's time (us): per CTA (an item, or a persistent CTA's
 * queue) the cost model's time for its items, and the plan's time the larger of the longest
 * CTA and the sum over the GPU's SMs. Items' costs are linear in their KV tokens, fitted when
 * an item is made (av__est_fit, av__est_carry), so a step that only grows leaves costs a
 * pass over the items. */
typedef struct av__est {
  double *a, *b;         /* per item: time = a + b x KV tokens */
  double *a2, *b2;       /* the other set, for av__est_carry */
  double *unit;
  double time_us;        /* the latest av__est_time */
  size_t cap_items, cap_items2, cap_unit;
} av__est_t;
void av__est_free(av__est_t *e);
/* The KV tokens item `it` of p reads. */
int64_t av__item_tokens(const av_plan_t *p, const av_item_t *it);
int av__est_fit(av__est_t *e, const av_plan_t *p, const av_costmodel_t *cost);
/* After a patch: item k keeps old item src[k]'s fit (same tile, queries and output), and
 * items with src[k] < 0 (their queries changed) are fitted anew: O(changed) cost-model
 * calls, not O(plan). */
int av__est_carry(av__est_t *e, const av_plan_t *p, const int32_t *src,
                  const av_costmodel_t *cost);
/* The estimate, and the KV tokens the plan reads (may be NULL). */
int av__est_time(av__est_t *e, const av_plan_t *p, int sm_count, double *time_us,
                 double *tokens_read);

/* Patches p (made for w_old) into the plan for the step: requests and nodes renumbered,
 * finished requests' items and slots removed, arrivals added, leaves grown. A new item of a
 * persistent launch (an arrival's copy of an item) joins the queue of least estimated time
 * (est, p's fit; NULL: its source's queue). b->src says which old item each new one's
 * estimate may keep. -1: the plan has a form this cannot patch, or out of memory (plan
 * anew); p is then unchanged. */
int av__plan_patch(av_plan_t *p, const av_workload_t *w_old, const av__changes_t *ch,
                   const av__est_t *est, av__plan_buf_t *b);
/* Grows p's segments with the leaves (no other change): node u was old_len[u] tokens long and
 * is new_len[u] now. */
void av__plan_grow(av_plan_t *p, const int64_t *old_len, const int64_t *new_len);

#endif
