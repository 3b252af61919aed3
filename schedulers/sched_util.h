/* Helpers every scheduler may use: query rows, tile choice among the compiled variants,
 * cutting a node's queries into tile-sized groups, walking a request's KV path, and adding
 * items to a plan with errors as values. */
#ifndef AV_SCHED_UTIL_H
#define AV_SCHED_UTIL_H

#include <stdint.h>

#include "schedulers/scheduler.h"

/* Tiles assumed when no variants table is given (or it lists none for the batch's head dim,
 * dtype and architecture and `fallback` is allowed): m in {16, 32, 64, 128}, n = 64,
 * 4 warps — the default set kernels/ compiles. */
#define AV_SCHED_DEFAULT_N 64
#define AV_SCHED_DEFAULT_WARPS 4

/* Query rows of n_q queries: n_q x GQA group (head-group fusion, DESIGN §Data model). */
static inline int32_t av_sched_rows(const av_sched_ctx_t *ctx, int32_t n_q) {
  return n_q * av_heads_group(&ctx->workload->heads);
}

/* The tile menu of `kind` for the batch (sorted by m, then n, then warps): the compiled
 * variants that ctx->gpu can launch (occupancy > 0), so no scheduler can choose a tile the
 * GPU cannot run. Writes up to max tiles and returns the count; with no variants table it
 * returns the default menu. Returns 0 with AV_ERR_UNSUPPORTED in err when a table is given
 * but holds no runnable tile of that kind for the batch's head dim/dtype/arch. */
int av_sched_tiles(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, av_tile_t *out, int max,
                   av_error_t *err);

/* The tile of `kind` with the smallest m >= rows (ties: n closest to prefer_n, then fewer
 * warps). When no compiled m is large enough, the largest m (callers split the queries).
 * Returns AV_OK or an error from av_sched_tiles. */
int av_sched_pick_tile(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, int32_t rows,
                       int prefer_n, av_tile_t *out, av_error_t *err);

/* Largest m_rows compiled for `kind` (0 with err set when there is none). */
int av_sched_max_rows(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, av_error_t *err);

/* Queries that fit one CTA of at most max_rows rows: floor(max_rows / group); AV_ERR_UNSUPPORTED
 * when even one query's group does not fit. */
int av_sched_queries_per_cta(const av_sched_ctx_t *ctx, int max_rows, int32_t *out,
                             av_error_t *err);

/* Splits n queries into the fewest groups of at most per_cta, sizes as even as possible
 * (the first n % groups get one more). Returns the group count; sizes[] receives each size
 * when non-NULL (room for ceil(n / per_cta)). */
int32_t av_sched_split_even(int32_t n, int32_t per_cta, int32_t *sizes);

/* The nodes of request r's path, root first. Writes up to max, returns the depth (number of
 * nodes), which may exceed max (then only the first max are written). */
int32_t av_sched_path(const av_workload_t *w, int32_t r, int32_t *nodes, int32_t max);

/* The segments covering tokens [begin, end) of a path (nodes root first, as av_sched_path
 * gives): consecutive node ranges. Writes into segs (room for n_nodes) and returns the
 * count. */
int32_t av_sched_path_segments(const av_workload_t *w, const int32_t *nodes, int32_t n_nodes,
                               int64_t begin, int64_t end, av_segment_t *segs);

/* Does an item over node u's KV cover each of its queries' whole paths? True when u is a
 * root and every query ends at u (then the output can be FINAL). */
int av_sched_node_is_whole_path(const av_workload_t *w, int32_t u);

/* av_plan_add_launch / av_plan_add_item with AV_ERR_NOMEM in err. Return the index or -1. */
int32_t av_sched_add_launch(av_plan_t *p, int32_t stream, const av_tile_t *tile,
                            int32_t persistent_ctas, av_error_t *err);
int32_t av_sched_add_item(av_plan_t *p, int32_t launch, av_item_work_t work, av_output_t output,
                          int32_t cta, int32_t order, av_error_t *err);

/* Cost of an abstract item under ctx->cost (0 when the context has no cost model). */
double av_sched_cost_us(const av_sched_ctx_t *ctx, int32_t n_q, int64_t kv_tokens,
                        const av_tile_t *tile, av_output_t output);

/* CTAs that run at once: sm_count x resident CTAs per SM of `tile` (occupancy from the
 * variants table when it lists the tile, else `fallback_per_sm`). */
int32_t av_sched_concurrent_ctas(const av_sched_ctx_t *ctx, const av_tile_t *tile,
                                 int fallback_per_sm);
/* Persistent queues that run at once when every queue is launched once per KV head (grid
 * (queues, hkv)): av_sched_concurrent_ctas / hkv, at least 1. FlashInfer's scheduler sizes
 * its split the same way (max_grid_size / num_kv_heads, include/flashinfer/attention/
 * scheduler.cuh), so a persistent grid is one wave of the whole GPU, not hkv waves. */
int32_t av_sched_concurrent_queues(const av_sched_ctx_t *ctx, const av_tile_t *tile,
                                   int fallback_per_sm);

/* --- node pieces: the KV-centric schedulers' unit of work ------------------------------ */

/* Tokens [begin, end) of one node with a contiguous group of the queries below it
 * (w->node_reqs[w->node_req_offsets[node] + q_first ...], n_q of them). */
typedef struct av_sched_piece {
  int32_t node;
  int64_t begin, end;
  int32_t q_first, n_q;
  double cost_us;          /* scheduler's estimate (used for ordering; may be 0) */
  int32_t cta, order;      /* persistent launches: queue and position; else -1 */
} av_sched_piece_t;

/* Appends to out the pieces of node u: its queries cut into the fewest groups of at most
 * per_cta (sizes as even as possible), each group's KV cut into k even token ranges
 * (k capped at the node length). Returns the count written: groups x min(k, len). */
int32_t av_sched_node_pieces(const av_workload_t *w, int32_t u, int64_t k, int32_t per_cta,
                             av_sched_piece_t *out);

typedef enum {
  AV_SCHED_TILES_SINGLE = 0,    /* one launch, one tile sized for the largest piece */
  AV_SCHED_TILES_PER_SHAPE = 1, /* one launch per tile shape, each on its own stream */
  AV_SCHED_TILES_BESIDE = 2     /* per shape; the largest tile's grid first, the smaller
                                   shapes persistent in the room its CTAs leave per SM */
} av_sched_tile_mode_t;

/* How av_sched_emit_pieces launches its pieces. */
typedef struct av_sched_emit {
  av_kernel_kind_t kind;     /* the kernel the pieces run on */
  av_sched_tile_mode_t mode; /* one tile, one launch per shape, or per shape beside a grid */
  int prefer_n;              /* the tile n preferred among ties (av_sched_pick_tile) */
  int32_t persistent_ctas;   /* > 0: one persistent launch of that many queues */
} av_sched_emit_t;

/* Builds the plan's launches and items from pieces (in array order within a launch). A piece
 * writes FINAL output when it covers its queries' whole paths, else PARTIAL. With
 * persistent_ctas > 0 the pieces form one persistent launch and their cta/order fields place
 * them; items are then emitted by (cta, order). With kind PERSISTENT and persistent_ctas 0,
 * each shape's launch (one in SINGLE mode) is persistent with one wave of queues per KV head
 * (av_sched_concurrent_queues), filled by av_sched_lpt_queues. In BESIDE mode (kind PARTIAL)
 * the largest tile's pieces are a grid launched first and every smaller shape is a persistent
 * launch with av_sched_beside_queues queues, so its CTAs run beside the grid's. */
int av_sched_emit_pieces(const av_sched_ctx_t *ctx, av_plan_t *p, av_sched_piece_t *pieces,
                         int32_t n, av_sched_emit_t how, av_error_t *err);

/* Queues per KV head for a persistent launch of `small` beside a grid of n_big CTAs per KV
 * head of `big`: the CTAs of `small` that fit in the registers, shared memory, warps and CTA
 * slots that the grid's CTAs leave on an SM (each CTA taking 1 / (its occupancy by that
 * resource), the simulator's rule, sim/engine.c), times the SMs, at least one per SM. */
int32_t av_sched_beside_queues(const av_sched_ctx_t *ctx, const av_tile_t *big, int64_t n_big,
                               const av_tile_t *small);

/* Longest piece first to the least-loaded of `queues` queues (tokens plus a tile per item):
 * sets cta and order, reorders pieces. */
int av_sched_lpt_queues(av_sched_piece_t *pieces, int32_t n, int32_t queues, av_error_t *err);

/* Largest queries-per-CTA for `kind` (largest compiled m over the GQA group). */
int av_sched_max_queries(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, int32_t *out,
                         av_error_t *err);

/* The "launch" parameter of node_naive and fixed_division; av_sched_launch_t in the order
 * of its choices. */
typedef enum { AV_SCHED_LAUNCH_GRID, AV_SCHED_LAUNCH_PERSISTENT, AV_SCHED_LAUNCH_BESIDE } av_sched_launch_t;
extern const char *const av_sched_launch_choices[];
#define AV_SCHED_LAUNCH_PARAM                                                                \
  {.name = "launch", .type = AV_PARAM_ENUM, .def = "grid", .choices = av_sched_launch_choices, \
   .help = "grid: one CTA per piece, dispatched by the hardware; persistent: per tile shape "  \
           "one wave of persistent CTAs per KV head, pieces longest first to the least "      \
           "loaded queue (the kernel streams a queue's tiles across its items); beside: "     \
           "(implies tiles=per_shape) the largest tile's grid first, the smaller tiles persistent in " \
           "the registers and shared memory its CTAs leave on each SM, so memory-bound "       \
           "pieces stream under the compute-bound ones"}

/* The "wide" parameter of node_naive and fixed_division (off, on). */
extern const char *const av_sched_wide_choices[];
#define AV_SCHED_WIDE_PARAM                                                                  \
  {.name = "wide", .type = AV_PARAM_ENUM, .def = "off", .choices = av_sched_wide_choices,     \
   .help = "on: pieces of more than 64 rows take the warp-specialised m128 x n128 tile "      \
           "(sm_90a, KV copied by TMA), one CTA an SM: a root's grid then holds whole SMs "   \
           "and, with launch=beside, the leaves' queues take the SMs it leaves free"}

/* The m128 plans `auto` races with wide=on (av_scheduler_ops_t.wide_alternatives): every
 * piece of more than 64 rows on the m128 tile, the others per shape. */
extern const char *const av_sched_wide_alternatives[];

/* node_naive (k = 1) and fixed_division: every node with queries in k even KV pieces, its
 * queries split only when they exceed the largest tile; params "tiles", "tile_n" and
 * "launch". Defined in node_naive.c. */
int av__sched_plan_divided(const av_sched_ctx_t *ctx, const av_params_t *params, int64_t k,
                           const char *name, av_plan_t **out, av_error_t *err);

#endif
