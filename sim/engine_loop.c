/* The engine's event loop: a fluid (processor-sharing) model of CTAs moving bytes and FLOPs,
 * advanced from event to event. Events are launch starts (a binary heap: stream order,
 * launch overhead), CTA prologue ends, and the moments a CTA's bytes or FLOPs run out; at
 * each one every SM is advanced at its current rates, finished CTAs free their resources,
 * waiting CTAs are dispatched, and rates are recomputed. Nothing here allocates.
 *
 * Per-CTA rates are equal for all memory-active CTAs of one SM (the fair share and the
 * in-flight bound depend only on the SM's count), so each SM keeps one "served bytes" clock
 * W and one "served FLOPs" clock PHI; a CTA's bytes are done when W reaches the target set at
 * its activation. An event costs O(SMs + CTAs on the SMs that changed). docs/simulator.md
 * gives the equations. */
#include <stdint.h>

#include "sim/engine_internal.h"

#define BIG AV__BIG
#define EPS_US 1e-6     /* events closer than a picosecond are one event */

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

/* --- launch events -------------------------------------------------------------------- */
/* Ties break by launch index so the order is a pure function of the plan. */
static int heap_less(const av__eng_t *e, int32_t i, double t, int32_t l) {
  return e->heap_t[i] < t || (e->heap_t[i] == t && e->heap_l[i] < l);
}

static void heap_push(av__eng_t *e, double t, int32_t l) {
  int32_t i = e->heap_n++;
  while (i > 0) {
    int32_t p = (i - 1) / 2;
    if (heap_less(e, p, t, l)) break;
    e->heap_t[i] = e->heap_t[p];
    e->heap_l[i] = e->heap_l[p];
    i = p;
  }
  e->heap_t[i] = t;
  e->heap_l[i] = l;
}

static int32_t heap_pop(av__eng_t *e) {
  int32_t top = e->heap_l[0];
  int32_t n = --e->heap_n;
  double t = e->heap_t[n];
  int32_t l = e->heap_l[n], i = 0;
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_less(e, c + 1, e->heap_t[c], e->heap_l[c])) c++;
    if (!heap_less(e, c, t, l)) break;
    e->heap_t[i] = e->heap_t[c];
    e->heap_l[i] = e->heap_l[c];
    i = c;
  }
  e->heap_t[i] = t;
  e->heap_l[i] = l;
  return top;
}

static void mark_dirty(av__eng_t *e, int32_t s) {
  if (e->is_dirty[s]) return;
  e->is_dirty[s] = 1;
  e->dirty[e->n_dirty++] = s;
}

/* A launch finished: its stream's next launch may start (it was issued by the host at
 * issue_us, so it starts at the later of the two, plus the GPU's measured gap between two
 * kernels of one stream: the finished kernel's completion is signalled before the next one's
 * first CTA runs, stream_gap_us, 0 in a datasheet spec); the merge launch waits for all partial
 * launches (the executor joins the streams before merging) and the join itself. */
static void launch_end(av__eng_t *e, int32_t li, double t) {
  av__eng_launch_t *L = &e->L[li];
  L->end_us = t;
  e->launches_left--;
  if (L->is_merge) return;
  if (L->next_on_stream >= 0) {
    av__eng_launch_t *n = &e->L[L->next_on_stream];
    heap_push(e, dmax(n->issue_us, t + e->lc.stream_gap_us), L->next_on_stream);
  }
  if (--e->partial_left == 0 && e->has_merge) {
    /* the join (events across the streams) and the merge's launch take the GPU's measured
     * join_overhead_us after the last partial CTA, whenever the host issued it */
    int32_t m = e->n_launches - 1;
    heap_push(e, dmax(e->L[m].issue_us, t + e->lc.join_us), m);
  }
}

static void launch_start(av__eng_t *e, int32_t li, double t) {
  av__eng_launch_t *L = &e->L[li];
  L->start_us = t;
  if (L->total == 0) {
    launch_end(e, li, t);
    return;
  }
  e->active[e->n_active++] = li;
  for (int32_t s = 0; s < e->S; s++) mark_dirty(e, s);
}

/* --- jobs: one item (or merge CTA) of one head on one slot ------------------------------ */
static void job_begin(av__eng_t *e, int32_t sl, double t, int queued) {
  const av__eng_launch_t *L = &e->L[e->sl_launch[sl]];
  int32_t job = e->sl_job[sl], head = e->sl_head[sl];
  double fixed = e->fixed_us, bytes = 0, flops = 0, cap = e->merge_cap, h = 1;
  e->sl_cur[sl].seg = AV__NO_PHASE;
  if (job < 0) {
    /* an empty persistent CTA: starts, finds no work, exits */
    fixed = e->empty_us;
  } else if (L->is_merge) {
    if (e->in->merge_durations_us) {
      fixed = e->in->merge_durations_us[(int64_t)job * e->hkv + head];
    } else if (e->in->merge_duration_us > 0) {
      fixed = e->in->merge_duration_us;
    } else {
      bytes = e->merge_bytes[job];
      e->hbm_bytes += bytes;
      if (e->merge_measured) {
        fixed = e->merge_fixed;
        cap = e->merge_capj[job];
      }
    }
  } else if (e->in->durations_us) {
    fixed = e->in->durations_us[(int64_t)job * e->hkv + head];
  } else {
    double hbm;
    if (e->l2.cap > 0 || e->l2_ranges) av__engine_seg_enter(e, sl, &e->plan->items[job], 0);
    bytes = av__engine_kv_phase(e, sl, e->item_other_bytes[job], &hbm);
    /* L2 hits take the CTA's time (its rate bound) but not HBM's: only this share of its
     * bytes competes for HBM bandwidth (queries, outputs and partial states included) */
    h = bytes > 0 ? hbm / bytes : 1;
    e->hbm_bytes += e->item_other_bytes[job];
    flops = e->item_flops[job];
    if (e->cta_caps) {
      fixed = e->item_fixed[job];
      cap = e->item_cap[job];
    }
  }
  /* A grid CTA that refills a slot (placed after its launch started) also holds the slot
   * while the block scheduler starts it and it reads its item record, which the kernel's
   * trace and the profile's C(n_q, n) do not see: the refill gap anvil profile measures. A
   * launch's first wave starts at once, with no such gap in the traces (its CTAs start
   * within 0.2 us of the launch's first, docs/simulator.md#grids-and-dispatch), and pays the
   * first-wave start cost instead (sim/engine_start.c). A persistent CTA is not charged it,
   * and the merge's trace covers its start. */
  if (job >= 0 && !L->is_merge && !L->persistent && t > L->start_us)
    fixed += e->in->gpu->cta_dispatch_us;
  e->sl_cap[sl] = cap;
  e->sl_h[sl] = h;
  e->sl_state[sl] = 1;
  e->sl_t0[sl] = t;
  e->sl_ta[sl] = t + fixed;
  e->sl_nb[sl] = 0;
  /* A queued item of a persistent CTA (not its first): the kernel keeps its copies S - 1
   * tiles ahead across item boundaries (kernels/attn_stream.cuh), so the item's fixed work
   * overlaps its bytes instead of preceding them. It streams from now on and ends when its
   * bytes are done and no earlier than its own pipeline allows (fixed + bytes at its lone
   * bound slowed by the SM's co-residency, set at activation): alone that is C(n_q, n) as
   * before; when HBM is the bottleneck the fixed part hides under the wait. Measured by
   * anvil profile's queue step (loaded_next_us, docs/validation.md#profiling). */
  if (queued && e->cta_caps && bytes > 0 && !e->in->durations_us) {
    e->sl_nb[sl] = fixed;
    e->sl_ta[sl] = t;
  }
  e->sl_bytes[sl] = bytes;
  e->sl_flops[sl] = flops;
  e->sl_mt[sl] = BIG;
  e->sl_ft[sl] = BIG;
}

/* SM s now has n memory-active CTAs: their common rate bound is the SM's in-flight bytes
 * shared (C / n), or with per-CTA bounds their mean (co-resident CTAs of different launches
 * are held to one rate per SM, which keeps an event O(SMs)), divided by the measured
 * co-residency slowdown at n (sbar, 1 without curves). */
static void set_n_mem(av__eng_t *e, int32_t s, int32_t n) {
  e->n_mem_total += n - e->n_mem[s];
  e->n_mem[s] = n;
  if (n == 0) e->capsum[s] = 0;  /* no drift from adding and removing bounds */
  double cn = e->cta_caps ? e->capsum[s] / n / e->sbar[s] : e->C / n;
  e->Cn[s] = n > 0 ? cn : 0;
  e->nC[s] = n > 0 ? 1 / cn : BIG;
}

static void set_n_cmp(av__eng_t *e, int32_t s, int32_t n) {
  e->n_cmp[s] = n;
  e->phi[s] = n > 0 ? e->T / n : 0;
  e->iphi[s] = n > 0 ? n / e->T : BIG;
}

static void record(av__eng_t *e, int32_t sl, int32_t s, double t) {
  if (!e->tl || e->sl_job[sl] < 0) return;
  const av__eng_launch_t *L = &e->L[e->sl_launch[sl]];
  av_cta_event_t *ev = &e->tl->ev[e->tl->n++];
  ev->item = L->is_merge ? -1 : e->sl_job[sl];
  ev->launch = e->sl_launch[sl];
  ev->head = e->sl_head[sl];
  ev->sm = s;
  ev->start_us = e->sl_t0[sl];
  ev->end_us = t;
}

/* The busy list stays in SM order, so SMs due at one event are handled in the order of
 * their index whatever became busy first (the per-line L2's hits depend on that order). An
 * SM enters or leaves it only when its first CTA arrives or its last leaves. */
static void busy_enter(av__eng_t *e, int32_t s) {
  int32_t i = e->n_busy++;
  for (; i > 0 && e->busy[i - 1] > s; i--) e->busy[i] = e->busy[i - 1];
  e->busy[i] = s;
}

static void busy_leave(av__eng_t *e, int32_t s) {
  int32_t i = 0;
  while (e->busy[i] != s) i++;
  for (--e->n_busy; i < e->n_busy; i++) e->busy[i] = e->busy[i + 1];
}

/* The job on slot sl is done: record it, then run the next item of a persistent CTA's queue
 * on the same slot, or free the CTA's resources. */
static void job_end(av__eng_t *e, int32_t sl, int32_t s, double t) {
  record(e, sl, s, t);
  int32_t li = e->sl_launch[sl];
  av__eng_launch_t *L = &e->L[li];
  if (L->persistent && ++e->sl_qpos[sl] < e->sl_qend[sl]) {
    e->sl_job[sl] = L->queue[e->sl_qpos[sl]];
    job_begin(e, sl, t, 1);
    return;
  }
  e->sl_state[sl] = 0;
  uint32_t *used = &e->res_used[(int64_t)s * AV__RES_N];
  for (int r = 0; r < AV__RES_N; r++) used[r] -= L->res[r];
  if (--e->n_res[s] == 0) {
    e->busy_us[s] += t - e->busy_since[s];
    busy_leave(e, s);
  }
  mark_dirty(e, s);
  if (++L->done_ctas == L->total) launch_end(e, li, t);
}

/* The mean, over SM s's n memory-active CTAs, of their variants' co-residency slowdown at
 * n (CTAs of different launches may share an SM; with one launch it is curve(n) itself).
 * O(slots on the SM), and only when the SM's memory-active set changed. */
static double mean_curve(const av__eng_t *e, int32_t s, int32_t n) {
  if (n <= 1) return 1.0;
  const int64_t base = (int64_t)s * e->maxc;
  const int32_t K = e->maxc + 1, k = n < K ? n : K - 1;
  double sum = 0;
  for (int32_t j = 0; j < e->hw[s]; j++) {
    int64_t sl = base + j;
    if (e->sl_state[sl] == 2 && e->sl_mt[sl] < BIG)
      sum += e->curve[(int64_t)e->sl_launch[sl] * K + k];
  }
  return sum / n;
}

/* Slot sl's prologue ended at t: its bytes and FLOPs start moving (SM s's counts and sums
 * gain it). */
static void activate(av__eng_t *e, int64_t sl, int32_t s, double t, int32_t *n_mem,
                     int32_t *n_cmp, double *capsum) {
  e->sl_state[sl] = 2;
  if (e->sl_bytes[sl] > 0) {
    e->sl_mt[sl] = e->W[s] + e->sl_bytes[sl];
    (*n_mem)++;
    if (e->sl_nb[sl] > 0) {
      const int32_t K = e->maxc + 1, k = *n_mem < K ? *n_mem : K - 1;
      double sk = e->has_curve ? e->curve[(int64_t)e->sl_launch[sl] * K + k] : 1.0;
      const int32_t job = e->sl_job[sl];  /* all its phases: hits take a byte's time */
      const double all = (double)e->item_kv_tokens[job] * e->token_bytes +
                         e->item_other_bytes[job];
      e->sl_ta[sl] = t + e->sl_nb[sl] + all * sk / e->sl_cap[sl];
    } else {
      e->sl_ta[sl] = 0;
    }
    *capsum += e->sl_cap[sl];
    e->hsum[s] += e->sl_h[sl];
    if (e->l2_ranges) {
      e->ph[sl].W0 = e->W[s];
      e->msum[s] += e->ph[sl].mf;
    }
  }
  if (e->sl_flops[sl] > 0) {
    e->sl_ft[sl] = e->PHI[s] + e->sl_flops[sl];
    (*n_cmp)++;
  }
}

/* Advances the slots of SM s that are due at t: prologues end, bytes and FLOPs run out. */
static void process_sm(av__eng_t *e, int32_t s, double t) {
  const int64_t base = (int64_t)s * e->maxc;
  const double tol = 4 * EPS_US;
  int32_t n_mem = e->n_mem[s], n_cmp = e->n_cmp[s];
  double capsum = e->capsum[s];
  const double hsum0 = e->hsum[s];  /* range phases also move other slots' shares */
  for (int32_t j = 0; j < e->hw[s]; j++) {
    int64_t sl = base + j;
    if (e->sl_state[sl] == 0) continue;
    if (e->sl_state[sl] == 3) {
      /* bytes done, own pipeline not yet: handled below */
    } else if (e->sl_state[sl] == 1) {
      if (e->sl_ta[sl] > t + tol) continue;
      activate(e, sl, s, t, &n_mem, &n_cmp, &capsum);
    } else {
      const int bytes_done = e->sl_mt[sl] < BIG && (e->sl_mt[sl] - e->W[s]) * e->irho[s] <= tol;
      if (bytes_done && e->l2_ranges) av__ranges_phase_end(e, sl);
      if (bytes_done && e->sl_cur[sl].seg != AV__NO_PHASE) {
        /* the phase's bytes are done: the next phase's lines go through the L2 now */
        double hbm, bytes;
        if (e->l2_ranges) {
          bytes = av__ranges_phase(e, sl, 0, &hbm);  /* sets the target and the sums */
        } else {
          bytes = av__engine_kv_phase(e, sl, 0, &hbm);
          e->hsum[s] -= e->sl_h[sl];
          e->sl_h[sl] = bytes > 0 ? hbm / bytes : 1;
          e->hsum[s] += e->sl_h[sl];
          e->sl_mt[sl] += bytes;
        }
      }
      if (e->sl_mt[sl] < BIG && (e->sl_mt[sl] - e->W[s]) * e->irho[s] <= tol) {
        e->sl_mt[sl] = BIG;
        n_mem--;
        capsum -= e->sl_cap[sl];
        e->hsum[s] -= e->sl_h[sl];
        if (e->l2_ranges) {
          e->msum[s] -= e->ph[sl].mf;
          e->ph[sl].mf = 0;
        }
      }
      if (e->sl_ft[sl] < BIG && (e->sl_ft[sl] - e->PHI[s]) * e->iphi[s] <= tol) {
        e->sl_ft[sl] = BIG;
        n_cmp--;
      }
    }
    if (e->sl_state[sl] == 3 && e->sl_ta[sl] <= t + tol) job_end(e, (int32_t)sl, s, t);
    else if (e->sl_state[sl] == 2 && e->sl_mt[sl] >= BIG && e->sl_ft[sl] >= BIG) {
      if (e->sl_nb[sl] > 0 && e->sl_ta[sl] > t + tol) e->sl_state[sl] = 3;
      else job_end(e, (int32_t)sl, s, t);
    }
  }
  if (n_mem != e->n_mem[s] || capsum != e->capsum[s] || hsum0 != e->hsum[s]) {
    e->capsum[s] = capsum;
    if (n_mem == 0) e->hsum[s] = e->msum[s] = 0;  /* no drift once the SM is idle */
    e->hbar[s] = n_mem > 0 ? e->hsum[s] / n_mem : 1;
    if (e->has_curve) e->sbar[s] = mean_curve(e, s, n_mem);
    set_n_mem(e, s, n_mem);
  }
  if (n_cmp != e->n_cmp[s]) set_n_cmp(e, s, n_cmp);
}

/* Earliest pending completions of SM s, and its slot high-water mark. */
static void sm_mins(av__eng_t *e, int32_t s) {
  const int64_t base = (int64_t)s * e->maxc;
  double mt = BIG, ft = BIG, ta = BIG;
  int32_t hw = 0;
  for (int32_t j = 0; j < e->hw[s]; j++) {
    int64_t sl = base + j;
    if (e->sl_state[sl] == 0) continue;
    hw = j + 1;
    if (e->sl_state[sl] == 1 || e->sl_state[sl] == 3) {
      ta = dmin(ta, e->sl_ta[sl]);
    } else {
      mt = dmin(mt, e->sl_mt[sl]);
      ft = dmin(ft, e->sl_ft[sl]);
    }
  }
  e->hw[s] = hw;
  e->mtmin[s] = mt;
  e->ftmin[s] = ft;
  e->tamin[s] = ta;
}

/* Range phases re-divided the misses of platoon members on these SMs: their HBM shares and
 * byte targets moved. */
static void flush_touched(av__eng_t *e) {
  for (int32_t i = 0; i < e->n_touched; i++) {
    const int32_t s = e->touched[i];
    e->is_touched[s] = 0;
    e->hbar[s] = e->n_mem[s] > 0 ? e->hsum[s] / e->n_mem[s] : 1;
    sm_mins(e, s);
  }
  e->n_touched = 0;
}

/* --- dispatch --------------------------------------------------------------------------- */
static int fits(const av__eng_t *e, const av__eng_launch_t *L, int32_t s) {
  const uint32_t *used = &e->res_used[(int64_t)s * AV__RES_N];
  for (int r = 0; r < AV__RES_N; r++)
    if (used[r] + L->res[r] > AV__RES_CAP) return 0;
  return 1;
}

/* CTA c of launch li goes onto SM s. Grids are (ctas, hkv) with x fastest, as the block
 * scheduler issues them: c -> (c mod per_head, c / per_head). */
static void place(av__eng_t *e, int32_t li, int32_t s, double t) {
  av__eng_launch_t *L = &e->L[li];
  int32_t c = L->next_cta++;
  int32_t x = c % L->per_head, head = c / L->per_head;
  int64_t base = (int64_t)s * e->maxc;
  int32_t j = 0;
  while (e->sl_state[base + j] != 0) j++;  /* resources guarantee a free slot */
  int64_t sl = base + j;
  if (j + 1 > e->hw[s]) e->hw[s] = j + 1;
  uint32_t *used = &e->res_used[(int64_t)s * AV__RES_N];
  for (int r = 0; r < AV__RES_N; r++) used[r] += L->res[r];
  if (e->n_res[s]++ == 0) {
    e->busy_since[s] = t;
    busy_enter(e, s);
  }
  e->sl_launch[sl] = li;
  e->sl_head[sl] = head;
  if (L->persistent) {
    e->sl_qpos[sl] = L->q_off[x];
    e->sl_qend[sl] = L->q_off[x + 1];
    e->sl_job[sl] = e->sl_qpos[sl] < e->sl_qend[sl] ? L->queue[e->sl_qpos[sl]] : -1;
  } else {
    e->sl_qpos[sl] = e->sl_qend[sl] = 0;
    e->sl_job[sl] = L->is_merge ? x : L->items[x];
  }
  job_begin(e, (int32_t)sl, t, 0);
  if (e->has_start && t == L->start_us && e->sl_job[sl] >= 0 && !L->is_merge)
    e->starters[e->n_starters++] = (int32_t)sl;  /* its prologue end waits for the count */
  else if (e->sl_ta[sl] < e->tamin[s])
    e->tamin[s] = e->sl_ta[sl];
}

/* Oldest launch first; within a launch, passes over the SMs that gained room, one CTA per SM
 * per pass, so a fresh grid spreads breadth-first (CTA i on SM i mod #SM). SMs that did not
 * gain room cannot take any waiting CTA (they could not before), so only dirty SMs are
 * visited. The CTAs of launches starting now then pay the start cost of their number. */
static void dispatch(av__eng_t *e, double t) {
  int32_t keep = 0;
  for (int32_t a = 0; a < e->n_active; a++) {
    int32_t li = e->active[a];
    av__eng_launch_t *L = &e->L[li];
    int placed = 1;
    while (placed && L->next_cta < L->total) {
      placed = 0;
      for (int32_t d = 0; d < e->n_dirty && L->next_cta < L->total; d++) {
        int32_t s = e->dirty[d];
        if (fits(e, L, s)) {
          place(e, li, s, t);
          placed = 1;
        }
      }
    }
    if (L->next_cta < L->total) e->active[keep++] = li;
  }
  e->n_active = keep;
  if (e->n_starters > 0) av__engine_start_costs(e);
  for (int32_t d = 0; d < e->n_dirty; d++) e->is_dirty[e->dirty[d]] = 0;
  e->n_dirty = 0;
}

/* --- bandwidth ------------------------------------------------------------------------ */
/* Max-min fair (water-filling) share f of HBM bandwidth B among memory-active CTAs. A CTA
 * on SM s moves bytes at most at its bound Cn_s, of which the share hbar_s misses L2, so it
 * asks HBM for at most Cn_s hbar_s: find f with sum_s k_s min(f, Cn_s hbar_s) = B. Start from
 * the lowest possible level B / (all CTAs); SMs whose demand is below the level are capped,
 * the rest share what is left, which raises the level; repeat until no SM changes side (at
 * most one pass per distinct demand below the final level). With every byte from HBM
 * (hbar 1) this is the plain per-CTA water level. */
static void water_level(av__eng_t *e) {
  double A = (double)e->n_mem_total;
  if (A <= 0) {
    e->f = 0;
    return;
  }
  double f = e->B / A;
  int64_t capped_prev = 0;  /* nothing capped at the lowest level: f stays B / A */
  for (;;) {
    double capped = 0, free_ctas = 0;
    int64_t n_capped = 0;
    for (int32_t i = 0; i < e->n_busy; i++) {
      const int32_t s = e->busy[i], k = e->n_mem[s];
      if (!k) continue;
      const double demand = e->Cn[s] * e->hbar[s];
      if (demand < f) {
        capped += k * demand;
        n_capped += k;
      } else {
        free_ctas += k;
      }
    }
    if (free_ctas <= 0) {
      f = BIG;
      break;
    }
    if (n_capped == capped_prev) break;
    capped_prev = n_capped;
    f = (e->B - capped) / free_ctas;
  }
  e->f = f;
}

int av__engine_loop(av__eng_t *e, av_error_t *err) {
  const int32_t S = e->S;
  double t = 0, tn = e->heap_n ? e->heap_t[0] : BIG;
  int32_t *due = e->dirty + S;  /* second half of the dirty array: SMs due this event */
  for (int32_t s = 0; s < S; s++) e->next[s] = BIG;
  while (e->launches_left > 0) {
    if (tn >= BIG)
      return av_error_set(err, AV_ERR_INTERNAL, NULL, NULL,
                          "simulator stalled at %.3f us with %d launches unfinished", t,
                          e->launches_left);
    double dt = tn > t ? tn - t : 0;
    int32_t n_due = 0;
    double missed = 0;  /* the range L2's clock: KV bytes fetched from HBM */
    for (int32_t i = 0; i < e->n_busy; i++) {  /* an SM without CTAs moves nothing */
      const int32_t s = e->busy[i];
      e->W[s] += e->rho[s] * dt;
      e->PHI[s] += e->phi[s] * dt;
      missed += e->rho[s] * e->msum[s];
      if (e->next[s] <= tn + EPS_US) due[n_due++] = s;
    }
    e->m_clk += missed * dt;
    t = tn;
    while (e->heap_n && e->heap_t[0] <= t + EPS_US) launch_start(e, heap_pop(e), t);
    for (int32_t d = 0; d < n_due; d++) process_sm(e, due[d], t);
    for (int32_t d = 0; d < n_due; d++) sm_mins(e, due[d]);
    dispatch(e, t);
    if (e->n_unsettled) av__ranges_settle(e);
    if (e->n_touched) flush_touched(e);
    water_level(e);
    const double f = e->f;
    tn = e->heap_n ? e->heap_t[0] : BIG;
    for (int32_t i = 0; i < e->n_busy; i++) {
      const int32_t s = e->busy[i];
      /* HBM's share f buys f / hbar bytes of work when part of them hit L2 */
      const double fs = f >= BIG || e->hbar[s] <= 0 ? BIG : f / e->hbar[s];
      double rho = dmin(fs, e->Cn[s]), irho = dmax(fs >= BIG ? 0 : 1 / fs, e->nC[s]);
      e->rho[s] = rho;
      e->irho[s] = irho;
      double a = (e->mtmin[s] - e->W[s]) * irho;
      double b = (e->ftmin[s] - e->PHI[s]) * e->iphi[s];
      double nx = dmin(t + dmin(a, b), e->tamin[s]);
      e->next[s] = nx;
      tn = dmin(tn, nx);
    }
  }
  for (int32_t s = 0; s < S; s++)
    if (e->n_res[s] > 0) e->busy_us[s] += t - e->busy_since[s];
  return AV_OK;
}
