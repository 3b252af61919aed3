/* Timelines of simulated (or replayed) CTAs and their Chrome Trace Event JSON form, which
 * Perfetto and chrome://tracing open: one complete event ("ph": "X") per CTA, process =
 * launch, thread = one CTA slot of one SM ("SM 3 / slot 1"). Co-resident CTAs of an SM get
 * different slots, so the events of one thread never overlap (trace viewers draw events of
 * a thread as a nested stack and misdraw partly overlapping ones). Times are written in
 * whole 0.1 ns ticks, so rounding cannot make back-to-back CTAs overlap. Written streamed (a
 * timeline of a million CTAs would be a million Jansson objects) into a temporary file
 * renamed into place (core/outfile.h), so no partial file is left. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/outfile.h"
#include "sim/sim.h"

static const av_timeline_t *g_sort_tl; /* qsort has no context argument */

void av_timeline_free(av_timeline_t *t) {
  if (!t) return;
  free(t->ev);
  t->ev = NULL;
  t->n = t->cap = 0;
}

/* "launch 2 (stream 1, partial m=16 n=64 w=4)"; the merge launch has index n_launches. */
static void launch_label(const av_plan_t *p, int32_t l, char *buf, size_t size) {
  if (!p || l < 0) {
    snprintf(buf, size, "launch %d", l);
  } else if (l >= p->n_launches) {
    snprintf(buf, size, "launch %d (merge)", l);
  } else {
    const av_launch_t *L = &p->launches[l];
    snprintf(buf, size, "launch %d (stream %d, %s m=%d n=%d w=%d%s)", l, L->stream,
             av_kernel_kind_name(L->tile.kind), L->tile.m_rows, L->tile.n_tokens,
             L->tile.warps, L->persistent_ctas > 0 ? ", persistent" : "");
  }
}

static int64_t ticks(double us) { return llround(us * 1e4); }

/* Orders event indices by (launch, SM, start, end). */
static int cmp_event(const void *a, const void *b) {
  const av_cta_event_t *x = &g_sort_tl->ev[*(const int32_t *)a];
  const av_cta_event_t *y = &g_sort_tl->ev[*(const int32_t *)b];
  if (x->launch != y->launch) return x->launch < y->launch ? -1 : 1;
  if (x->sm != y->sm) return x->sm < y->sm ? -1 : 1;
  int64_t xs = ticks(x->start_us), ys = ticks(y->start_us);
  if (xs != ys) return xs < ys ? -1 : 1;
  int64_t xe = ticks(x->end_us), ye = ticks(y->end_us);
  return xe < ye ? -1 : xe > ye;
}

/* slot[i]: the CTA slot of event i on its (launch, SM): the lowest slot whose previous CTA
 * has ended by the time event i starts (interval partitioning, so the count of slots is the
 * SM's peak co-residency); opens[i] is 1 when event i is its slot's first. Returns the most
 * slots any SM used, or -1 when out of memory. */
static int assign_slots(const av_timeline_t *t, int32_t *slot, uint8_t *opens) {
  int32_t *order = malloc(sizeof *order * (size_t)(t->n ? t->n : 1));
  int64_t *busy_until = NULL;
  int cap = 0, most = 1;
  if (!order) return -1;
  for (int32_t i = 0; i < t->n; i++) order[i] = i;
  g_sort_tl = t;
  qsort(order, (size_t)t->n, sizeof *order, cmp_event);
  int used = 0;
  for (int32_t k = 0; k < t->n; k++) {
    const av_cta_event_t *e = &t->ev[order[k]];
    const av_cta_event_t *prev = k ? &t->ev[order[k - 1]] : NULL;
    if (!prev || prev->launch != e->launch || prev->sm != e->sm) used = 0;
    int s = 0;
    while (s < used && busy_until[s] > ticks(e->start_us)) s++;
    opens[order[k]] = s == used;
    if (s == used) {
      if (used == cap) {
        int ncap = cap ? 2 * cap : 8;
        int64_t *nb = realloc(busy_until, sizeof *nb * (size_t)ncap);
        if (!nb) {
          free(busy_until);
          free(order);
          return -1;
        }
        busy_until = nb;
        cap = ncap;
      }
      used++;
    }
    busy_until[s] = ticks(e->end_us);
    slot[order[k]] = s;
    if (used > most) most = used;
  }
  free(busy_until);
  free(order);
  return most;
}

/* One "M" metadata event naming thread tid of process pid. */
static void name_thread(FILE *f, int32_t pid, int64_t tid, int sm, int slot) {
  fprintf(f,
          ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%lld,"
          "\"args\":{\"name\":\"SM %d / slot %d\"}}",
          pid, (long long)tid, sm, slot);
}

/* Writes a time in ticks as microseconds with four decimals ("12.3456", "-0.0100"). */
static void put_us(FILE *f, int64_t t) {
  int64_t a = t < 0 ? -t : t;
  fprintf(f, "%s%lld.%04lld", t < 0 ? "-" : "", (long long)(a / 10000), (long long)(a % 10000));
}

static int write_events(FILE *f, const av_timeline_t *t, const av_plan_t *p,
                        const int32_t *slot, const uint8_t *opens, int slots) {
  int32_t max_launch = -1;
  for (int32_t i = 0; i < t->n; i++)
    if (t->ev[i].launch > max_launch) max_launch = t->ev[i].launch;
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
  int first = 1;
  char label[160];
  for (int32_t l = 0; l <= max_launch; l++) {
    launch_label(p, l, label, sizeof label);
    fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"%s\"}}",
            first ? "" : ",", l, label);
    first = 0;
  }
  for (int32_t i = 0; i < t->n; i++) {
    const av_cta_event_t *e = &t->ev[i];
    if (opens[i]) name_thread(f, e->launch, (int64_t)e->sm * slots + slot[i], e->sm, slot[i]);
  }
  for (int32_t i = 0; i < t->n; i++) {
    const av_cta_event_t *e = &t->ev[i];
    char name[32];
    if (e->item >= 0) snprintf(name, sizeof name, "item %d", e->item);
    else snprintf(name, sizeof name, "merge");
    int64_t ts = ticks(e->start_us), dur = ticks(e->end_us) - ts;
    if (dur < 0) dur = 0;
    fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"X\",\"ts\":", first ? "" : ",", name);
    put_us(f, ts);
    fputs(",\"dur\":", f);
    put_us(f, dur);
    fprintf(f, ",\"pid\":%d,\"tid\":%lld,\"args\":{\"item\":%d,\"head\":%d,\"sm\":%d}}",
            e->launch, (long long)e->sm * slots + slot[i], e->item, e->head, e->sm);
    first = 0;
  }
  fputs("\n]}\n", f);
  return ferror(f) ? -1 : 0;
}

int av_timeline_write_chrome(const av_timeline_t *t, const av_plan_t *p, const char *path,
                             av_error_t *err) {
  av_outfile_t o;
  int rc = av_outfile_open(&o, path, err);
  if (rc) return rc;
  int32_t *slot = malloc(sizeof *slot * (size_t)(t->n ? t->n : 1));
  uint8_t *opens = malloc((size_t)(t->n ? t->n : 1));
  int slots = slot && opens ? assign_slots(t, slot, opens) : -1;
  int bad = slots < 0 ? -1 : write_events(o.f, t, p, slot, opens, slots);
  free(slot);
  free(opens);
  if (slots < 0) {
    av_outfile_discard(&o);
    return av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  }
  return bad ? av_outfile_fail(&o, err) : av_outfile_commit(&o, 0, err);
}
