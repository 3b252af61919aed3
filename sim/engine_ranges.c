/* The engine's range L2 (docs/simulator.md#l2-over-ranges): a CTA reads its KV in phases,
 * each a run of lines whose L2 state is one thing: all still in the L2 (hits), or being
 * fetched by a platoon of CTAs that read the same lines at the same time. A CTA that finds
 * its next lines missing starts a run and fetches it; a CTA that finds them being fetched
 * joins that run's platoon, and the lines no member has reached yet are fetched once, their
 * misses shared equally among the members (what CTAs reading one prefix side by side do line
 * by line, leapfrogging one another). Every join re-divides the members' remaining misses. A
 * phase costs O(log runs + members), whatever its length: the cost of a plan no longer grows
 * with its KV. The per-line LRU (sim/engine_l2.c) stays as the reference model. */
#include <math.h>
#include <stdlib.h>

#include "sim/engine_internal.h"

static double dmax(double a, double b) { return a > b ? a : b; }
static double dmin(double a, double b) { return a < b ? a : b; }

static void touch(av__eng_t *e, int32_t s) {
  if (e->is_touched[s]) return;
  e->is_touched[s] = 1;
  e->touched[e->n_touched++] = s;
}

/* The share of its current phase slot sl has moved: its SM's byte clock W against the
 * phase's start (a slot still in its prologue has not started). */
static double progress(const av__eng_t *e, int64_t sl) {
  const av__l2_phase_t *ph = &e->ph[sl];
  if (e->sl_state[sl] != 2 || e->sl_mt[sl] >= AV__BIG || ph->bytes <= 0) return 0;
  const double phi = (e->W[sl / e->maxc] - ph->W0) / ph->bytes;
  return phi < 0 ? 0 : phi > 1 ? 1 : phi;
}

static double position(const av__eng_t *e, int64_t sl) {
  const av__l2_phase_t *ph = &e->ph[sl];
  return ph->tok0 + progress(e, sl) * (ph->tok1 - ph->tok0);
}

/* Sets slot sl's phase to its tokens [pos, tok1) of which miss_tok come from HBM, with
 * `other` non-KV bytes, from now on: its bytes, HBM share and miss-clock rate, and for an
 * active slot its byte target and its SM's sums (flush_touched finishes the SM). */
static void set_phase(av__eng_t *e, int64_t sl, double pos, double tok1, double miss_tok,
                      double other) {
  av__l2_phase_t *ph = &e->ph[sl];
  const int32_t s = (int32_t)(sl / e->maxc);
  const double tb = e->token_bytes, c = e->cta_caps ? 1.0 : e->l2_cost;
  const double kv = dmax(tok1 - pos, 0) * tb, miss = dmin(dmax(miss_tok, 0) * tb, kv);
  const double hit = kv - miss, bytes = other + miss + hit * c;
  const double hbm = other + miss + (e->cta_caps ? 0 : hit * e->l2_cost);
  const double h = bytes > 0 ? hbm / bytes : 1, mf = bytes > 0 ? miss / bytes : 0;
  e->hbm_bytes += miss;
  e->l2_bytes += hit;
  const int active = e->sl_state[sl] == 2 && e->sl_mt[sl] < AV__BIG;
  if (active) {
    e->sl_mt[sl] = e->W[s] + bytes;
    e->hsum[s] += h - e->sl_h[sl];
    e->msum[s] += mf - ph->mf;
    touch(e, s);
  } else {
    e->sl_bytes[sl] = bytes;  /* the byte target is set when its prologue ends */
  }
  ph->W0 = active ? e->W[s] : 0;
  ph->bytes = bytes;
  ph->tok0 = pos;
  ph->tok1 = tok1;
  ph->kv = kv;
  ph->miss = miss;
  ph->other = other;
  ph->mf = mf;
  e->sl_h[sl] = h;
}

/* The first token behind run r's front the L2 still holds: the front passed token x at the
 * clock interpolated between the run's start (m_lo) and now, and lines read longer ago than
 * the L2's depth are gone (sim/l2_depth.c). */
static double held_from(const av__eng_t *e, const av__run_t *r) {
  const double span = r->front_tok - r->start_tok, lt = e->line_tokens;
  if (span <= lt) return r->start_tok;
  const av__runs_t *t = &e->runs;
#define STAMP(x) (r->m_lo + ((x) - r->start_tok) / span * (e->m_clk - r->m_lo))
  if (av__depth_held(&t->depth, STAMP(r->start_tok), e->m_clk, t->cap_bytes, t->line_bytes))
    return r->start_tok;
  double lo = r->start_tok, hi = r->front_tok;  /* lo dropped, hi held */
  while (hi - lo > lt) {
    const double mid = 0.5 * (lo + hi);
    if (av__depth_held(&t->depth, STAMP(mid), e->m_clk, t->cap_bytes, t->line_bytes)) hi = mid;
    else lo = mid;
  }
#undef STAMP
  return hi;
}

/* Sorts a platoon's members with cmp: insertion for the usual handful, heapsort for a large
 * cohort (in place: glibc's qsort may allocate, and the event loop allocates nothing). */
static void sift(av__member_t *m, int32_t i, int32_t n, int (*cmp)(const void *, const void *)) {
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && cmp(&m[c + 1], &m[c]) > 0) c++;
    if (cmp(&m[c], &m[i]) <= 0) return;
    const av__member_t x = m[i];
    m[i] = m[c];
    m[c] = x;
    i = c;
  }
}

static void sort_members(av__member_t *m, int32_t k, int (*cmp)(const void *, const void *)) {
  if (k > 16) {
    for (int32_t i = k / 2 - 1; i >= 0; i--) sift(m, i, k, cmp);
    for (int32_t n = k - 1; n > 0; n--) {
      const av__member_t x = m[0];
      m[0] = m[n];
      m[n] = x;
      sift(m, 0, n, cmp);
    }
    return;
  }
  for (int32_t i = 1; i < k; i++) {
    const av__member_t x = m[i];
    int32_t j = i;
    for (; j > 0 && cmp(&m[j - 1], &x) > 0; j--) m[j] = m[j - 1];
    m[j] = x;
  }
}

static int cmp_pos(const void *a, const void *b) {
  const double x = ((const av__member_t *)a)->pos, y = ((const av__member_t *)b)->pos;
  return x < y ? -1 : x > y;
}

/* Members behind `held` (the first token behind the front the L2 still holds) fetch the
 * dropped tokens again, once: a token is missed by the first of them to reach it and hit by
 * those after, so each token's miss is shared by the members still to read it. Sets each
 * member's .again (tokens), sorting m by position. */
static void lagging_misses(av__eng_t *e, av__member_t *m, int32_t k, double held) {
  (void)e;
  sort_members(m, k, cmp_pos);
  int32_t j = 0;
  while (j < k && m[j].pos < held) j++;
  double acc = 0;
  for (int32_t i = k - 1; i >= 0; i--) {
    if (i < j) {
      const double next = i + 1 < j ? m[i + 1].pos : held;
      acc += (next - m[i].pos) / (i + 1);
    }
    m[i].again = i < j ? dmin(acc, dmax(dmin(held, m[i].end) - m[i].pos, 0)) : 0;
  }
}

static int cmp_end(const void *a, const void *b) {
  const double x = ((const av__member_t *)a)->end, y = ((const av__member_t *)b)->end;
  return x < y ? -1 : x > y;
}

/* Re-divides run ri's unread tokens among its members. Every token before the front has
 * been read; a token x after it is read by every member whose span still reaches x, which
 * share its miss equally: a member's misses are the integral of 1 / cover(x) from the front
 * to its end, one sweep over the members sorted by their ends. The rest of each member's
 * phase is re-set from where it is now. */
static void redivide(av__eng_t *e, int32_t ri) {
  av__run_t *r = &e->runs.r[ri];
  av__member_t *m = e->members;
  int32_t k = 0;
  double front = r->front_tok;
  for (int32_t x = r->first; x >= 0; x = e->ph[x].next) {
    const av__l2_phase_t *px = &e->ph[x];
    m[k].slot = x;
    m[k].pos = position(e, x);
    m[k].end = px->tok1;
    m[k].owed = 0;
    r->paid += (px->miss / e->token_bytes - px->extra) * progress(e, x);
    front = dmax(front, m[k++].pos);
  }
  r->front_tok = front;
  lagging_misses(e, m, k, held_from(e, r));
  sort_members(m, k, cmp_end);
  /* The shares spread each member's misses evenly over its phase, so members that passed
   * the front at another pace than their share paid for may leave tokens the front passed
   * unpaid: the members fetch them in proportion to what each still reads, so every token is
   * fetched (what they have not by the next re-division is owed again then). */
  const double owed = dmax(front - r->start_tok - r->paid, 0);
  double left = 0;
  for (int32_t i = 0; i < k; i++) left += dmax(m[i].end - m[i].pos, 0);
  for (int32_t i = 0; i < k; i++)
    m[i].owed = left > 0 ? owed * dmax(m[i].end - m[i].pos, 0) / left : owed / k;
  double acc = 0, prev = front;
  for (int32_t i = 0; i < k; i++) {
    const double end = dmax(m[i].end, front);
    acc += (end - prev) / (k - i);
    prev = end;
    const int64_t x = m[i].slot;
    const av__l2_phase_t *px = &e->ph[x];
    const double rem = 1 - progress(e, x);  /* share of the phase still to go */
    e->hbm_bytes -= px->miss * rem;
    e->l2_bytes -= (px->kv - px->miss) * rem;
    set_phase(e, x, m[i].pos, px->tok1, acc + m[i].owed + m[i].again, px->other * rem);
    e->ph[x].extra = m[i].again;
  }
}

/* Slot sl joins run ri's platoon to read its tokens [tok0, tok1). Its share is settled at
 * the end of the event (av__ranges_settle), once for all who join the run in it (a wave of
 * CTAs starting together joins a prefix's run at once); until then it is charged, as
 * provisional, the tokens it reads past the front. */
static void join(av__eng_t *e, int64_t sl, int32_t ri, double tok0, double tok1, double other) {
  av__run_t *r = &e->runs.r[ri];
  av__l2_phase_t *ph = &e->ph[sl];
  ph->bytes = ph->kv = ph->miss = ph->extra = 0;  /* nothing accounted yet */
  set_phase(e, sl, tok0, tok1, dmax(tok1 - dmax(r->front_tok, tok0), 0), other);
  ph->run = ri;
  ph->next = r->first;
  r->first = (int32_t)sl;
  r->n_members++;
  if (!r->unsettled) {
    r->unsettled = 1;
    e->unsettled[e->n_unsettled++] = ri;
  }
}

void av__ranges_settle(av__eng_t *e) {
  for (int32_t i = 0; i < e->n_unsettled; i++) {
    av__run_t *r = &e->runs.r[e->unsettled[i]];
    r->unsettled = 0;
    if (r->first >= 0) redivide(e, e->unsettled[i]);
  }
  e->n_unsettled = 0;
}

/* Member x of a run stops its phase at token `at` (> where it is): the rest of its tokens
 * are read in a later phase (its cursor goes back there). */
static void cut_member(av__eng_t *e, int64_t x, int64_t at) {
  av__l2_phase_t *px = &e->ph[x];
  const double rem = 1 - progress(e, x), pos = position(e, x);
  e->runs.r[px->run].paid += (px->miss / e->token_bytes - px->extra) * (1 - rem);
  e->hbm_bytes -= px->miss * rem;
  e->l2_bytes -= (px->kv - px->miss) * rem;
  set_phase(e, x, pos, (double)at, 0, px->other * rem);  /* redivide sets its misses */
  px->extra = 0;
  av__l2_cursor_t *c = &e->sl_cur[x];
  c->seg = px->seg;
  c->s0 = px->s0;
  c->s1 = px->s1;
  c->key = px->key << 32;
  c->tok = at;
  px->end = at;
}

/* Run ri splits at token b (no member has read past it): members reading beyond b stop
 * there and the tokens from b become a run of their own, which they rejoin when they reach
 * it. */
static void split_run(av__eng_t *e, int32_t ri, int64_t b) {
  av__run_t *r = &e->runs.r[ri];
  for (int32_t x = r->first; x >= 0; x = e->ph[x].next)
    if (e->ph[x].tok1 > (double)b) cut_member(e, x, b);
  r->hi = b;
  redivide(e, ri);
}

/* Where the held tokens from b (in done run ri, held from there) end: across adjacent done
 * runs held whole, up to stop. */
static int64_t hit_end(const av__eng_t *e, uint64_t key, int32_t ri, int64_t stop) {
  int64_t end = e->runs.r[ri].hi;
  while (end < stop) {
    const int32_t n = av__runs_find(&e->runs, key, end);
    if (n < 0 || e->runs.r[n].first >= 0 || av__runs_present_from(&e->runs, n, e->m_clk) > end)
      break;
    end = e->runs.r[n].hi;
  }
  return end < stop ? end : stop;
}

/* Where the missing tokens from b end: the next token of key held or being read. */
static int64_t miss_end(const av__eng_t *e, uint64_t key, int64_t b, int64_t stop,
                        int *dead) {
  for (int64_t from = b;;) {
    const int32_t n = av__runs_next(&e->runs, key, from);
    if (n < 0 || e->runs.r[n].lo >= stop) return stop;
    const av__run_t *r = &e->runs.r[n];
    if (r->first >= 0) return r->lo;
    const int64_t held = av__runs_present_from(&e->runs, n, e->m_clk);
    if (held > r->lo) *dead = 1;  /* its evicted head lies in the missing span */
    if (held < r->hi) return held < stop ? held : stop;
    from = r->lo;  /* evicted whole: look past it */
  }
}

/* Tokens [lo, hi) were read again from clock m0 to now: one done run, unless part of them
 * is being fetched anew (evicted meanwhile), which then keeps what it has. */
static void refresh(av__eng_t *e, uint64_t key, int64_t lo, int64_t hi, double m0) {
  int32_t i = av__runs_find(&e->runs, key, lo);
  if (i >= 0 && e->runs.r[i].first < 0 && e->runs.r[i].lo == lo && e->runs.r[i].hi == hi) {
    av__runs_note_reread(&e->runs, key, lo, hi, e->m_clk);  /* the whole of one run: */
    e->runs.r[i].m_lo = m0;                                  /* re-stamped in place */
    e->runs.r[i].m_hi = e->m_clk;
    return;
  }
  if (i < 0) i = av__runs_next(&e->runs, key, lo);
  for (; i >= 0 && e->runs.r[i].lo < hi; i = av__runs_next(&e->runs, key, e->runs.r[i].lo))
    if (e->runs.r[i].first >= 0) return;
  av__runs_note_reread(&e->runs, key, lo, hi, e->m_clk);
  av__runs_clear(&e->runs, key, lo, hi, e->m_clk);
  const int32_t j = av__runs_insert(&e->runs, key, lo, hi, e->m_clk);
  if (j < 0) return;
  e->runs.r[j].m_lo = m0;
  e->runs.r[j].m_hi = e->m_clk;
}

/* Fetches the missing tokens [b, end): a new run with slot sl as its first member (or,
 * with the run pool exhausted, a plain miss phase). */
static void start_run(av__eng_t *e, int64_t sl, uint64_t key, int64_t b, int64_t end,
                      double other, int dead) {
  const double tok0 = (double)b, tok1 = (double)end;
  if (dead) av__runs_clear(&e->runs, key, b, end, e->m_clk);  /* evicted runs in the way */
  const int32_t ri = av__runs_insert(&e->runs, key, b, end, e->m_clk);
  if (ri < 0) {
    set_phase(e, sl, tok0, tok1, tok1 - tok0, other);
    return;
  }
  av__run_t *r = &e->runs.r[ri];
  r->m_lo = r->m_hi = e->m_clk;
  r->front_tok = r->start_tok = tok0;
  r->first = -1;
  r->n_members = 0;
  e->ph[sl].bytes = e->ph[sl].kv = e->ph[sl].miss = 0;
  join(e, sl, ri, tok0, tok1, other);
}

double av__ranges_phase(av__eng_t *e, int64_t sl, double other, double *hbm_out) {
  av__l2_cursor_t *c = &e->sl_cur[sl];
  av__l2_phase_t *ph = &e->ph[sl];
  const int64_t b = c->tok, stop = c->s1;
  const uint64_t key = c->key >> 32;
  ph->run = ph->next = -1;
  ph->hit = 0;
  av__depth_sync(&e->runs.depth, e->m_clk);
  if (c->seg == AV__NO_PHASE) {  /* no KV left: the job's other bytes alone */
    ph->key = 0;
    ph->begin = ph->end = 0;
    set_phase(e, sl, 0, 0, 0, other);
    *hbm_out = ph->bytes * e->sl_h[sl];
    return ph->bytes;
  }
  const av_workload_t *w = e->in->workload;
  const int32_t node = (int32_t)(key % (uint64_t)e->plan->n_nodes);
  if (e->box_rows == 0 && w->node_req_offsets[node + 1] - w->node_req_offsets[node] == 1) {
    /* one request's own KV: an exact plan reads each of its tokens once, so nothing else
     * will look for them and they need no run (the miss clock still counts them) */
    ph->key = key;
    ph->begin = b;
    ph->end = stop;
    set_phase(e, sl, (double)b, (double)stop, (double)(stop - b), other);
    av__engine_seg_enter(e, sl, &e->plan->items[e->sl_job[sl]], c->seg + 1);
    *hbm_out = ph->bytes * e->sl_h[sl];
    return ph->bytes;
  }
  const int32_t ri = av__runs_find(&e->runs, key, b);
  const int reading = ri >= 0 && e->runs.r[ri].first >= 0;
  const int64_t held = ri >= 0 && !reading ? av__runs_present_from(&e->runs, ri, e->m_clk) : -1;
  int64_t end;
  int dead = ri >= 0;  /* b lies in an evicted part of a done run */
  if (reading) end = e->runs.r[ri].hi < stop ? e->runs.r[ri].hi : stop;
  else if (ri >= 0 && b >= held) end = hit_end(e, key, ri, stop);
  else if (ri >= 0 && held < e->runs.r[ri].hi) end = held < stop ? held : stop;
  else end = miss_end(e, key, b, stop, &dead);
  ph->key = key;
  ph->seg = c->seg;
  ph->s0 = c->s0;
  ph->s1 = c->s1;
  ph->begin = b;
  ph->end = end;
  ph->m0 = e->m_clk;
  if (reading) {
    av__run_t *r = &e->runs.r[ri];
    double front = r->front_tok;
    for (int32_t x = r->first; x >= 0; x = e->ph[x].next) front = dmax(front, position(e, x));
    if (b > r->lo && front < (double)b) {
      /* it starts beyond what the platoon has read: the tokens from b are its own run,
       * which the members reach later */
      split_run(e, ri, b);
      start_run(e, sl, key, b, end, other, 0);
    } else {
      join(e, sl, ri, (double)b, (double)end, other);
    }
  } else if (ri >= 0 && b >= held) {
    set_phase(e, sl, (double)b, (double)end, 0, other);
    ph->hit = 1;
  } else {
    start_run(e, sl, key, b, end, other, dead);
  }
  if (end < stop) c->tok = end;
  else av__engine_seg_enter(e, sl, &e->plan->items[e->sl_job[sl]], c->seg + 1);
  *hbm_out = ph->bytes * e->sl_h[sl];
  return ph->bytes;
}

void av__ranges_phase_end(av__eng_t *e, int64_t sl) {
  av__l2_phase_t *ph = &e->ph[sl];
  av__depth_sync(&e->runs.depth, e->m_clk);
  if (ph->run >= 0) {
    av__run_t *r = &e->runs.r[ph->run];
    int32_t *link = &r->first;
    while (*link != (int32_t)sl) link = &e->ph[*link].next;
    *link = ph->next;
    r->front_tok = dmax(r->front_tok, ph->tok1);
    r->paid += ph->miss / e->token_bytes - ph->extra;
    if (--r->n_members == 0) {
      /* done: its tokens were read from its start to now; those no member reached are not
       * in the L2 */
      r->first = -1;
      r->m_hi = e->m_clk;
      const int64_t read_hi = (int64_t)ceil(r->front_tok);
      if (read_hi > r->lo && read_hi < r->hi) r->hi = read_hi;
    }
  } else if (ph->hit) {
    refresh(e, ph->key, ph->begin, ph->end, ph->m0);
  }
  ph->run = ph->next = -1;
  ph->hit = 0;
}
