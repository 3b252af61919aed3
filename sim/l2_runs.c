/* The range L2's store (sim/l2_runs.h): runs of KV tokens in a treap ordered by (key, first
 * line), nodes from a fixed pool with a free list. A lookup or an update walks one root-to-
 * leaf path; when the pool runs out, runs the L2 no longer holds are dropped first, then the
 * least recently read done runs. */
#include "sim/l2_runs.h"

#define NIL (-1)
#define FREED (-2)   /* .first of a node on the free list */

size_t av__runs_bytes(int32_t cap) { return cap > 0 ? (size_t)cap * sizeof(av__run_t) : 0; }

void av__runs_init(av__runs_t *t, int32_t cap, double cap_bytes, double line_bytes,
                   double line_tokens, void *mem) {
  t->r = mem;
  t->cap = cap > 0 ? cap : 0;
  t->used = 0;
  t->free_head = NIL;
  t->root = NIL;
  t->inserts = 0;
  t->seed = 0x9e3779b9u;
  t->cap_bytes = cap_bytes;
  t->line_bytes = line_bytes;
  t->line_tokens = line_tokens;
  av__depth_init(&t->depth, cap_bytes);
}

static int before(const av__run_t *a, uint64_t key, int64_t lo) {
  return a->key < key || (a->key == key && a->lo < lo);
}

/* Splits treap x into runs ordered before (key, lo) and the rest. */
static void split(av__runs_t *t, int32_t x, uint64_t key, int64_t lo, int32_t *a, int32_t *b) {
  if (x == NIL) {
    *a = *b = NIL;
  } else if (before(&t->r[x], key, lo)) {
    split(t, t->r[x].right, key, lo, &t->r[x].right, b);
    *a = x;
  } else {
    split(t, t->r[x].left, key, lo, a, &t->r[x].left);
    *b = x;
  }
}

static int32_t merge(av__runs_t *t, int32_t a, int32_t b) {
  if (a == NIL) return b;
  if (b == NIL) return a;
  if (t->r[a].prio > t->r[b].prio) {
    t->r[a].right = merge(t, t->r[a].right, b);
    return a;
  }
  t->r[b].left = merge(t, a, t->r[b].left);
  return b;
}

int32_t av__runs_find(const av__runs_t *t, uint64_t key, int64_t line) {
  int32_t x = t->root, best = NIL;
  while (x != NIL) {  /* the last run starting at or before (key, line) */
    const av__run_t *r = &t->r[x];
    if (r->key < key || (r->key == key && r->lo <= line)) {
      best = x;
      x = r->right;
    } else {
      x = r->left;
    }
  }
  return best != NIL && t->r[best].key == key && line < t->r[best].hi ? best : NIL;
}

int32_t av__runs_next(const av__runs_t *t, uint64_t key, int64_t line) {
  int32_t x = t->root, best = NIL;
  while (x != NIL) {  /* the first run starting after (key, line) */
    const av__run_t *r = &t->r[x];
    if (r->key > key || (r->key == key && r->lo > line)) {
      best = x;
      x = r->left;
    } else {
      x = r->right;
    }
  }
  return best != NIL && t->r[best].key == key ? best : NIL;
}

double av__runs_line_stamp(const av__run_t *r, int64_t i) {
  const int64_t n = r->hi - r->lo;
  return n > 1 ? r->m_lo + (double)(i - r->lo) * (r->m_hi - r->m_lo) / (double)(n - 1)
               : r->m_hi;
}

static int held(const av__runs_t *t, const av__run_t *r, int64_t i, double m) {
  return av__depth_held(&t->depth, av__runs_line_stamp(r, i), m, t->cap_bytes, t->line_bytes);
}

int64_t av__runs_present_from(const av__runs_t *t, int32_t i, double m) {
  const av__run_t *r = &t->r[i];
  if (held(t, r, r->lo, m)) return r->lo;
  if (!held(t, r, r->hi - 1, m)) return r->hi;
  int64_t lo = r->lo, hi = r->hi - 1;  /* lo not held, hi held: later lines are newer */
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (held(t, r, mid, m)) hi = mid;
    else lo = mid;
  }
  return hi;
}

void av__runs_erase(av__runs_t *t, int32_t i) {
  int32_t a, b, mid;
  split(t, t->root, t->r[i].key, t->r[i].lo, &a, &b);
  split(t, b, t->r[i].key, t->r[i].lo + 1, &mid, &b);
  t->root = merge(t, a, b);
  t->r[i].first = FREED;
  t->r[i].left = t->free_head;
  t->free_head = i;
}

/* Drops the done runs the L2 no longer holds at clock m; returns whether it dropped any. */
static int sweep(av__runs_t *t, double m) {
  const double thr = m - t->cap_bytes;
  int freed = 0;
  for (int32_t i = 0; i < t->used; i++)
    if (t->r[i].first == NIL && t->r[i].m_hi <= thr) {
      av__runs_erase(t, i);
      freed = 1;
    }
  return freed;
}

/* Pool full: drops the done runs the L2 no longer holds at clock m; when there are none, the
 * least recently read quarter of the done runs (their lines would be the next evicted). */
static void reclaim(av__runs_t *t, double m) {
  if (sweep(t, m)) return;
  double lo = 1e300, hi = -1e300;
  for (int32_t i = 0; i < t->used; i++) {
    const av__run_t *r = &t->r[i];
    if (r->first != NIL) continue;  /* being read, or free */
    lo = r->m_hi < lo ? r->m_hi : lo;
    hi = r->m_hi > hi ? r->m_hi : hi;
  }
  if (lo > hi) return;
  const double cut = lo + (hi - lo) / 4;
  for (int32_t i = 0; i < t->used; i++)
    if (t->r[i].first == NIL && t->r[i].m_hi <= cut) av__runs_erase(t, i);
}

int32_t av__runs_insert(av__runs_t *t, uint64_t key, int64_t lo, int64_t hi, double m) {
  /* every quarter pool of inserts, what the L2 dropped leaves the tree, which so stays the
   * size of what the L2 holds (its depth is what every lookup pays) */
  if (++t->inserts >= t->cap / 4 + 1) {
    t->inserts = 0;
    sweep(t, m);
  }
  if (t->free_head == NIL && t->used == t->cap) reclaim(t, m);
  int32_t i;
  if (t->free_head != NIL) {
    i = t->free_head;
    t->free_head = t->r[i].left;
  } else if (t->used < t->cap) {
    i = t->used++;
  } else {
    return NIL;
  }
  av__run_t *r = &t->r[i];
  t->seed ^= t->seed << 13;  /* xorshift32: independent priorities keep the treap shallow */
  t->seed ^= t->seed >> 17;
  t->seed ^= t->seed << 5;
  *r = (av__run_t){.key = key, .lo = lo, .hi = hi, .first = NIL, .left = NIL, .right = NIL,
                   .prio = t->seed};
  int32_t a, b;
  split(t, t->root, key, lo, &a, &b);
  t->root = merge(t, merge(t, a, i), b);
  return i;
}

/* Copies done run src's lines [lo, hi) into a new run (their m values kept). */
static void keep_piece(av__runs_t *t, av__run_t src, int64_t lo, int64_t hi, double m) {
  if (hi <= lo) return;
  int32_t j = av__runs_insert(t, src.key, lo, hi, m);
  if (j == NIL) return;  /* pool exhausted: the piece is forgotten, i.e. evicted */
  t->r[j].m_lo = av__runs_line_stamp(&src, lo);
  t->r[j].m_hi = av__runs_line_stamp(&src, hi - 1);
}

void av__runs_note_reread(av__runs_t *t, uint64_t key, int64_t lo, int64_t hi, double m) {
  int32_t i = av__runs_find(t, key, lo);
  if (i == NIL) i = av__runs_next(t, key, lo);
  for (; i != NIL && t->r[i].lo < hi; i = av__runs_next(t, key, t->r[i].lo)) {
    const av__run_t *r = &t->r[i];
    const int64_t a = r->lo > lo ? r->lo : lo, b = r->hi < hi ? r->hi : hi;
    if (r->first == NIL && b > a)
      av__depth_reread(&t->depth, av__runs_line_stamp(r, a), av__runs_line_stamp(r, b - 1),
                       (double)(b - a) / t->line_tokens, m);
  }
}

void av__runs_clear(av__runs_t *t, uint64_t key, int64_t lo, int64_t hi, double m) {
  int32_t i = av__runs_find(t, key, lo);
  if (i == NIL) i = av__runs_next(t, key, lo);
  while (i != NIL && t->r[i].lo < hi) {
    const av__run_t r = t->r[i];
    const int32_t nx = av__runs_next(t, key, r.lo);
    if (r.first == NIL) {
      av__runs_erase(t, i);
      keep_piece(t, r, r.lo, lo < r.hi ? lo : r.hi, m);
      keep_piece(t, r, hi > r.lo ? hi : r.lo, r.hi, m);
    }
    i = nx;
  }
}
