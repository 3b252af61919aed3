/* The simulator's L2 model: an LRU over KV lines held in preallocated arrays (chained hash
 * map + doubly linked recency list in one array of entries), so the engine's event loop never
 * allocates. KV bytes re-read by several CTAs close in time hit here and are served at L2
 * bandwidth. */
#include "sim/engine_internal.h"

static uint64_t mix64(uint64_t x) {
  /* splitmix64 finaliser: spreads (head, node, line) keys over the buckets. */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

static uint32_t bucket_count(int32_t cap) {
  uint32_t n = 1;
  while (n < 2u * (uint32_t)cap) n <<= 1;
  return n;
}

size_t av__l2_bytes(int32_t cap) {
  if (cap <= 0) return 0;
  return (size_t)cap * sizeof(av__l2_entry_t) + (size_t)bucket_count(cap) * sizeof(int32_t);
}

void av__l2_init(av__l2_t *l2, int32_t cap, void *mem) {
  l2->cap = cap > 0 ? cap : 0;
  l2->used = 0;
  l2->head = l2->tail = -1;
  l2->mask = 0;
  l2->bucket = NULL;
  l2->e = NULL;
  if (l2->cap == 0) return;
  uint32_t nb = bucket_count(cap);
  l2->mask = nb - 1;
  l2->e = mem;
  l2->bucket = (int32_t *)(l2->e + cap);
  for (uint32_t i = 0; i < nb; i++) l2->bucket[i] = -1;
}

static void unlink_lru(av__l2_t *l2, int32_t i) {
  av__l2_entry_t *x = &l2->e[i];
  if (x->prev >= 0) l2->e[x->prev].next = x->next;
  else l2->head = x->next;
  if (x->next >= 0) l2->e[x->next].prev = x->prev;
  else l2->tail = x->prev;
}

static void push_front(av__l2_t *l2, int32_t i) {
  l2->e[i].prev = -1;
  l2->e[i].next = l2->head;
  if (l2->head >= 0) l2->e[l2->head].prev = i;
  l2->head = i;
  if (l2->tail < 0) l2->tail = i;
}

static void unhash(av__l2_t *l2, int32_t i) {
  int32_t *link = &l2->bucket[l2->e[i].bucket];
  while (*link != i) link = &l2->e[*link].hnext;
  *link = l2->e[i].hnext;
}

int av__l2_access(av__l2_t *l2, uint64_t key) {
  if (l2->cap == 0) return 0;
  uint32_t b = (uint32_t)(mix64(key) & l2->mask);
  for (int32_t i = l2->bucket[b]; i >= 0; i = l2->e[i].hnext) {
    if (l2->e[i].key == key) {
      if (l2->head != i) {
        unlink_lru(l2, i);
        push_front(l2, i);
      }
      return 1;
    }
  }
  int32_t i;
  if (l2->used < l2->cap) {
    i = l2->used++;
  } else {
    i = l2->tail;  /* evict the least recently used line */
    unlink_lru(l2, i);
    unhash(l2, i);
  }
  l2->e[i].key = key;
  l2->e[i].bucket = b;
  l2->e[i].hnext = l2->bucket[b];
  l2->bucket[b] = i;
  push_front(l2, i);
  return 0;
}
