/* The engine's first-wave start cost (docs/simulator.md, "A launch's first wave"). When a
 * launch starts, the block scheduler puts its first wave on the SMs at once and every one of
 * those CTAs issues its prologue's dependent loads (queue or item record, block table, its
 * queries, its first KV tiles) at the same moment; they queue behind each other in the memory
 * system, so a CTA that starts with many others takes longer than alone, by more than its
 * share of bandwidth explains. The profile measures that extra per variant (anvil profile's
 * start step, or for older profiles its queue step: a full wave of persistent CTAs' first
 * items, 1.5-2.3 us more than one alone on the H200, costmodels/profile_start.h), and the cost
 * model hands it over for any number of CTAs starting together (av_item_cost_t.start_us,
 * linear in that number). Grid and persistent launches alike; refills start one by one as
 * slots free and pay the grid's measured refill gap (cta_dispatch_us) instead. */
#include "sim/engine_internal.h"

/* The start cost of a CTA of launch li whose first item has `rows` query rows, when n CTAs
 * start together (0 without one). */
static double start_cost(const av__eng_t *e, int32_t li, int32_t rows, int32_t n) {
  av_cost_query_t q = {.n_q = 1, .rows = rows, .kv_tokens = 32,
                       .tile = e->plan->launches[li].tile, .output = AV_OUT_PARTIAL,
                       .starting = n};
  av_item_cost_t c;
  av_costmodel_estimate(e->in->cost, &q, &c);
  return c.start_us > 0 ? c.start_us : 0;
}

void av__engine_start_setup(av__eng_t *e) {
  e->has_start = 0;
  e->n_starters = 0;
  /* only a measured cost model has one; replays never charge it */
  if (!e->cta_caps || !(e->cost_caps & AV_COST_START)) return;
  const int32_t full = e->S * e->maxc;
  for (int32_t l = 0; l < e->plan->n_launches && !e->has_start; l++)
    e->has_start = start_cost(e, l, 1, full) > 0;
}

/* Each starter's prologue ends later by its variant's cost at n_starters for its first
 * item's query rows; the SM's next prologue end is updated here (place() left it to this
 * pass). A dispatch places the CTAs of one launch in a run, mostly of equal rows, so the cost
 * is asked again only when the launch or the rows change. */
void av__engine_start_costs(av__eng_t *e) {
  const int32_t n = e->n_starters, group = av_heads_group(&e->plan->heads);
  int32_t li_prev = -1, rows_prev = -1;
  double extra = 0;
  for (int32_t k = 0; k < n; k++) {
    const int32_t sl = e->starters[k], s = sl / e->maxc;
    const int32_t li = e->sl_launch[sl], rows = e->plan->items[e->sl_job[sl]].n_q * group;
    if (li != li_prev || rows != rows_prev) {
      li_prev = li;
      rows_prev = rows;
      extra = start_cost(e, li, rows, n);
    }
    e->sl_ta[sl] += extra;
    if (e->sl_ta[sl] < e->tamin[s]) e->tamin[s] = e->sl_ta[sl];
  }
  e->n_starters = 0;
}
