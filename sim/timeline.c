/* Timelines of simulated (or replayed) CTAs and their Chrome Trace Event JSON form, which
 * Perfetto and chrome://tracing open: one complete event ("ph": "X") per CTA, process =
 * launch, thread = SM. Written streamed (a timeline of a million CTAs would be a million
 * Jansson objects) into a temporary file renamed into place, so no partial file is left. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim.h"

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

static int write_events(FILE *f, const av_timeline_t *t, const av_plan_t *p) {
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
    char name[32];
    if (e->item >= 0) snprintf(name, sizeof name, "item %d", e->item);
    else snprintf(name, sizeof name, "merge");
    fprintf(f,
            "%s\n{\"name\":\"%s\",\"ph\":\"X\",\"ts\":%.4f,\"dur\":%.4f,\"pid\":%d,\"tid\":%d,"
            "\"args\":{\"item\":%d,\"head\":%d}}",
            first ? "" : ",", name, e->start_us, e->end_us - e->start_us, e->launch, e->sm,
            e->item, e->head);
    first = 0;
  }
  fputs("\n]}\n", f);
  return ferror(f) ? -1 : 0;
}

int av_timeline_write_chrome(const av_timeline_t *t, const av_plan_t *p, const char *path,
                             av_error_t *err) {
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (!tmp) return av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
  snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    int rc = av_error_set(err, AV_ERR_IO, path, NULL, "cannot create timeline file: %s",
                          strerror(errno));
    free(tmp);
    return rc;
  }
  int bad = write_events(f, t, p);
  if (fclose(f) != 0) bad = -1;
  if (bad || rename(tmp, path) != 0) {
    int rc = av_error_set(err, AV_ERR_IO, path, NULL, "cannot write timeline file: %s",
                          strerror(errno));
    remove(tmp);
    free(tmp);
    return rc;
  }
  free(tmp);
  return AV_OK;
}
