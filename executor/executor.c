/* GPU executor (executor/executor.h): uploads a batch's paged KV cache once, then runs plans
 * on it through the kernels' C launchers: one CUDA stream per plan stream, the merge after all
 * of them, every CUDA call checked. Without CUDA every entry point says so. */
#include "executor/executor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/exec_internal.h"

#ifdef AV_HAVE_CUDA
#include "executor/exec_device.h"
#endif

void av_exec_opts_default(av_exec_opts_t *o) {
  o->warmup = 3;
  o->repeats = 20;
  o->verify = 1;
  o->trace = 0;
  o->flush_l2 = AV_FLUSH_READ;
}

int av_exec_flush_parse(const char *s, int *mode) {
  static const char *const names[] = {"none", "write", "read"};
  for (int i = 0; i < 3; ++i)
    if (s && strcmp(s, names[i]) == 0) {
      *mode = i;
      return 0;
    }
  return -1;
}

void av_exec_result_free(av_exec_result_t *r) {
  if (!r) return;
  if (r->trace) json_decref(r->trace);
  r->trace = NULL;
}

#ifndef AV_HAVE_CUDA

int av_exec_available(av_error_t *err) {
  return av_error_set(err, AV_ERR_NODEVICE, "executor", NULL,
                      "built without CUDA: rebuild with nvcc available (AV_CUDA=ON) to run "
                      "plans on a GPU");
}
av_exec_batch_t *av_exec_batch_create(const av_workload_t *w, uint64_t seed, int max_check,
                                      av_error_t *err) {
  (void)w, (void)seed, (void)max_check;
  av_exec_available(err);
  return NULL;
}
void av_exec_batch_destroy(av_exec_batch_t *b) { (void)b; }
const char *av_exec_batch_gpu(const av_exec_batch_t *b) { (void)b; return ""; }
int av_exec_batch_tma(const av_exec_batch_t *b) { (void)b; return 0; }
int av_exec_batch_set_kv_copy(av_exec_batch_t *b, av_kv_copy_t c, av_error_t *err) {
  (void)b, (void)c;
  return av_exec_available(err);
}
int av_exec_batch_run(av_exec_batch_t *b, const av_plan_t *p, const av_exec_opts_t *o,
                      av_exec_result_t *out, av_error_t *err) {
  (void)b, (void)p, (void)o, (void)out;
  return av_exec_available(err);
}
int av_exec_batch_time(av_exec_batch_t *b, const av_plan_t *const *plans, int n,
                       const av_exec_opts_t *o, av_exec_result_t *outs, av_error_t *err) {
  (void)b, (void)plans, (void)n, (void)o, (void)outs;
  return av_exec_available(err);
}
int av_exec_run(const av_plan_t *p, const av_workload_t *w, const av_exec_opts_t *o,
                av_exec_result_t *out, av_error_t *err) {
  (void)p, (void)w, (void)o, (void)out;
  return av_exec_available(err);
}
int av_exec_copy_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err) {
  (void)bytes, (void)reps, (void)GBps;
  return av_exec_available(err);
}
int av_exec_read_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err) {
  (void)bytes, (void)reps, (void)GBps;
  return av_exec_available(err);
}

#else /* AV_HAVE_CUDA */

int av_exec_available(av_error_t *err) {
  int n = 0;
  if (av_kern_device_count(&n) != 0) return av__exec_cuda_fail(err);
  if (n == 0)
    return av_error_set(err, AV_ERR_NODEVICE, AV_SRC, NULL,
                        "no CUDA device: `anvil exec` needs a GPU (simulate with `anvil run`)");
  return AV_OK;
}


void av_exec_batch_destroy(av_exec_batch_t *b) {
  if (!b) return;
  av_kern_free(b->q);
  av_kern_free(b->k);
  av_kern_free(b->v);
  av_kern_free(b->off);
  av_kern_free(b->blocks);
  av_kern_free(b->kv_maps);
  av_kern_free(b->out);
  av_kern_free(b->flush);
  av_kern_stream_destroy(b->main);
  av__exec_host_free(&b->host);
  av_workload_destroy(b->w);
  free(b);
}

const char *av_exec_batch_gpu(const av_exec_batch_t *b) { return b ? b->dev.name : ""; }
int av_exec_batch_tma(const av_exec_batch_t *b) { return b && b->kv_maps ? 1 : 0; }

int av_exec_batch_set_kv_copy(av_exec_batch_t *b, av_kv_copy_t c, av_error_t *err) {
  av_kern_free(b->kv_maps);
  b->kv_maps = NULL;
  b->kv_map_rows = 0;
  if (c == AV_KV_COPY_CP_ASYNC) return AV_OK;
  const av_exec_host_t *h = &b->host;
  av_kern_batch_t kb = {.k = b->k, .v = b->v, .hkv = h->hkv, .head_dim = h->d,
                        .dtype = (int)h->dtype, .block_size = h->bs};
  av_kern_batch_hnd(&kb);
  return av_kern_kv_maps(&kb, h->n_blocks, &b->kv_maps, &b->kv_map_rows) != 0
             ? av__exec_cuda_fail(err)
             : AV_OK;
}

static int av_check_heads(const av_heads_t *h, av_error_t *err) {
  if (h->head_dim != 64 && h->head_dim != 128)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "heads.head_dim",
                        "head dim %d has no compiled kernel; compiled: 64, 128", h->head_dim);
  if (h->dtype != AV_DTYPE_FP16 && h->dtype != AV_DTYPE_BF16)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "heads.dtype",
                        "dtype %d has no compiled kernel; compiled: fp16, bf16", (int)h->dtype);
  if (h->hkv <= 0 || h->hq % h->hkv != 0 || h->hq / h->hkv > 64)
    return av_error_set(err, AV_ERR_UNSUPPORTED, AV_SRC, "heads",
                        "heads (%d, %d): the GQA group hq/hkv must be a whole number <= 64",
                        h->hq, h->hkv);
  return AV_OK;
}

av_exec_batch_t *av_exec_batch_create(const av_workload_t *w, uint64_t seed, int max_check,
                                      av_error_t *err) {
  if (av_check_heads(&w->heads, err) != AV_OK) return NULL;
  if (av_exec_available(err) != AV_OK) return NULL;
  av_exec_batch_t *b = calloc(1, sizeof *b);
  int rc = AV_OK;
  if (!b) {
    av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of host memory");
    return NULL;
  }
  AV_K(av_kern_device_info(0, &b->dev));
  /* The flush buffer is twice L2, so no timed run finds the previous one's data cached. */
  b->flush_bytes = (size_t)(b->dev.l2_bytes > 0 ? b->dev.l2_bytes : 64 << 20) * 2;
  const size_t need = av__exec_batch_bytes(w) + b->flush_bytes;
  if (need + ((size_t)512 << 20) > b->dev.free_bytes) {
    rc = av_error_set(err, AV_ERR_RANGE, AV_SRC, w->name,
                      "batch '%s' needs %.2f GiB of device memory (KV cache, queries, "
                      "outputs); %s has %.2f GiB free",
                      w->name, need / 1073741824.0, b->dev.name,
                      b->dev.free_bytes / 1073741824.0);
    goto done;
  }
  b->w = av_workload_clone(w);
  if (!b->w || av__exec_host_build(&b->host, w, seed) != 0 ||
      av__exec_host_reference(&b->host, w, max_check) != 0) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, w->name, "out of host memory building "
                      "the batch's KV cache");
    goto done;
  }
  const av_exec_host_t *h = &b->host;
  const size_t kv = (size_t)h->n_blocks * h->hkv * h->bs * h->d * 2;
  const size_t qb = (size_t)w->n_requests * h->hq * h->d * 2;
  AV_K(av_kern_malloc(&b->q, qb));
  AV_K(av_kern_malloc(&b->out, qb));
  AV_K(av_kern_malloc(&b->k, kv));
  AV_K(av_kern_malloc(&b->v, kv));
  AV_K(av_kern_malloc(&b->off, ((size_t)w->n_nodes + 1) * sizeof(int32_t)));
  AV_K(av_kern_malloc(&b->blocks, (size_t)h->n_blocks * sizeof(int32_t)));
  AV_K(av_kern_malloc(&b->flush, b->flush_bytes));
  AV_K(av_kern_h2d(b->q, h->q, qb));
  AV_K(av_kern_h2d(b->k, h->k, kv));
  AV_K(av_kern_h2d(b->v, h->v, kv));
  AV_K(av_kern_h2d(b->off, h->node_block_off, ((size_t)w->n_nodes + 1) * sizeof(int32_t)));
  AV_K(av_kern_h2d(b->blocks, h->block_ids, (size_t)h->n_blocks * sizeof(int32_t)));
  AV_K(av_kern_stream_create(&b->main, -1));
  rc = av_exec_batch_set_kv_copy(b, AV_KV_COPY_TMA, err);
done:
  if (rc != AV_OK) {
    av_exec_batch_destroy(b);
    return NULL;
  }
  return b;
}

static int av_is_nan16(uint16_t x, av_dtype_t t) {
  return t == AV_DTYPE_BF16 ? ((x & 0x7f80) == 0x7f80 && (x & 0x7f))
                            : ((x & 0x7c00) == 0x7c00 && (x & 0x3ff));
}

/* Poisons outputs and partial states with NaN, runs once, reads the output back. */
static int av_run_poisoned(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                           uint16_t *host_out, av_error_t *err) {
  int rc = AV_OK;
  const size_t n = (size_t)b->w->n_requests * b->host.hq * b->host.d;
  AV_K(av_kern_fill_nan(b->out, n, 2, b->main));
  AV_K(av_kern_fill_nan(d->part_o, (size_t)p->n_slots * b->host.hq * b->host.d, 4, b->main));
  AV_K(av_kern_fill_nan(d->part_lse, (size_t)p->n_slots * b->host.hq, 4, b->main));
  rc = av__exec_run_once(b, p, d, 0, err);
  if (rc != AV_OK) return rc;
  AV_K(av_kern_sync());
  AV_K(av_kern_d2h(host_out, b->out, n * 2));
done:
  return rc;
}

static int av_verify(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                     av_exec_result_t *out, av_error_t *err) {
  const av_exec_host_t *h = &b->host;
  const size_t n = (size_t)b->w->n_requests * h->hq * h->d;
  uint16_t *o1 = malloc(n * 2 + 2), *o2 = malloc(n * 2 + 2);
  int rc = AV_OK;
  if (!o1 || !o2) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
    goto done;
  }
  rc = av_run_poisoned(b, p, d, o1, err);
  if (rc == AV_OK) rc = av_run_poisoned(b, p, d, o2, err);
  if (rc != AV_OK) goto done;
  out->unwritten = 0;
  for (size_t i = 0; i < n; ++i) out->unwritten += av_is_nan16(o1[i], h->dtype);
  out->deterministic = memcmp(o1, o2, n * 2) == 0;
  out->max_rel_err = 0;
  out->checked = h->n_check;
  for (int32_t c = 0; c < h->n_check; ++c) {
    const uint16_t *g = o1 + ((size_t)h->check_req[c] * h->hq + h->check_head[c]) * h->d;
    const double *r = h->ref + (size_t)c * h->d;
    double num = 0, den = 0;
    for (int i = 0; i < h->d; ++i) {
      const double e = av__exec_to_double(g[i], h->dtype) - r[i];
      num += e * e;
      den += r[i] * r[i];
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    if (isnan(rel)) rel = INFINITY;
    if (rel > out->max_rel_err || c == 0) {
      out->max_rel_err = rel;
      out->worst_request = h->check_req[c];
      out->worst_head = h->check_head[c];
    }
  }
  out->verified = 1;
done:
  free(o1);
  free(o2);
  return rc;
}

/* One record of the trace: item -1 marks a merge CTA; its head is the KV head of its first
 * (request, query head) row. */
static int av_trace_rec(json_t *ctas, const av_kern_trace_rec_t *t, int64_t item, int head,
                        unsigned long long t0, av_error_t *err) {
  json_t *c = json_pack("{s:I, s:i, s:i, s:f, s:f}", "item", (json_int_t)item, "head", head,
                        "sm", (int)t->smid, "start_us", (double)(t->start_ns - t0) / 1e3,
                        "end_us", (double)(t->end_ns - t0) / 1e3);
  if (!c || json_array_append_new(ctas, c) != 0)
    return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  return AV_OK;
}

/* Evicts L2 before a measured run (av_exec_opts_t.flush_l2); 0 or a kernel-layer failure. */
static int av_flush(const av_exec_batch_t *b, const av_exec_opts_t *o, int byte) {
  switch (o->flush_l2) {
    case AV_FLUSH_WRITE: return av_kern_memset(b->flush, byte, b->flush_bytes, b->main);
    case AV_FLUSH_READ: return av_kern_read_all(b->flush, b->flush_bytes, b->main);
    default: return 0;
  }
}

static int av_trace_json(const av_exec_batch_t *b, const av_plan_t *p, av__plan_dev_t *d,
                         const av_exec_opts_t *o, av_exec_result_t *out, av_error_t *err) {
  /* Like the timed runs: the traced run reads KV from HBM, not from the verify run's L2. */
  int rc = av_flush(b, o, 0x5a) != 0 ? av__exec_cuda_fail(err) : AV_OK;
  if (rc == AV_OK) rc = av__exec_run_once(b, p, d, 1, err);
  const size_t n_att = (size_t)p->n_items * b->host.hkv, n = n_att + (size_t)av__exec_merge_ctas(p);
  const int64_t rows_per_cta = av_kern_merge_rows_per_cta();
  const int group = b->host.hq / b->host.hkv;
  av_kern_trace_rec_t *t = malloc(n * sizeof *t + 1);
  json_t *ctas = json_array(), *root = json_object();
  if (!t || !ctas || !root) {
    rc = av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
    goto done;
  }
  if (rc != AV_OK) goto done;
  AV_K(av_kern_sync());
  AV_K(av_kern_d2h(t, d->trace, n * sizeof *t));
  unsigned long long t0 = ~0ull, t1 = 0;
  for (size_t i = 0; i < n; ++i) {
    if (t[i].start_ns < t0) t0 = t[i].start_ns;
    if (t[i].end_ns > t1) t1 = t[i].end_ns;
  }
  for (size_t i = 0; i < n && rc == AV_OK; ++i) {
    if (i < n_att) {
      rc = av_trace_rec(ctas, &t[i], (int64_t)(i / b->host.hkv), (int)(i % b->host.hkv), t0, err);
    } else {
      const int64_t row = (int64_t)(i - n_att) * rows_per_cta;
      rc = av_trace_rec(ctas, &t[i], -1, (int)(row % b->host.hq) / group, t0, err);
    }
  }
  if (rc != AV_OK) goto done;
  json_object_set_new(root, "gpu", json_string(b->dev.name));
  json_object_set_new(root, "makespan_us", json_real(n ? (double)(t1 - t0) / 1e3 : 0.0));
  json_object_set(root, "ctas", ctas);
  out->trace = root;
  root = NULL;
done:
  free(t);
  json_decref(ctas);
  json_decref(root);
  return rc;
}

static int av_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median, least and most of one plan's timed runs (us is sorted in place). */
static void av_summarise(double *us, int reps, av_exec_result_t *out) {
  qsort(us, (size_t)reps, sizeof *us, av_cmp_double);
  out->median_us = reps % 2 ? us[reps / 2] : 0.5 * (us[reps / 2 - 1] + us[reps / 2]);
  out->min_us = us[0];
  out->max_us = us[reps - 1];
  out->repeats = reps;
}

/* Times n uploaded plans: each round runs every plan once, each run after the L2 flush;
 * the first o->warmup rounds are not timed. us holds n x reps. */
static int av_time(const av_exec_batch_t *b, const av_plan_t *const *p, av__plan_dev_t *d,
                   int n, const av_exec_opts_t *o, av_exec_result_t *out, av_error_t *err) {
  const int reps = o->repeats > 0 ? o->repeats : 1;
  double *us = malloc((size_t)n * (size_t)reps * sizeof *us);
  int rc = AV_OK;
  if (!us) return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  for (int i = -(o->warmup > 0 ? o->warmup : 0); i < reps; ++i) {
    for (int k = 0; k < n; ++k) {
      /* Untimed: overwrite L2 with another buffer so this run reads KV from HBM. */
      AV_K(av_flush(b, o, i & 0xff));
      rc = av__exec_run_once(b, p[k], &d[k], 0, err);
      if (rc != AV_OK) goto done;
      double t = 0;
      AV_K(av__exec_elapsed_us(&d[k], &t));
      if (i >= 0) us[(size_t)k * reps + i] = t;
    }
  }
  for (int k = 0; k < n; ++k) av_summarise(us + (size_t)k * reps, reps, &out[k]);
done:
  free(us);
  return rc;
}

/* What every result of batch b starts with: the device and the batch's unique KV bytes. */
static void av_result_init(const av_exec_batch_t *b, av_exec_result_t *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->gpu, sizeof out->gpu, "%.127s", b->dev.name);
  av_workload_stats_t ws;
  av_workload_stats(b->w, &ws);
  out->unique_kv_bytes = ws.unique_kv_bytes;
}

int av_exec_batch_run(av_exec_batch_t *b, const av_plan_t *p, const av_exec_opts_t *opts,
                      av_exec_result_t *out, av_error_t *err) {
  av_exec_opts_t o;
  if (opts)
    o = *opts;
  else
    av_exec_opts_default(&o);
  av_result_init(b, out);
  av__plan_dev_t d;
  memset(&d, 0, sizeof d);
  int rc = av__plan_validate(b, p, &d, err);
  if (rc == AV_OK) rc = av__plan_upload(b, p, &d, err);
  out->ctas = d.ctas;
  if (rc == AV_OK && o.verify) rc = av_verify(b, p, &d, out, err);
  if (rc == AV_OK && o.trace) rc = av_trace_json(b, p, &d, &o, out, err);
  if (rc == AV_OK && o.repeats > 0) rc = av_time(b, &p, &d, 1, &o, out, err);
  if (rc == AV_OK && av_kern_sync() != 0) rc = av__exec_cuda_fail(err);
  av__plan_dev_free(&d);
  if (rc != AV_OK) av_exec_result_free(out);
  return rc;
}

int av_exec_batch_time(av_exec_batch_t *b, const av_plan_t *const *plans, int n,
                       const av_exec_opts_t *opts, av_exec_result_t *outs, av_error_t *err) {
  av_exec_opts_t o;
  if (opts)
    o = *opts;
  else
    av_exec_opts_default(&o);
  if (n < 1) return av_error_set(err, AV_ERR_RANGE, AV_SRC, NULL, "no plans to time");
  av__plan_dev_t *d = calloc((size_t)n, sizeof *d);
  if (!d) return av_error_set(err, AV_ERR_NOMEM, AV_SRC, NULL, "out of memory");
  int rc = AV_OK;
  for (int first = 0, end = 0; first < n && rc == AV_OK; first = end) {
    /* a group: as many plans as fit in device memory together (at least one) */
    for (end = first; end < n && rc == AV_OK; ++end) {
      av_result_init(b, &outs[end]);
      av_error_t e;
      av_error_clear(&e);
      rc = av__plan_validate(b, plans[end], &d[end], &e);
      if (rc == AV_ERR_RANGE && end > first) { /* no room beside the group: next group */
        av__plan_dev_free(&d[end]);
        rc = AV_OK;
        break;
      }
      if (rc == AV_OK) rc = av__plan_upload(b, plans[end], &d[end], &e);
      if (rc != AV_OK && err) *err = e;
      outs[end].ctas = d[end].ctas;
    }
    if (rc == AV_OK) rc = av_time(b, plans + first, d + first, end - first, &o, outs + first, err);
    if (rc == AV_OK && av_kern_sync() != 0) rc = av__exec_cuda_fail(err);
    for (int k = first; k < end; ++k) av__plan_dev_free(&d[k]);
  }
  for (int k = 0; k < n; ++k) av__plan_dev_free(&d[k]);
  free(d);
  return rc;
}

int av_exec_run(const av_plan_t *p, const av_workload_t *w, const av_exec_opts_t *opts,
                av_exec_result_t *out, av_error_t *err) {
  av_exec_batch_t *b = av_exec_batch_create(w, 1, 0, err);
  if (!b) return err && err->code ? err->code : AV_ERR_INTERNAL;
  int rc = av_exec_batch_run(b, p, opts, out, err);
  av_exec_batch_destroy(b);
  return rc;
}

int av_exec_copy_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err) {
  int rc = av_exec_available(err);
  if (rc != AV_OK) return rc;
  if (av_kern_copy_bandwidth(bytes, reps, GBps) != 0) return av__exec_cuda_fail(err);
  return AV_OK;
}

int av_exec_read_bandwidth(size_t bytes, int reps, double *GBps, av_error_t *err) {
  int rc = av_exec_available(err);
  if (rc != AV_OK) return rc;
  if (av_kern_read_bandwidth(bytes, reps, GBps) != 0) return av__exec_cuda_fail(err);
  return AV_OK;
}

#endif /* AV_HAVE_CUDA */
