/* Internals of the event-driven simulator engine (sim/engine.c) shared with its helpers: the
 * L2 LRU over KV blocks (sim/l2.c) and the entry point trace replay (sim/replay.c) uses to
 * push measured durations through the same dispatch model. Not a public API. */
#ifndef AV_ENGINE_INTERNAL_H
#define AV_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/l2_runs.h"
#include "sim/sim.h"

/* --- L2: LRU over KV lines (head, node, line of whole paged blocks) --------------------- */
/* Everything lives in caller-provided memory (one slice of the engine's block), so lookups
 * allocate nothing. A chained hash map (bucket heads + per-entry next links) finds entries;
 * a doubly linked list in the same entries keeps recency. */
typedef struct av__l2_entry {
  uint64_t key;
  int32_t prev, next, hnext;   /* recency list; hash chain */
  uint32_t bucket;             /* its hash bucket (eviction unlinks without rehashing) */
} av__l2_entry_t;              /* 24 bytes: one lookup touches one cache line per entry */

typedef struct av__l2 {
  int32_t cap, used;           /* entries (KV lines) the L2 holds; 0 = no L2 modelled */
  uint32_t mask;               /* buckets - 1 (power of two >= 2 x cap) */
  int32_t head, tail;          /* most / least recently used entry, -1 when empty */
  int32_t *bucket;             /* mask + 1 bucket heads, -1 = empty */
  av__l2_entry_t *e;           /* cap entries */
} av__l2_t;

/* Bytes of memory av__l2_init needs for `cap` entries. */
size_t av__l2_bytes(int32_t cap);
/* Carves the tables out of `mem` (av__l2_bytes(cap) bytes, 8-byte aligned) and empties it. */
void av__l2_init(av__l2_t *l2, int32_t cap, void *mem);
/* Looks `key` up: a hit moves it to the front and returns 1; a miss inserts it at the front
 * (evicting the least recently used entry when full) and returns 0. With cap 0 every access
 * misses. */
int av__l2_access(av__l2_t *l2, uint64_t key);

#define AV__NO_PHASE INT32_MAX

/* A slot's place in its job's KV lines (sim/engine_loop.c kv_phase): one struct, so the
 * lookup of a line touches one cache line of slot state. */
typedef struct av__l2_cursor {
  int64_t line;                /* the next line to look up (per-line model) */
  int64_t tok;                 /* the next token to read (range model) */
  int64_t s0, s1;              /* its segment's box span (tokens) */
  uint64_t key;                /* the segment's L2 key without the line */
  int32_t seg;                 /* the segment (its index in the item); AV__NO_PHASE: none */
} av__l2_cursor_t;
/* KV lines a CTA looks up in L2 per phase (sim/engine_loop.c kv_phase). One line is the
 * model's own granularity; coarser phases already move predictions of long shared prefixes
 * at two lines (docs/simulator.md#l2-lines-in-reading-order). */
#define AV__L2_PHASE_LINES 1

/* A slot's current range phase (sim/engine_ranges.c): the tokens it reads and what of them
 * comes from HBM, from W0 on its SM's byte clock (the phase's rest after a re-division). */
typedef struct av__l2_phase {
  double W0, bytes;            /* the SM's W at its start (once active); its bytes */
  double kv, other, miss, mf;  /* KV bytes, other bytes, KV bytes missed; miss / bytes */
  double extra;                /* tokens of `miss` it fetches again (dropped from the L2) */
  double tok0, tok1;           /* the token span it reads */
  double m0;                   /* the miss clock at its start */
  uint64_t key;                /* (head, node) */
  int64_t begin, end;          /* its tokens */
  int32_t run, next;           /* the run whose platoon it is in (-1: none); next member */
  int32_t seg;                 /* its segment and box span (a cut phase resumes there) */
  int64_t s0, s1;
  int hit;                     /* reads lines the L2 holds (refreshed at its end) */
} av__l2_phase_t;
typedef struct av__member {    /* a platoon member while its run's misses are re-divided */
  double pos, end, again;      /* where it is, where it stops; tokens it fetches again */
  double owed;                 /* tokens the front passed that no share paid for */
  int32_t slot;
} av__member_t;

/* --- engine entry point with measured durations --------------------------------------- */
typedef struct av__engine_in {
  const av_plan_t *plan;
  const av_workload_t *workload;
  const av_gpu_t *gpu;
  const av_variants_t *variants;
  const av_costmodel_t *cost;  /* NULL: bytes and FLOPs from av_cost_item_bytes/_flops */
  int record_timeline;
  /* Trace replay: when non-NULL, item i of head h takes exactly durations_us[i*hkv + h]
   * (no bytes, no FLOPs, no L2): durations fixed, placement simulated. */
  const double *durations_us;
  /* Replay of the merge phase: > 0 gives every merge CTA this duration; 0 models it. With
   * merge_durations_us (merge CTAs per head x hkv, av__engine_merge_rows_per_cta) merge CTA
   * j of KV head h takes merge_durations_us[j*hkv + h] instead. */
  double merge_duration_us;
  const double *merge_durations_us;
  /* Leave the merge phase out (replay of a trace that recorded no merge CTAs). */
  int skip_merge;
  /* The per-line L2 (sim/l2.c), the reference model, instead of runs of lines. */
  int l2_lines;
  av_kv_copy_t kv_copy;        /* how the kernels copy KV: sim/engine_boxes.c */
} av__engine_in_t;

/* Query-head rows per merge CTA as the engine models them: the compiled merge variant's m
 * for the plan's head dim, dtype and the GPU's architecture, else the GQA group. The engine
 * runs ceil(requests x group / rows) merge CTAs per KV head. */
int32_t av__engine_merge_rows_per_cta(const av_plan_t *p, const av_variants_t *variants,
                                      const av_gpu_t *gpu);

/* Runs the engine. *out is filled (caller frees with av_sim_result_free); with
 * record_timeline, tl (zero-initialised by the caller) receives every CTA. When mem_bytes is
 * not NULL it receives the size of the engine's working block (benchmark accounting). */
int av__engine_run(const av__engine_in_t *in, av_sim_result_t *out, av_timeline_t *tl,
                   size_t *mem_bytes, av_error_t *err);

/* --- engine state (sim/engine.c builds it, sim/engine_loop.c runs it) ------------------ */
/* Resources an SM tracks, each in units of AV__RES_CAP per SM: a CTA of a launch whose
 * occupancy bound for that resource is k costs floor(AV__RES_CAP / k), so k CTAs of one
 * launch fit and k+1 do not (exactly av_occupancy's answer), while CTAs of different launches
 * co-reside in proportion. */
#define AV__RES_CAP (1u << 24)
#define AV__BIG 1e300       /* "never" (finite, so BIG x 0 stays 0 and BIG x BIG is inf) */
enum { AV__RES_CTAS, AV__RES_WARPS, AV__RES_REGS, AV__RES_SMEM, AV__RES_N };

typedef struct av__eng_launch {
  int32_t stream, next_on_stream;  /* next launch of the same stream, -1 when last */
  const int32_t *items;            /* item grid: the launch's items in plan order */
  int32_t n_items;
  int32_t persistent;              /* persistent CTAs per head (0 = one CTA per item) */
  const int32_t *q_off, *queue;    /* persistent queues: CTA c runs queue[q_off[c]..q_off[c+1]) */
  int32_t per_head, total, next_cta, done_ctas;
  int is_merge;
  int ctas_per_sm;
  uint32_t res[AV__RES_N];
  double issue_us, start_us, end_us;
} av__eng_launch_t;

typedef struct av__eng {
  av_launch_costs_t lc;         /* issue, gaps and tail of the plan's launch model */
  const av__engine_in_t *in;
  const av_plan_t *plan;
  int32_t hkv, S, maxc, n_launches;   /* n_launches includes the merge launch when present */
  int has_merge;
  double B, C, T, l2_cost;            /* bytes/us HBM, per-SM in-flight bound, flop/us per SM,
                                         HBM-equivalent cost of one L2 byte */
  double fixed_us, token_bytes;
  unsigned cost_caps;                 /* the cost model's AV_COST_* flags (0 for replays) */
  /* Per-CTA calibration from a measured cost model (AV_COST_MEASURED_CTAS, FlashForge §5.2):
   * each CTA has its own standalone fixed cost and its own in-flight rate bound (its
   * buffers, not the SM's), derived from C(n_q, n); the per-SM bound C is then not used. */
  int cta_caps;
  double merge_cap;                   /* a merge CTA's rate bound (bytes/us) under cta_caps */
  /* Measured by the profile (cta_caps; docs/simulator.md "Merge"): a merge CTA takes
   * merge_fixed then streams its bytes at merge_capj[job], so alone it takes the profile's
   * time for its longest row; an empty persistent CTA holds its slot for empty_us. */
  int merge_measured;
  double merge_fixed, empty_us;
  double merge_cold;                  /* fraction of the partial states out of L2 at the merge */
  /* Co-residency (cta_caps with a profile that has curves, docs/simulator.md#co-residency): a CTA's
   * streaming rate when k memory-active CTAs share its SM is its lone bound / curve(k) of its
   * launch's variant; curve[l * (maxc + 1) + k], k = 1..maxc (all 1 for the merge launch). */
  int has_curve;
  double *curve;
  int line_tokens;                    /* L2 granularity: whole paged blocks, >= 64 tokens */
  int32_t box_rows;                   /* cta_caps: KV is copied in whole boxes of this many
                                         tokens from a page start (sim/engine_boxes.c); 0 =
                                         the segment's tokens exactly */
  /* First-wave start cost (cta_caps with a measured one, sim/engine_start.c): the slots a
   * dispatch placed at their launch's start, charged once the dispatch knows how many
   * started together. */
  int has_start;
  int32_t *starters, n_starters;
  av__eng_launch_t *L;
  /* per item (one KV head) */
  double *item_other_bytes, *item_flops;
  double *item_fixed, *item_cap;      /* cta_caps: standalone fixed cost (us), rate bound */
  int64_t *item_kv_tokens;
  /* merge CTAs (per head) */
  int32_t merge_per_head, merge_rows_per_cta;  /* rows = (request, query head) pairs */
  double *merge_bytes;
  double *merge_capj;                 /* merge_measured: each merge CTA's rate bound */
  /* per SM (structure of arrays: the per-event passes run over these) */
  double *W, *PHI;                    /* bytes / FLOPs served so far to each active CTA */
  double *rho, *irho, *phi, *iphi;    /* per-CTA rates and their inverses (us per unit) */
  double *Cn, *nC;                    /* in-flight bound per CTA (C / n_mem, or the mean of
                                         the memory-active CTAs' own bounds) and 1 / it */
  double *capsum;                     /* cta_caps: sum of the memory-active CTAs' bounds */
  double *hsum, *hbar;                /* sum and mean of the memory-active CTAs' HBM fractions
                                         (the share of their bytes that misses L2) */
  double *sbar;                       /* has_curve: mean curve(n_mem) of the memory-active
                                         CTAs (1 otherwise) */
  double *mtmin, *ftmin, *tamin, *next;
  double *busy_since, *busy_us;
  int32_t *n_mem, *n_cmp, *n_res, *hw;
  int32_t *busy, n_busy;              /* SMs holding CTAs (n_res > 0), in SM order: the
                                         per-event passes visit only these */
  uint32_t *res_used;                 /* S x AV__RES_N */
  int64_t n_mem_total;
  double f;                           /* water level: fair per-CTA share of HBM bandwidth; a
                                         CTA on SM s moves its bytes at min(Cn, f / hbar) */
  /* per slot (S x maxc) */
  int8_t *sl_state;                   /* 0 free, 1 prologue (fixed cost), 2 moving/computing,
                                         3 bytes done, waiting for its own pipeline (sl_ta) */
  int32_t *sl_launch, *sl_job, *sl_head, *sl_qpos, *sl_qend;
  double *sl_t0, *sl_ta, *sl_mt, *sl_ft, *sl_bytes, *sl_flops, *sl_cap;
  double *sl_h;                       /* the HBM fraction of the job's current phase */
  av__l2_cursor_t *sl_cur;            /* where the job's next L2 lookup is */
  double *sl_nb;                      /* queued persistent item: its fixed cost, which
                                         overlaps its bytes (0 = a CTA's first item or a grid
                                         item: the fixed cost precedes the bytes) */
  /* dispatch */
  int32_t *active, n_active;          /* launches started, in start order */
  int32_t *dirty, n_dirty;            /* SMs whose resources grew since the last dispatch */
  uint8_t *is_dirty;
  /* launch events: binary min-heap of (time, launch) */
  double *heap_t;
  int32_t *heap_l, heap_n;
  int32_t partial_left, launches_left;
  av__l2_t l2;                        /* the per-line reference model (in->l2_lines) */
  int l2_ranges;                      /* the range model (sim/engine_ranges.c) is on */
  av__runs_t runs;
  av__l2_phase_t *ph;                 /* per slot */
  av__member_t *members;              /* scratch: one per slot */
  int32_t *unsettled, n_unsettled;    /* runs joined in this event (av__ranges_settle) */
  double *msum;                       /* per SM: sum of memory-active slots' miss / bytes */
  double m_clk;                       /* KV bytes missed so far (the L2's reuse clock) */
  int32_t *touched, n_touched;        /* SMs whose slots a platoon re-division moved */
  uint8_t *is_touched;
  double hbm_bytes, l2_bytes;
  av_timeline_t *tl;
} av__eng_t;

/* sim/engine_boxes.c: the rows r of the boxes the kernels copy KV in (0 = token-exact
 * copies), and a segment [begin, end) widened to the boxes it reads: [begin rounded down to
 * r, end rounded up to r). */
int32_t av__engine_box_rows(const av_gpu_t *gpu, const av_workload_t *w,
                            av_kv_copy_t kv_copy);
void av__engine_box_span(int32_t r, int64_t begin, int64_t end, int64_t *b, int64_t *e);

/* sim/engine_l2.c: points slot sl's L2 cursor at the first line of the first segment of its
 * item from k on that has tokens (seg AV__NO_PHASE when none is left); the next KV phase of
 * slot sl, whose bytes it returns (plus `other`, the job's non-KV bytes, carried by its
 * first phase), *hbm_out the part that competes for HBM. */
void av__engine_seg_enter(av__eng_t *e, int64_t sl, const av_item_t *item, int32_t k);
double av__engine_kv_phase(av__eng_t *e, int64_t sl, double other, double *hbm_out);
/* sim/engine_ranges.c: the range model's next phase of slot sl (as av__engine_kv_phase; for
 * an active slot it also sets the byte target and its SM's sums), and the end of its phase
 * (it leaves its platoon, or refreshes the lines it hit). */
double av__ranges_phase(av__eng_t *e, int64_t sl, double other, double *hbm_out);
void av__ranges_phase_end(av__eng_t *e, int64_t sl);
/* The end of an event: the runs that gained members in it re-divide their misses once. */
void av__ranges_settle(av__eng_t *e);

/* sim/engine_loop.c: runs the events to the end; fills e->L[*].start_us/end_us. */
int av__engine_loop(av__eng_t *e, av_error_t *err);
/* sim/engine_start.c: whether the cost model measured a start cost (sets e->has_start), and
 * the charge of the e->n_starters CTAs one dispatch placed at their launch's start. */
void av__engine_start_setup(av__eng_t *e);
void av__engine_start_costs(av__eng_t *e);
/* The merge launch (sim/engine_merge.c): requests with partial states, i.e. that the merge
 * kernel combines (PAT §7); the merge tile and its rows per CTA; each merge CTA's bytes and
 * rate (merge_bytes, merge_capj, merge_cold, calibrated under a measured model); and what an
 * empty persistent CTA costs (empty_us). */
int64_t av__engine_merge_requests(const av_plan_t *p);
void av__engine_merge_shape(const av__eng_t *e, av_tile_t *tile, int32_t *rows_per_cta);
void av__engine_merge_costs(av__eng_t *e);
void av__engine_empty_cost(av__eng_t *e);

#endif
