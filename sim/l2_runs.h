/* The simulator's range L2 (docs/simulator.md#l2-over-ranges): the KV the L2 holds, kept as
 * runs of consecutive tokens of one (head, node) instead of one entry per line, so a CTA's
 * lookup costs O(log runs) however long its KV is. A run is either being read (a platoon of
 * CTAs streams it now; their progress says which tokens have arrived) or done: its tokens
 * were last read as the miss clock (KV bytes fetched from HBM so far) went from m_lo (first
 * token) to m_hi (last), and a token is still in the L2 while its LRU depth (sim/l2_depth.c)
 * is below the L2's capacity. Everything lives in one caller-provided block; nothing
 * allocates. Not a public API. */
#ifndef AV_L2_RUNS_H
#define AV_L2_RUNS_H

#include <stddef.h>
#include <stdint.h>

/* Which lines a done run still has in the L2 (sim/l2_depth.c): LRU depth from stamps. A
 * line's stamp is the miss clock when it was last read; its depth, the distinct lines read
 * since, is the misses since plus the lines re-read since whose own previous stamp was
 * older. Re-reads are kept as a histogram of their previous stamps over the window of the
 * last L2-capacity of misses (older stamps are out of the L2 whatever was re-read), and the
 * count of re-reads when the clock entered each of its buckets. */
#define AV__DEPTH_BUCKETS 64
typedef struct av__l2_depth {
  double w;                    /* bucket width, miss-clock bytes */
  int64_t top;                 /* the bucket the clock is in */
  double reread;               /* lines re-read so far */
  double h[AV__DEPTH_BUCKETS];       /* re-read lines by their previous stamp's bucket */
  double rr_at[AV__DEPTH_BUCKETS];   /* `reread` when the clock entered the bucket */
} av__l2_depth_t;

void av__depth_init(av__l2_depth_t *d, double cap_bytes);
/* The clock moved to m: buckets it entered start empty. */
void av__depth_sync(av__l2_depth_t *d, double m);
/* n lines whose stamps were spread over [s_lo, s_hi] were re-read (clock at m). */
void av__depth_reread(av__l2_depth_t *d, double s_lo, double s_hi, double n, double m);
/* Whether a line stamped s is still in an L2 of cap_bytes at clock m. */
int av__depth_held(const av__l2_depth_t *d, double s, double m, double cap_bytes,
                   double line_bytes);

typedef struct av__run {
  uint64_t key;                /* (head, node) */
  int64_t lo, hi;              /* tokens [lo, hi) */
  double m_lo, m_hi;           /* done: miss clock (bytes) at its first and last line */
  double front_tok;            /* being read: the furthest token a member has reached */
  double start_tok;            /* being read: where its first member started (the front
                                  moved from there at clock m_lo to front_tok now) */
  double paid;                 /* being read: tokens of that move its members fetched */
  int32_t unsettled;           /* being read: members joined in this event, not yet shared */
  int32_t first;               /* being read: first member slot; -1: done */
  int32_t n_members;
  int32_t left, right;         /* treap children, -1 = none */
  uint32_t prio;
} av__run_t;

typedef struct av__runs {
  av__run_t *r;                /* cap nodes */
  int32_t cap, used, free_head; /* free list threads through .left */
  int32_t root, inserts;       /* inserts since the last sweep of dropped runs */
  uint32_t seed;
  double cap_bytes;            /* the L2's capacity: a line stays while fewer missed bytes
                                  than this have been read after it */
  double line_bytes, line_tokens;  /* the L2's depth is counted in lines of 64+ tokens */
  av__l2_depth_t depth;
} av__runs_t;

size_t av__runs_bytes(int32_t cap);
void av__runs_init(av__runs_t *t, int32_t cap, double cap_bytes, double line_bytes,
                   double line_tokens, void *mem);

/* The run of `key` holding position `line` (a token), or -1. */
int32_t av__runs_find(const av__runs_t *t, uint64_t key, int64_t line);
/* The first run of `key` that starts after `line` (lo > line), or -1. */
int32_t av__runs_next(const av__runs_t *t, uint64_t key, int64_t line);
/* The first token of done run i still in the L2 at miss clock m (hi when none is); the
 * stamp of its token `line`. */
int64_t av__runs_present_from(const av__runs_t *t, int32_t i, double m);
double av__runs_line_stamp(const av__run_t *r, int64_t line);
/* Inserts a new run [lo, hi) of key (caller fills the rest); -1 when the pool is full even
 * after dropping what the L2 no longer holds at clock m and the oldest done runs. */
int32_t av__runs_insert(av__runs_t *t, uint64_t key, int64_t lo, int64_t hi, double m);
/* Removes tokens [lo, hi) of key from every done run there (runs being read are kept),
 * splitting the runs that straddle either end; their m values stay those of their lines. */
void av__runs_clear(av__runs_t *t, uint64_t key, int64_t lo, int64_t hi, double m);
void av__runs_erase(av__runs_t *t, int32_t i);
/* Tokens [lo, hi) of key's done runs are read again at clock m (their depth bookkeeping). */
void av__runs_note_reread(av__runs_t *t, uint64_t key, int64_t lo, int64_t hi, double m);

#endif
