/* Helpers shared by the schedulers: tile choice among the compiled variants, query groups
 * that fit a tile, request paths as segments, and plan building with errors as values. */
#include "schedulers/sched_util.h"

#include <stdlib.h>
#include <string.h>

#include "core/occupancy.h"

static const int default_m[] = {16, 32, 64, 128};

const char *const av_sched_launch_choices[] = {"grid", "persistent", "beside", NULL};
const char *const av_sched_wide_choices[] = {"off", "on", NULL};
const char *const av_sched_wide_alternatives[] = {"tiles=per_shape;wide=on", NULL};

enum { MAX_TILES = 256, MAX_SHAPES = 64 };

static int tile_cmp(const void *a, const void *b) {
  const av_tile_t *x = a, *y = b;
  if (x->m_rows != y->m_rows) return x->m_rows < y->m_rows ? -1 : 1;
  if (x->n_tokens != y->n_tokens) return x->n_tokens < y->n_tokens ? -1 : 1;
  return (x->warps > y->warps) - (x->warps < y->warps);
}

int av_sched_tiles(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, av_tile_t *out, int max,
                   av_error_t *err) {
  const av_heads_t *h = &ctx->workload->heads;
  if (!ctx->variants) {
    int n = 0;
    for (int i = 0; i < (int)(sizeof default_m / sizeof default_m[0]) && n < max; i++)
      out[n++] = (av_tile_t){.kind = kind, .m_rows = default_m[i],
                             .n_tokens = AV_SCHED_DEFAULT_N, .warps = AV_SCHED_DEFAULT_WARPS};
    return n;
  }
  int n = av_variants_tiles(ctx->variants, kind, h->head_dim, h->dtype, ctx->gpu->sm_arch, out,
                            max);
  if (n > max) n = max;
  if (n <= 0) {
    av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                 "no compiled %s kernel variant for head_dim %d, %s, sm_%d; rebuild the "
                 "kernels with that configuration or plan without a variants table",
                 av_kernel_kind_name(kind), h->head_dim, av_dtype_name(h->dtype),
                 ctx->gpu->sm_arch);
    return 0;
  }
  /* Only tiles this GPU can launch: a variant compiled for the architecture may still need
   * more shared memory or registers per CTA than this part has (sm_89's 100 KB vs sm_90's
   * 228 KB), and a plan must never name one (its occupancy would be 0). */
  int kept = 0;
  for (int i = 0; i < n; i++) {
    const av_variant_t *v =
        av_variants_find(ctx->variants, &out[i], h->head_dim, h->dtype, ctx->gpu->sm_arch);
    av_occupancy_t occ = {0};
    if (v) av_occupancy(ctx->gpu, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
    const int wide_ok = ctx->wide_tiles || out[i].m_rows < AV_TILE_WIDE_ROWS;
    if (v && occ.ctas_per_sm > 0 && wide_ok) out[kept++] = out[i];
  }
  if (kept == 0) {
    av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                 "none of the %d compiled %s kernel variants for head_dim %d, %s, sm_%d can "
                 "run on %s (each needs more registers or shared memory per CTA than it has)",
                 n, av_kernel_kind_name(kind), h->head_dim, av_dtype_name(h->dtype),
                 ctx->gpu->sm_arch, ctx->gpu->name);
    return 0;
  }
  qsort(out, (size_t)kept, sizeof *out, tile_cmp);
  return kept;
}


/* The pick rule of av_sched_pick_tile over a sorted menu. */
static av_tile_t pick_from(const av_tile_t *tiles, int n, int32_t rows, int prefer_n) {
  /* Smallest m that holds the rows, else the largest m there is. */
  int m = tiles[n - 1].m_rows;
  for (int i = 0; i < n; i++)
    if (tiles[i].m_rows >= rows) {
      m = tiles[i].m_rows;
      break;
    }
  int best = -1;
  long best_dn = 0;
  for (int i = 0; i < n; i++) {
    if (tiles[i].m_rows != m) continue;
    long dn = labs((long)tiles[i].n_tokens - prefer_n);
    /* tiles are sorted by (m, n, warps): the first at a given distance has fewer warps */
    if (best < 0 || dn < best_dn) {
      best = i;
      best_dn = dn;
    }
  }
  return tiles[best];
}

int av_sched_pick_tile(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, int32_t rows,
                       int prefer_n, av_tile_t *out, av_error_t *err) {
  av_tile_t tiles[MAX_TILES];
  int n = av_sched_tiles(ctx, kind, tiles, MAX_TILES, err);
  if (n <= 0) return err && err->code ? err->code : AV_ERR_UNSUPPORTED;
  *out = pick_from(tiles, n, rows, prefer_n);
  return AV_OK;
}

int av_sched_max_rows(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, av_error_t *err) {
  av_tile_t tiles[MAX_TILES];
  int n = av_sched_tiles(ctx, kind, tiles, MAX_TILES, err);
  return n > 0 ? tiles[n - 1].m_rows : 0;
}

int av_sched_queries_per_cta(const av_sched_ctx_t *ctx, int max_rows, int32_t *out,
                             av_error_t *err) {
  int g = av_heads_group(&ctx->workload->heads);
  *out = g > 0 ? max_rows / g : 0;
  if (*out >= 1) return AV_OK;
  return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                      "a GQA group of %d query heads does not fit the largest compiled tile "
                      "(m = %d rows)", g, max_rows);
}

int32_t av_sched_split_even(int32_t n, int32_t per_cta, int32_t *sizes) {
  if (n <= 0 || per_cta <= 0) return 0;
  int32_t groups = (n + per_cta - 1) / per_cta;
  for (int32_t i = 0; sizes && i < groups; i++) sizes[i] = n / groups + (i < n % groups);
  return groups;
}

int32_t av_sched_path(const av_workload_t *w, int32_t r, int32_t *nodes, int32_t max) {
  int32_t depth = 0;
  for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent) depth++;
  int32_t i = depth;
  for (int32_t u = w->request_node[r]; u >= 0; u = w->nodes[u].parent)
    if (--i < max) nodes[i] = u;
  return depth;
}

int32_t av_sched_path_segments(const av_workload_t *w, const int32_t *nodes, int32_t n_nodes,
                               int64_t begin, int64_t end, av_segment_t *segs) {
  int32_t n = 0;
  int64_t off = 0;
  for (int32_t i = 0; i < n_nodes && off < end; i++) {
    int64_t len = w->nodes[nodes[i]].kv_len_tokens;
    int64_t b = begin > off ? begin - off : 0, e = end - off < len ? end - off : len;
    if (b < e) segs[n++] = (av_segment_t){.node = nodes[i], .begin = b, .end = e};
    off += len;
  }
  return n;
}

int av_sched_node_is_whole_path(const av_workload_t *w, int32_t u) {
  if (w->nodes[u].parent >= 0) return 0;
  for (int32_t k = w->node_req_offsets[u]; k < w->node_req_offsets[u + 1]; k++)
    if (w->request_node[w->node_reqs[k]] != u) return 0;
  return 1;
}

int32_t av_sched_add_launch(av_plan_t *p, int32_t stream, const av_tile_t *tile,
                            int32_t persistent_ctas, av_error_t *err) {
  int32_t l = av_plan_add_launch(p, stream, tile, persistent_ctas);
  if (l < 0) av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory adding a launch");
  return l;
}

int32_t av_sched_add_item(av_plan_t *p, int32_t launch, av_item_work_t work, av_output_t output,
                          int32_t cta, int32_t order, av_error_t *err) {
  int32_t it = av_plan_add_item(p, launch, work, output, cta, order);
  if (it < 0) av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory adding a plan item");
  return it;
}

double av_sched_cost_us(const av_sched_ctx_t *ctx, int32_t n_q, int64_t kv_tokens,
                        const av_tile_t *tile, av_output_t output) {
  if (!ctx->cost) return 0.0;
  av_cost_query_t q = {.n_q = n_q, .rows = av_sched_rows(ctx, n_q), .kv_tokens = kv_tokens,
                       .tile = *tile, .output = output};
  av_item_cost_t c;
  av_costmodel_estimate(ctx->cost, &q, &c);
  return c.time_us;
}

int32_t av_sched_concurrent_ctas(const av_sched_ctx_t *ctx, const av_tile_t *tile,
                                 int fallback_per_sm) {
  int per_sm = fallback_per_sm;
  const av_heads_t *h = &ctx->workload->heads;
  const av_variant_t *v =
      ctx->variants ? av_variants_find(ctx->variants, tile, h->head_dim, h->dtype,
                                       ctx->gpu->sm_arch)
                    : NULL;
  if (v) {
    av_occupancy_t occ;
    av_occupancy(ctx->gpu, v->threads, v->regs_per_thread, v->smem_bytes, &occ);
    if (occ.ctas_per_sm > 0) per_sm = occ.ctas_per_sm;
  }
  if (per_sm < 1) per_sm = 1;
  return (int32_t)ctx->gpu->sm_count * per_sm;
}

int32_t av_sched_concurrent_queues(const av_sched_ctx_t *ctx, const av_tile_t *tile,
                                   int fallback_per_sm) {
  const int32_t hkv = ctx->workload->heads.hkv > 0 ? ctx->workload->heads.hkv : 1;
  const int32_t q = av_sched_concurrent_ctas(ctx, tile, fallback_per_sm) / hkv;
  return q > 0 ? q : 1;
}

/* The occupancy of a tile's compiled variant; 0 when the table lacks it. */
static int tile_occupancy(const av_sched_ctx_t *ctx, const av_tile_t *t, av_occupancy_t *occ) {
  const av_heads_t *h = &ctx->workload->heads;
  const av_variant_t *v =
      ctx->variants ? av_variants_find(ctx->variants, t, h->head_dim, h->dtype,
                                       ctx->gpu->sm_arch)
                    : NULL;
  if (!v) return 0;
  av_occupancy(ctx->gpu, v->threads, v->regs_per_thread, v->smem_bytes, occ);
  return occ->ctas_per_sm > 0;
}

int32_t av_sched_beside_queues(const av_sched_ctx_t *ctx, const av_tile_t *big, int64_t n_big,
                               const av_tile_t *small) {
  av_occupancy_t ob, os;
  if (!tile_occupancy(ctx, big, &ob) || !tile_occupancy(ctx, small, &os))
    return av_sched_concurrent_queues(ctx, small, 1);
  const int64_t sms = ctx->gpu->sm_count > 0 ? ctx->gpu->sm_count : 1;
  const int64_t hkv = ctx->workload->heads.hkv > 0 ? ctx->workload->heads.hkv : 1;
  /* A grid of tiles that fill an SM alone, on fewer CTAs than SMs, leaves whole SMs free:
   * the queues take those, at the small tile's full occupancy. */
  if (big->m_rows >= AV_TILE_WIDE_ROWS && ob.ctas_per_sm == 1 && n_big * hkv < sms) {
    const int64_t q = (sms - n_big * hkv) * os.ctas_per_sm / hkv;
    return q > 0 ? (int32_t)q : 1;
  }
  int64_t j = (n_big * hkv + sms - 1) / sms; /* the grid's CTAs per SM, first wave */
  if (j > ob.ctas_per_sm) j = ob.ctas_per_sm;
  const int by_b[] = {ob.by_ctas, ob.by_warps, ob.by_regs, ob.by_smem};
  const int by_s[] = {os.by_ctas, os.by_warps, os.by_regs, os.by_smem};
  int fit = os.ctas_per_sm;
  for (int r = 0; r < 4; r++) {
    if (by_b[r] <= 0 || by_s[r] <= 0) continue;
    const int f = (int)((1.0 - (double)j / by_b[r]) * by_s[r] + 1e-9);
    if (f < fit) fit = f;
  }
  if (fit < 1) fit = 1; /* no room: one queue per SM, which starts as the grid drains */
  const int64_t q = sms * fit / hkv;
  return q > 0 ? (int32_t)q : 1;
}

/* The persistent tile for pieces of `rows` rows beside the grid: the smallest compiled m that
 * holds them, and of its tiles the one with the most queues beside the grid (more
 * independent streams of copies; measured on the H200, docs/kernels.md), ties
 * to the n closest to prefer_n. */
static int beside_tile(const av_sched_ctx_t *ctx, const av_tile_t *big, int64_t n_big,
                       int32_t rows, int prefer_n, av_tile_t *out, av_error_t *err) {
  av_tile_t menu[MAX_TILES];
  int rc = av_sched_pick_tile(ctx, AV_KERNEL_PERSISTENT, rows, prefer_n, out, err);
  const int n_menu = rc ? 0 : av_sched_tiles(ctx, AV_KERNEL_PERSISTENT, menu, MAX_TILES, err);
  int32_t best_q = n_menu > 0 ? av_sched_beside_queues(ctx, big, n_big, out) : 0;
  for (int i = 0; i < n_menu; i++) {
    if (menu[i].m_rows != out->m_rows) continue;
    const int32_t q = av_sched_beside_queues(ctx, big, n_big, &menu[i]);
    const int closer = abs(menu[i].n_tokens - prefer_n) < abs(out->n_tokens - prefer_n);
    if (q > best_q || (q == best_q && closer)) {
      best_q = q;
      *out = menu[i];
    }
  }
  return rc;
}

int32_t av_sched_node_pieces(const av_workload_t *w, int32_t u, int64_t k, int32_t per_cta,
                             av_sched_piece_t *out) {
  int32_t share = w->node_req_offsets[u + 1] - w->node_req_offsets[u];
  int64_t len = w->nodes[u].kv_len_tokens;
  if (k > len) k = len;
  int32_t groups = av_sched_split_even(share, per_cta, NULL), n = 0, q = 0;
  for (int32_t g = 0; g < groups; g++) {
    int32_t nq = share / groups + (g < share % groups);
    for (int64_t i = 0; i < k; i++)
      out[n++] = (av_sched_piece_t){.node = u, .begin = i * len / k, .end = (i + 1) * len / k,
                                    .q_first = q, .n_q = nq, .cta = -1, .order = -1};
    q += nq;
  }
  return n;
}

int av_sched_max_queries(const av_sched_ctx_t *ctx, av_kernel_kind_t kind, int32_t *out,
                         av_error_t *err) {
  int m = av_sched_max_rows(ctx, kind, err);
  if (m <= 0) return err && err->code ? err->code : AV_ERR_UNSUPPORTED;
  return av_sched_queries_per_cta(ctx, m, out, err);
}

static int piece_is_final(const av_workload_t *w, const av_sched_piece_t *pc) {
  return pc->begin == 0 && pc->end == w->nodes[pc->node].kv_len_tokens &&
         av_sched_node_is_whole_path(w, pc->node);
}

static int piece_by_queue(const void *a, const void *b) {
  const av_sched_piece_t *x = a, *y = b;
  if (x->cta != y->cta) return x->cta < y->cta ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

/* Orders pieces by (cta, order) like qsort with piece_by_queue, in O(n + ctas): a stable
 * bucketing by CTA, after which each queue is usually in order already (schedulers assign
 * positions in the order they fill the queues); a queue that is not gets sorted alone. Falls
 * back to qsort when a CTA is out of range or scratch memory is short. */
static void sort_by_queue(av_sched_piece_t *pieces, int32_t n, int32_t ctas) {
  int32_t *start = calloc((size_t)ctas + 1, sizeof *start);
  av_sched_piece_t *tmp = malloc(sizeof *tmp * (size_t)(n > 0 ? n : 1));
  int ok = start && tmp;
  for (int32_t i = 0; ok && i < n; i++) {
    if (pieces[i].cta < 0 || pieces[i].cta >= ctas) ok = 0;
    else start[pieces[i].cta + 1]++;
  }
  if (!ok) {
    free(start);
    free(tmp);
    qsort(pieces, (size_t)n, sizeof *pieces, piece_by_queue);
    return;
  }
  for (int32_t c = 0; c < ctas; c++) start[c + 1] += start[c];
  for (int32_t i = 0; i < n; i++) tmp[start[pieces[i].cta]++] = pieces[i];
  /* start[c] is now the end of queue c */
  for (int32_t c = 0, b = 0; c < ctas; b = start[c++]) {
    int sorted = 1;
    for (int32_t i = b + 1; i < start[c] && sorted; i++) sorted = tmp[i - 1].order <= tmp[i].order;
    if (!sorted) qsort(tmp + b, (size_t)(start[c] - b), sizeof *tmp, piece_by_queue);
  }
  memcpy(pieces, tmp, sizeof *tmp * (size_t)n);
  free(start);
  free(tmp);
}

static int add_piece(const av_sched_ctx_t *ctx, av_plan_t *p, int32_t launch,
                     const av_sched_piece_t *pc, av_error_t *err) {
  const av_workload_t *w = ctx->workload;
  const int32_t *q = w->node_reqs + w->node_req_offsets[pc->node] + pc->q_first;
  av_segment_t seg = {.node = pc->node, .begin = pc->begin, .end = pc->end};
  av_output_t o = piece_is_final(w, pc) ? AV_OUT_FINAL : AV_OUT_PARTIAL;
  return av_sched_add_item(p, launch, (av_item_work_t){q, pc->n_q, &seg, 1}, o, pc->cta, pc->order,
                           err) < 0
             ? AV_ERR_NOMEM
             : AV_OK;
}


/* One launch per tile shape (shapes[], shape_of[piece]): in order of m, launch i on stream
 * i, grids or (kind PERSISTENT) one wave of queues each; beside: the largest shape's grid
 * first, the others persistent in the room it leaves (av_sched_beside_queues). */
typedef struct {
  const av_tile_t *tiles; /* the distinct shapes */
  int n;
  const int8_t *of; /* per piece: its shape's index */
} shape_set_t;

static int emit_shapes(const av_sched_ctx_t *ctx, av_plan_t *p, const av_sched_piece_t *pieces,
                       int32_t n, const av_sched_emit_t *how, int beside, const shape_set_t *set,
                       av_error_t *err) {
  const av_kernel_kind_t kind = how->kind;
  const int prefer_n = how->prefer_n, n_shapes = set->n;
  const av_tile_t *shapes = set->tiles;
  const int8_t *shape_of = set->of;
  /* streams in order of m: renumber shapes by their sorted position */
  int rank[MAX_SHAPES] = {0};
  for (int s = 0; s < n_shapes; s++) {
    rank[s] = 0;
    for (int o = 0; o < n_shapes; o++) rank[s] += tile_cmp(&shapes[o], &shapes[s]) < 0;
  }
  int rc = AV_OK;
  beside = beside && n_shapes > 1;
  int big = 0; /* the largest shape (rank n_shapes - 1) and its pieces */
  while (big < n_shapes - 1 && rank[big] != n_shapes - 1) big++;
  int64_t n_big = 0;
  for (int32_t i = 0; i < n; i++) n_big += shape_of[i] == big;
  av_sched_piece_t *group = kind == AV_KERNEL_PERSISTENT || beside
                                ? malloc(sizeof *group * (size_t)(n > 0 ? n : 1))
                                : NULL;
  if ((kind == AV_KERNEL_PERSISTENT || beside) && !group)
    rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  for (int pos = 0; pos < n_shapes && !rc; pos++) {
    /* launch order = stream: by m, or (beside) the largest first so its grid is placed */
    const int r = !beside ? pos : pos == 0 ? n_shapes - 1 : pos - 1;
    int s = 0;
    while (rank[s] != r) s++;
    if (kind == AV_KERNEL_PERSISTENT || (beside && s != big)) {
      /* persistent per shape: one wave of queues (or the room beside the grid), pieces
       * longest first to the least loaded */
      av_tile_t t = shapes[s];
      if (beside) rc = beside_tile(ctx, &shapes[big], n_big, t.m_rows, prefer_n, &t, err);
      int32_t ng = 0;
      for (int32_t i = 0; i < n && !rc; i++)
        if (shape_of[i] == s) group[ng++] = pieces[i];
      const int32_t q = rc ? 1
                        : beside ? av_sched_beside_queues(ctx, &shapes[big], n_big, &t)
                                 : av_sched_concurrent_queues(ctx, &t, 1);
      if (!rc) rc = av_sched_lpt_queues(group, ng, q, err);
      int32_t l = rc ? -1 : av_sched_add_launch(p, pos, &t, q, err);
      if (!rc && l < 0) rc = AV_ERR_NOMEM;
      if (!rc) sort_by_queue(group, ng, q);
      for (int32_t i = 0; i < ng && !rc; i++) rc = add_piece(ctx, p, l, &group[i], err);
      continue;
    }
    int32_t l = av_sched_add_launch(p, pos, &shapes[s], 0, err);
    if (l < 0) rc = AV_ERR_NOMEM;
    for (int32_t i = 0; i < n && !rc; i++)
      if (shape_of[i] == s) rc = add_piece(ctx, p, l, &pieces[i], err);
  }
  free(group);
  return rc;
}

int av_sched_emit_pieces(const av_sched_ctx_t *ctx, av_plan_t *p, av_sched_piece_t *pieces,
                         int32_t n, av_sched_emit_t how, av_error_t *err) {
  const av_kernel_kind_t kind = how.kind;
  const av_sched_tile_mode_t mode = how.mode;
  const int prefer_n = how.prefer_n;
  int32_t persistent_ctas = how.persistent_ctas;
  int rc;
  int32_t max_q = 1;
  int64_t n_queries = 0;
  for (int32_t i = 0; i < n; i++) {
    if (pieces[i].n_q > max_q) max_q = pieces[i].n_q;
    n_queries += pieces[i].n_q;
  }
  /* one item and one segment per piece: sized once, no regrowth */
  if (av_plan_reserve(p, n, n_queries, n))
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory adding plan items");
  if (mode == AV_SCHED_TILES_SINGLE || persistent_ctas > 0) {
    av_tile_t tile;
    if ((rc = av_sched_pick_tile(ctx, kind, av_sched_rows(ctx, max_q), prefer_n, &tile, err)))
      return rc;
    if (kind == AV_KERNEL_PERSISTENT && persistent_ctas == 0) {
      persistent_ctas = av_sched_concurrent_queues(ctx, &tile, 1);
      if ((rc = av_sched_lpt_queues(pieces, n, persistent_ctas, err))) return rc;
    }
    int32_t l = av_sched_add_launch(p, 0, &tile, persistent_ctas, err);
    if (l < 0) return AV_ERR_NOMEM;
    if (persistent_ctas > 0) sort_by_queue(pieces, n, persistent_ctas);
    for (int32_t i = 0; i < n; i++)
      if ((rc = add_piece(ctx, p, l, &pieces[i], err))) return rc;
    return AV_OK;
  }
  /* One launch per distinct tile, in order of m, each on its own stream. */
  av_tile_t menu[MAX_TILES], shapes[MAX_SHAPES];
  int n_menu = av_sched_tiles(ctx, kind, menu, MAX_TILES, err), n_shapes = 0;
  if (n_menu <= 0) return err && err->code ? err->code : AV_ERR_UNSUPPORTED;
  int8_t *shape_of = malloc((size_t)(n > 0 ? n : 1));
  if (!shape_of) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  for (int32_t i = 0; i < n; i++) {
    av_tile_t t = pick_from(menu, n_menu, av_sched_rows(ctx, pieces[i].n_q), prefer_n);
    int s = 0;
    while (s < n_shapes && tile_cmp(&shapes[s], &t) != 0) s++;
    if (s == n_shapes && n_shapes == MAX_SHAPES) {
      free(shape_of);
      return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, NULL,
                          "more than %d tile shapes in one plan", MAX_SHAPES);
    }
    if (s == n_shapes) shapes[n_shapes++] = t;
    shape_of[i] = (int8_t)s;
  }
  const shape_set_t set = {shapes, n_shapes, shape_of};
  rc = emit_shapes(ctx, p, pieces, n, &how, mode == AV_SCHED_TILES_BESIDE, &set, err);
  free(shape_of);
  return rc;
}

static int piece_longer(const void *a, const void *b) {
  const av_sched_piece_t *x = a, *y = b;
  const int64_t lx = x->end - x->begin, ly = y->end - y->begin;
  if (lx != ly) return lx > ly ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

/* A queue item's cost for the LPT rule: its tokens plus a tile's worth for the item's own
 * epilogue (a short item is not free even when its copies are hidden). */
#define LPT_ITEM_TOKENS 32

int av_sched_lpt_queues(av_sched_piece_t *pieces, int32_t n, int32_t queues, av_error_t *err) {
  if (queues < 1) return av_error_set(err, AV_ERR_RANGE, NULL, NULL, "need >= 1 queue");
  int64_t *load = calloc((size_t)queues, sizeof *load);
  int32_t *len = calloc((size_t)queues, sizeof *len);
  if (!load || !len) {
    free(load);
    free(len);
    return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  }
  qsort(pieces, (size_t)n, sizeof *pieces, piece_longer);
  for (int32_t i = 0; i < n; i++) {
    int32_t best = 0;
    for (int32_t c = 1; c < queues; c++)
      if (load[c] < load[best]) best = c;
    load[best] += pieces[i].end - pieces[i].begin + LPT_ITEM_TOKENS;
    pieces[i].cta = best;
    pieces[i].order = len[best]++;
  }
  free(load);
  free(len);
  return AV_OK;
}
