/* profit_pack: PAT's pack scheduler (PAT §5–6). The prefix tree is packed into CTAs with
 * TreeHeuristic (PAT Algorithm 1) and the inter-node profit rule, each CTA gets a tile by the
 * round-up / KV-length rules of the tile selector (§5.2), CTAs longer than the mean are split
 * (§6 long-KV split) and every tile shape runs on its own stream (§6 multi-stream). The PAT
 * ablations of §8.5 (PAT-naive, PAT-compute, PAT-fixed, PAT-serial) are parameters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/sched_util.h"

/* Each policy parameter has the PAT default first and its ablation second (choice 1). */
enum { PP_DEFAULT, PP_ALTERNATIVE };
static const char *const packing_choices[] = {"profit", "naive", NULL};
static const char *const cost_choices[] = {"memory", "compute", NULL};
static const char *const tiles_choices[] = {"multi", "fixed", NULL};
static const char *const streams_choices[] = {"multi", "serial", NULL};
static const char *const share_choices[] = {"queries", "rows", NULL};

static const av_param_def_t pp_params[] = {
    {.name = "packing", .type = AV_PARAM_ENUM, .def = "profit", .choices = packing_choices,
     .help = "profit: TreeHeuristic with the PAT 5.1 profit rule; naive: every tree node its "
             "own CTA (PAT-naive)"},
    {.name = "cost", .type = AV_PARAM_ENUM, .def = "memory", .choices = cost_choices,
     .help = "memory: merge a child into its parent's CTA when 4*s >= l (PAT Alg. 1); "
             "compute: when that lowers the tile-padded FLOPs (PAT-compute)"},
    {.name = "tiles", .type = AV_PARAM_ENUM, .def = "multi", .choices = tiles_choices,
     .help = "multi: m rounded up to the rows, n by KV length (PAT 5.2); fixed: (64, 128) "
             "for every CTA (PAT-fixed)"},
    {.name = "streams", .type = AV_PARAM_ENUM, .def = "multi", .choices = streams_choices,
     .help = "multi: one stream per tile shape (PAT 6); serial: one stream, one launch per "
             "shape in sequence (PAT-serial)"},
    {.name = "long_kv_split", .type = AV_PARAM_BOOL, .def = "true",
     .help = "split CTAs whose KV is longer than the mean over all CTAs into equal parts "
             "no longer than the mean (PAT 6)"},
    {.name = "share_unit", .type = AV_PARAM_ENUM, .def = "queries", .choices = share_choices,
     .help = "what s counts in the profit rule 4*s >= l: queries (PAT Alg. 1) or query rows "
             "(queries x GQA group)"},
    {.name = "max_m_rows", .type = AV_PARAM_INT, .def = "64", .min = 1, .max = 4096,
     .help = "largest Q tile m the selector uses (PAT 5.2 avoids larger m); more rows are "
             "split into several CTAs"},
    {.name = "n_small_max", .type = AV_PARAM_INT, .def = "128", .min = 1, .max = 1e9,
     .help = "CTAs with at most this many KV tokens prefer the KV tile n = 32 (PAT 5.2)"},
    {.name = "n_mid_max", .type = AV_PARAM_INT, .def = "1024", .min = 1, .max = 1e9,
     .help = "CTAs with at most this many KV tokens (and more than n_small_max) prefer "
             "n = 64; longer ones n = 128"},
    {.name = "occupancy_aware", .type = AV_PARAM_BOOL, .def = "true",
     .help = "the KV-length rule chooses only among tiles that are performance-equivalent "
             "for the batch: bytes in flight over the resident CTAs (occupancy of the "
             "compiled variant) keep HBM as busy as the best tile (PAT 5.2 constraint 2)"},
    {.name = "equiv_tol", .type = AV_PARAM_DOUBLE, .def = "0.02", .min = 0.0, .max = 1.0,
     .help = "tiles whose estimated batch throughput is within this fraction of the best "
             "count as equivalent (PAT 5.2: equivalent tiles differ by < 2%)"},
    {.name = NULL},
};

enum { PP_MAX_TILES = 256, PP_MEMO = 16 };

typedef struct pp_cfg {
  int naive, compute, fixed, serial, split, share_rows, occ_aware;
  int64_t n_small_max, n_mid_max;
  int32_t group;           /* GQA group g */
  int32_t per_cta;         /* queries that fit the largest allowed m */
  int n_menu;
  av_tile_t menu[PP_MAX_TILES]; /* allowed tiles, sorted by (m, n, warps) */
  av_tile_t fixed_tile;
  /* Occupancy-aware equivalence (pp_rates): per menu tile the CTAs resident at once on the
   * GPU and one CTA's streaming rate (bytes/us); HBM bandwidth; the batch's CTA count
   * (0 = not yet known: assume it fills every resident slot). */
  int32_t conc[PP_MAX_TILES];
  double rate[PP_MAX_TILES];
  double hbm_Bpus, equiv_tol;
  int64_t n_ctas;
  /* The selector's recent answers: its result depends on (rows, preferred n, n_ctas) only,
   * and a batch's CTAs ask with a few such keys (pp_tile_memo). */
  int n_memo, next_memo;
  struct pp_memo {
    int32_t rows;
    int prefer_n;
    int64_t n_ctas;
    av_tile_t tile;
  } memo[PP_MEMO];
} pp_cfg_t;

/* One CTA of the packing (before the long-KV split): `n_q` queries starting at `q_begin` of
 * the membership array, over the nodes start..node (acc tokens). */
typedef struct pp_cta {
  int32_t node, q_begin, n_q;
  int64_t kv;
  int whole;               /* covers each query's whole path: output may be FINAL */
} pp_cta_t;

typedef struct pp_piece {
  int32_t cta;
  int64_t begin, end;      /* tokens of the CTA's concatenated KV */
  av_tile_t tile;
} pp_piece_t;

/* HBM throughput (bytes/us) the batch's CTAs would reach with menu tile i: the CTAs running
 * at once (the batch's, at most the tile's resident slots) times one CTA's rate, at most the
 * HBM bandwidth. This is PAT §5.2 constraint 2 (D_flight = S·C·n·h·b >= L·B) read as a rate:
 * a tile whose resident CTAs cannot keep L·B bytes in flight leaves HBM idle. */
static double pp_throughput(const pp_cfg_t *c, int i) {
  double running = c->n_ctas > 0 && c->n_ctas < c->conc[i] ? (double)c->n_ctas : c->conc[i];
  return fmin(c->hbm_Bpus, running * c->rate[i]);
}

/* PAT §5.2 tile selector. m: the smallest allowed m >= rows (round-up rule: rounding down
 * would split the queries and reload the shared KV). n: by KV length, short KV preferring a
 * small n (shorter last tile, no compute bubble) and long KV a large one (fewer resident
 * CTAs, more bandwidth each); the thresholds are parameters, the closest compiled n wins.
 * PAT picks n only among "performance-equivalent" tiles, profiled offline within a feasible
 * set that keeps HBM saturated (§5.2, constraints 1-3 and "Deriving KV tile n"). Its
 * (16, 128) tile needs m·h·b + n·h·b + m·h·b' = 44 KB of shared memory; anvil's kernel
 * double-buffers K and V, so its (16, 128) needs 140 KB and runs one CTA per H200 SM where
 * (16, 64) runs three. So with occupancy_aware the length rule chooses only among the tiles
 * of that m whose batch throughput (pp_throughput) is within equiv_tol of the best. */
static av_tile_t pp_tile_select(const pp_cfg_t *c, int32_t rows, int prefer_n) {
  int m = c->menu[c->n_menu - 1].m_rows;
  for (int i = 0; i < c->n_menu; i++)
    if (c->menu[i].m_rows >= rows) {
      m = c->menu[i].m_rows;
      break;
    }
  double xmax = 0.0;
  for (int i = 0; i < c->n_menu && c->occ_aware; i++)
    if (c->menu[i].m_rows == m) xmax = fmax(xmax, pp_throughput(c, i));
  int best = -1;
  int best_dn = 0;
  for (int i = 0; i < c->n_menu; i++) {
    if (c->menu[i].m_rows != m) continue;
    if (c->occ_aware && pp_throughput(c, i) < (1.0 - c->equiv_tol) * xmax) continue;
    int dn = abs(c->menu[i].n_tokens - prefer_n);
    if (best < 0 || dn < best_dn) best = i, best_dn = dn;
  }
  return c->menu[best];
}

static av_tile_t pp_tile(pp_cfg_t *c, int32_t rows, int64_t kv) {
  if (c->fixed) return c->fixed_tile;
  int prefer_n = kv <= c->n_small_max ? 32 : kv <= c->n_mid_max ? 64 : 128;
  for (int i = 0; i < c->n_memo; i++) {
    const struct pp_memo *e = &c->memo[i];
    if (e->rows == rows && e->prefer_n == prefer_n && e->n_ctas == c->n_ctas) return e->tile;
  }
  av_tile_t t = pp_tile_select(c, rows, prefer_n);
  c->memo[c->next_memo] = (struct pp_memo){rows, prefer_n, c->n_ctas, t};
  c->next_memo = (c->next_memo + 1) % PP_MEMO;
  if (c->n_memo < PP_MEMO) c->n_memo++;
  return t;
}

/* One CTA's streaming rate with menu tile i (bytes/us), the smaller of two estimates:
 * Little's law on the GPU spec (one K or V tile of n·h·b bytes in flight, as PAT's D_flight
 * counts it, at most what one SM keeps outstanding, over the memory latency), and the
 * marginal rate of the cost model between 4096 and 8192 KV tokens (a measured `profile`
 * model knows the real kernel's rate; `roofline` gives the fair HBM share). */
static void pp_rates(const av_sched_ctx_t *ctx, pp_cfg_t *c) {
  const av_gpu_t *g = ctx->gpu;
  const av_heads_t *h = &ctx->workload->heads;
  c->hbm_Bpus = av_gpu_hbm_bw_GBps(g) * 1e3;
  for (int i = 0; i < c->n_menu; i++) {
    const av_tile_t *t = &c->menu[i];
    c->conc[i] = av_sched_concurrent_ctas(ctx, t, 1);
    double r = INFINITY;
    if (g->mem_latency_ns > 0 && g->bytes_in_flight_per_sm > 0) {
      double tile_bytes = (double)t->n_tokens * h->head_dim * av_dtype_bytes(h->dtype);
      r = fmin(tile_bytes, g->bytes_in_flight_per_sm) / (g->mem_latency_ns * 1e-3);
    }
    if (ctx->cost) {
      av_item_cost_t a, b;
      av_cost_query_t q = {.n_q = 1, .rows = t->m_rows, .kv_tokens = 4096, .tile = *t,
                           .output = AV_OUT_PARTIAL};
      av_costmodel_estimate(ctx->cost, &q, &a);
      q.kv_tokens = 8192;
      av_costmodel_estimate(ctx->cost, &q, &b);
      if (b.time_us > a.time_us)
        r = fmin(r, (b.hbm_bytes - a.hbm_bytes) / (b.time_us - a.time_us));
    }
    c->rate[i] = r;
  }
}

/* Reads the parameters and the tile menu. The menu is fetched once per plan (not per CTA):
 * planning 256 requests must stay under 100 µs. */
static int pp_config(const av_sched_ctx_t *ctx, const av_params_t *p, pp_cfg_t *c,
                     av_error_t *err) {
  memset(c, 0, sizeof *c);
  c->naive = av_params_choice(p, "packing") == PP_ALTERNATIVE;
  c->compute = av_params_choice(p, "cost") == PP_ALTERNATIVE;
  c->fixed = av_params_choice(p, "tiles") == PP_ALTERNATIVE;
  c->serial = av_params_choice(p, "streams") == PP_ALTERNATIVE;
  c->split = av_params_bool(p, "long_kv_split");
  c->share_rows = av_params_choice(p, "share_unit") == PP_ALTERNATIVE;
  c->n_small_max = av_params_int(p, "n_small_max");
  c->n_mid_max = av_params_int(p, "n_mid_max");
  c->occ_aware = av_params_bool(p, "occupancy_aware");
  c->equiv_tol = av_params_double(p, "equiv_tol");
  c->group = av_heads_group(&ctx->workload->heads);
  int max_m = (int)av_params_int(p, "max_m_rows");
  if (c->n_small_max > c->n_mid_max)
    return av_error_set(err, AV_ERR_RANGE, NULL, "n_small_max",
                        "n_small_max (%lld) must not exceed n_mid_max (%lld)",
                        (long long)c->n_small_max, (long long)c->n_mid_max);
  av_tile_t all[PP_MAX_TILES];
  int n = av_sched_tiles(ctx, AV_KERNEL_PARTIAL, all, PP_MAX_TILES, err);
  if (n <= 0) return err && err->code ? err->code : AV_ERR_UNSUPPORTED;
  if (c->fixed) {
    /* PAT-fixed: FlashAttention's (64, 128) tile for every CTA (PAT §8.5). */
    int found = -1;
    for (int i = 0; i < n && found < 0; i++)
      if (all[i].m_rows == 64 && all[i].n_tokens == 128) found = i;
    if (found < 0 && ctx->variants)
      return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, "tiles",
                          "tiles=fixed needs a compiled (m=64, n=128) partial-attention "
                          "variant for this head dim, dtype and architecture that %s can "
                          "run", ctx->gpu->name);
    c->fixed_tile = found >= 0 ? all[found]
                               : (av_tile_t){.kind = AV_KERNEL_PARTIAL, .m_rows = 64,
                                             .n_tokens = 128, .warps = AV_SCHED_DEFAULT_WARPS};
    return av_sched_queries_per_cta(ctx, 64, &c->per_cta, err);
  }
  for (int i = 0; i < n; i++)
    if (all[i].m_rows <= max_m) c->menu[c->n_menu++] = all[i];
  if (c->n_menu == 0)
    return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, "max_m_rows",
                        "no compiled partial-attention tile has m <= max_m_rows = %d (the "
                        "smallest is m = %d)", max_m, all[0].m_rows);
  if (c->occ_aware) pp_rates(ctx, c);
  return av_sched_queries_per_cta(ctx, c->menu[c->n_menu - 1].m_rows, &c->per_cta, err);
}

/* FLOPs of n_q queries over kv tokens padded to the tiles the selector would give them: the
 * FastTree-style compute-centric cost (PAT §8.5 PAT-compute). */
static double pp_padded_flops(pp_cfg_t *c, const av_heads_t *h, int32_t n_q,
                              int64_t kv) {
  if (n_q <= 0 || kv <= 0) return 0.0;
  int32_t groups = av_sched_split_even(n_q, c->per_cta, NULL);
  int32_t small = n_q / groups, n_big = n_q % groups;
  double f = 0.0;
  for (int big = 0; big < 2; big++) {
    int32_t count = big ? n_big : groups - n_big;
    if (count == 0) continue;
    av_tile_t t = pp_tile(c, (small + big) * c->group, kv);
    int64_t kv_pad = (kv + t.n_tokens - 1) / t.n_tokens * t.n_tokens;
    f += count * av_cost_item_flops(h, t.m_rows, kv_pad);
  }
  return f;
}

/* The inter-node decision of PAT Algorithm 1 for child c of a parent whose CTA holds
 * `rem` queries over `acc_u` tokens (the parent's blocks plus those merged into it). */
static int pp_merge(pp_cfg_t *c, const av_workload_t *w, int32_t child, int32_t rem,
                    int64_t acc_u) {
  int32_t s = w->nodes[child].share;
  int64_t l = w->nodes[child].kv_len_tokens;
  if (!c->compute) {
    /* PAT §5.1 Eq. (1)-(2): Scheme 2 (merge) gains 4·s_i·d - l_u·d over Scheme 1; Algorithm 1
     * line 7 splits only when 4·|c| < len, so a tie merges. */
    int64_t s_units = c->share_rows ? (int64_t)s * c->group : s;
    return 4 * s_units >= acc_u;
  }
  /* PAT-compute: the scheme with fewer padded FLOPs; a tie keeps Scheme 1 (split). */
  const av_heads_t *h = &w->heads;
  double split = pp_padded_flops(c, h, rem, acc_u) + pp_padded_flops(c, h, s, l);
  double merge = pp_padded_flops(c, h, rem - s, acc_u) + pp_padded_flops(c, h, s, acc_u + l);
  return merge < split;
}

/* TreeHeuristic over the whole forest. Parents precede children, so one pass in index order
 * visits every parent before its children, as the recursion of Algorithm 1 does; children
 * are scanned in sibling order (Algorithm 1 line 5). merged[v]: v's queries take its parent
 * CTA's blocks (Scheme 2); start[v]: the top node of v's CTA; acc[v]: its KV tokens. */
static void pp_decide(pp_cfg_t *c, const av_workload_t *w, char *merged, int32_t *start,
                      int64_t *acc) {
  for (int32_t u = 0; u < w->n_nodes; u++) {
    const av_node_t *nu = &w->nodes[u];
    if (nu->parent < 0) {
      merged[u] = 0;
      start[u] = u;
      acc[u] = nu->kv_len_tokens;
    }
    int32_t rem = nu->share;
    for (int32_t v = nu->first_child; v >= 0; v = w->nodes[v].next_sibling) {
      int m = !c->naive && pp_merge(c, w, v, rem, acc[u]);
      merged[v] = (char)m;
      start[v] = m ? start[u] : v;
      acc[v] = (m ? acc[u] : 0) + w->nodes[v].kv_len_tokens;
      if (m) rem -= w->nodes[v].share; /* Algorithm 1 line 13: RemoveQuery */
    }
  }
}

/* Which CTA holds request r at node x: r is a query of CTA(x) when x is r's own node or the
 * child of x on r's path kept its own CTA (Scheme 1); a merged child's CTA already covers
 * x's tokens for r. Two passes (count, fill) give each node's queries in request order. */
static int32_t pp_members(const av_workload_t *w, const char *merged, int32_t *off,
                          int32_t *members) {
  int32_t n = w->n_nodes;
  if (!members) memset(off, 0, ((size_t)n + 1) * sizeof *off);
  for (int32_t r = 0; r < w->n_requests; r++) {
    int32_t y = w->request_node[r];
    int32_t x = y;
    for (;;) {
      if (x == y || !merged[y]) {
        if (members)
          members[off[x]++] = r;
        else
          off[x + 1]++;
      }
      if (w->nodes[x].parent < 0) break;
      y = x;
      x = w->nodes[x].parent;
    }
  }
  if (members) return 0;
  for (int32_t u = 0; u < n; u++) off[u + 1] += off[u];
  return off[n];
}

static int pp_tile_cmp(const av_tile_t *x, const av_tile_t *y) {
  if (x->m_rows != y->m_rows) return x->m_rows < y->m_rows ? -1 : 1;
  if (x->n_tokens != y->n_tokens) return x->n_tokens < y->n_tokens ? -1 : 1;
  return (x->warps > y->warps) - (x->warps < y->warps);
}

/* The CTAs of the packing: each node's queries cut into groups that fit the largest allowed
 * m (PAT §5.2: queries beyond one tile must go to several CTAs over the same KV). */
static int32_t pp_ctas(const pp_cfg_t *c, const av_workload_t *w, const int32_t *start,
                       const int64_t *acc, const int32_t *off, const int32_t *members,
                       pp_cta_t *ctas, int32_t *sizes) {
  int32_t n = 0;
  for (int32_t x = 0; x < w->n_nodes; x++) {
    int32_t b = x > 0 ? off[x - 1] : 0, e = off[x]; /* off was advanced by the fill pass */
    if (e == b) continue;
    int32_t groups = av_sched_split_even(e - b, c->per_cta, sizes);
    int root_start = w->nodes[start[x]].parent < 0;
    for (int32_t g = 0, q = b; g < groups; q += sizes[g], g++) {
      int whole = root_start;
      for (int32_t k = q; k < q + sizes[g] && whole; k++)
        whole = w->request_node[members[k]] == x;
      ctas[n++] = (pp_cta_t){.node = x, .q_begin = q, .n_q = sizes[g], .kv = acc[x],
                             .whole = whole};
    }
  }
  return n;
}

/* PAT §6 long-KV split: a CTA whose KV is longer than the mean KV over all CTAs is cut into
 * k = ceil(kv / mean) equal parts (token boundaries floor(kv·j/k)), so every part is at most
 * the mean. Then each part gets its tile (n chosen by the part's own length). */
static int32_t pp_pieces(pp_cfg_t *c, const pp_cta_t *ctas, int32_t n_ctas, int32_t hkv,
                         pp_piece_t *pieces) {
  double total = 0.0;
  for (int32_t i = 0; i < n_ctas; i++) total += (double)ctas[i].kv;
  int32_t n = 0;
  for (int32_t i = 0; i < n_ctas; i++) {
    int64_t kv = ctas[i].kv, k = 1;
    if (c->split && (double)kv * n_ctas > total)
      k = (int64_t)ceil((double)kv * n_ctas / total);
    for (int64_t j = 0; j < k; j++)
      pieces[n++] = (pp_piece_t){.cta = i, .begin = kv * j / k, .end = kv * (j + 1) / k};
  }
  /* The plan runs once per KV head, so the GPU sees pieces x hkv CTAs (tile equivalence). */
  c->n_ctas = (int64_t)n * hkv;
  for (int32_t i = 0; i < n; i++)
    pieces[i].tile = pp_tile(c, ctas[pieces[i].cta].n_q * c->group,
                             pieces[i].end - pieces[i].begin);
  return n;
}

/* The CTAs, their member queries and their KV pieces. */
typedef struct {
  const pp_cta_t *ctas;
  const int32_t *members;
  const pp_piece_t *pieces;
  int32_t n_pieces;
} pp_work_t;

/* Room for one path: its nodes root first and its segments (max_depth each). */
typedef struct {
  int32_t *chain;
  av_segment_t *segs;
} pp_path_buf_t;

/* PAT §6 multi-stream forward: one launch per distinct tile shape (sorted by m, n, warps),
 * each on its own stream; PAT-serial puts them all on stream 0 in that order. */
static int pp_emit(const pp_cfg_t *c, const av_workload_t *w, const int32_t *start,
                   const pp_work_t *work, const pp_path_buf_t *buf, av_plan_t *p, av_error_t *err) {
  const pp_cta_t *ctas = work->ctas;
  const int32_t *members = work->members;
  const pp_piece_t *pieces = work->pieces;
  const int32_t n_pieces = work->n_pieces;
  int32_t *chain = buf->chain;
  av_segment_t *segs = buf->segs;
  av_tile_t shapes[PP_MAX_TILES];
  int n_shapes = 0;
  for (int32_t i = 0; i < n_pieces; i++) {
    int k = 0;
    while (k < n_shapes && pp_tile_cmp(&shapes[k], &pieces[i].tile) != 0) k++;
    if (k < n_shapes) continue;
    int pos = n_shapes++;
    while (pos > 0 && pp_tile_cmp(&shapes[pos - 1], &pieces[i].tile) > 0) {
      shapes[pos] = shapes[pos - 1];
      pos--;
    }
    shapes[pos] = pieces[i].tile;
  }
  for (int s = 0; s < n_shapes; s++) {
    int32_t launch = av_sched_add_launch(p, c->serial ? 0 : s, &shapes[s], 0, err);
    if (launch < 0) return AV_ERR_NOMEM;
    for (int32_t i = 0; i < n_pieces; i++) {
      const pp_piece_t *pc = &pieces[i];
      if (pp_tile_cmp(&pc->tile, &shapes[s]) != 0) continue;
      const pp_cta_t *cta = &ctas[pc->cta];
      int32_t depth = 0;
      for (int32_t u = cta->node;; u = w->nodes[u].parent) {
        depth++;
        if (u == start[cta->node]) break;
      }
      int32_t k = depth;
      for (int32_t u = cta->node; k > 0; u = w->nodes[u].parent) chain[--k] = u;
      int32_t n_seg = av_sched_path_segments(w, chain, depth, pc->begin, pc->end, segs);
      int final = cta->whole && pc->begin == 0 && pc->end == cta->kv;
      if (av_sched_add_item(p, launch,
                            (av_item_work_t){members + cta->q_begin, cta->n_q, segs, n_seg},
                            final ? AV_OUT_FINAL : AV_OUT_PARTIAL, -1, -1, err) < 0)
        return AV_ERR_NOMEM;
    }
  }
  return AV_OK;
}

static int pp_plan(const av_sched_ctx_t *ctx, const av_params_t *params, av_plan_t **out,
                   av_error_t *err) {
  *out = NULL;
  pp_cfg_t *c = malloc(sizeof *c);
  if (!c) return av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory (profit_pack)");
  int rc = pp_config(ctx, params, c, err);
  if (rc) {
    free(c);
    return rc;
  }
  const av_workload_t *w = ctx->workload;
  size_t n = (size_t)w->n_nodes;
  /* One block for the per-node arrays; memberships are sized by a counting pass. */
  char *block = malloc(n * (sizeof(int64_t) + 3 * sizeof(int32_t) + 1) + sizeof(int32_t) +
                       (size_t)w->max_depth * (sizeof(int32_t) + sizeof(av_segment_t)));
  int32_t *members = NULL, *sizes = NULL;
  pp_cta_t *ctas = NULL;
  pp_piece_t *pieces = NULL;
  av_plan_t *p = NULL;
  if (!block) goto nomem;
  int64_t *acc = (int64_t *)block;
  av_segment_t *segs = (av_segment_t *)(acc + n);
  int32_t *start = (int32_t *)(segs + w->max_depth);
  int32_t *off = start + n;           /* n + 1 */
  int32_t *chain = off + n + 1;       /* max_depth */
  char *merged = (char *)(chain + w->max_depth);

  pp_decide(c, w, merged, start, acc);
  int32_t n_members = pp_members(w, merged, off, NULL);
  members = malloc(((size_t)n_members + 1) * sizeof *members);
  sizes = malloc(((size_t)n_members + 1) * sizeof *sizes);
  ctas = malloc(((size_t)n_members + 1) * sizeof *ctas);
  if (!members || !sizes || !ctas) goto nomem;
  pp_members(w, merged, off, members);
  int32_t n_ctas = pp_ctas(c, w, start, acc, off, members, ctas, sizes);
  /* pieces: k <= ceil(kv·n/total) <= kv·n/total + 1, so at most 2·n_ctas in all */
  pieces = malloc(((size_t)n_ctas * 2 + 1) * sizeof *pieces);
  p = av_plan_create(w, "profit_pack");
  if (!pieces || !p) goto nomem;
  int32_t n_pieces = pp_pieces(c, ctas, n_ctas, w->heads.hkv, pieces);
  const pp_work_t work = {ctas, members, pieces, n_pieces};
  const pp_path_buf_t buf = {chain, segs};
  rc = pp_emit(c, w, start, &work, &buf, p, err);
  goto done;
nomem:
  rc = av_error_set(err, AV_ERR_NOMEM, NULL, NULL, "out of memory planning profit_pack");
done:
  free(pieces);
  free(ctas);
  free(sizes);
  free(members);
  free(block);
  free(c);
  if (rc) {
    av_plan_destroy(p);
    return rc;
  }
  *out = p;
  return AV_OK;
}

/* What `auto` tries besides the defaults: PAT's ablation switches (PAT §8.4), each the
 * measured best on some batches of the validation records (docs/validation.md#results). */
static const char *const profit_pack_alternatives[] = {"cost=compute", "packing=naive",
                                                       "streams=serial", NULL};

const av_scheduler_ops_t av_sched_profit_pack = {
    .name = "profit_pack",
    .description = "PAT 5-6: prefix-tree packing by memory profit, multi-tile, long-KV split, "
                   "one stream per tile",
    .params = pp_params,
    .plan = pp_plan,
    .alternatives = profit_pack_alternatives,
};
