/* anvil_run and the device plan (include/anvil/run.h) over executor/device_plan.h: the
 * caller's DLPack tensors checked against the uploaded plan (dtype, shape, strides, device),
 * the paged cache's layout told from its shape, then one run on the caller's stream. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/run.h"
#include "api/api_internal.h"
#include "executor/device_plan.h"

struct anvil_device_plan {
  av_dplan_t *dp;
};

#define SRC "run"

void anvil_device_capacity_of(const anvil_plan_t *p, anvil_device_capacity_t *out) {
  av_dplan_cap_t c;
  av_dplan_cap_of(av__api_plan_settled(p), p->w->w, &c);
  *out = (anvil_device_capacity_t){c.requests, c.items, c.item_queries, c.segments,
                                   c.blocks, c.slots, c.merge_entries, c.launches,
                                   c.persistent_ctas};
}

int anvil_device_plan_create(const anvil_device_capacity_t *cap, const anvil_heads_t *heads,
                             int block_size, anvil_device_plan_t **out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  const av_dplan_cap_t c = {cap->requests, cap->items, cap->item_queries, cap->segments,
                            cap->blocks, cap->slots, cap->merge_entries, cap->launches,
                            cap->persistent_ctas};
  const av_heads_t h = av__api_heads(heads);
  anvil_device_plan_t *dp = calloc(1, sizeof *dp);
  if (!dp) return av__api_error(err, &e, av_error_set(&e, AV_ERR_NOMEM, SRC, NULL,
                                                      "out of memory"));
  dp->dp = av_dplan_create(&c, &h, block_size, &e);
  if (!dp->dp) {
    free(dp);
    return av__api_error(err, &e, e.code ? e.code : AV_ERR_INTERNAL);
  }
  *out = dp;
  return av__api_error(err, &e, AV_OK);
}

void anvil_device_plan_destroy(anvil_device_plan_t *dp) {
  if (!dp) return;
  av_dplan_destroy(dp->dp);
  free(dp);
}

void anvil_device_plan_offsets(const anvil_device_plan_t *dp, anvil_device_offsets_t *out) {
  const av_dplan_offsets_t *o = av_dplan_offsets(dp->dp);
  *out = (anvil_device_offsets_t){o->items, o->queries, o->segs, o->qoff, o->queue,
                                  o->merge_off, o->merge_slots, o->block_ids, o->maps,
                                  o->part_lse, o->part_o, o->bytes};
}

void *anvil_device_plan_buffer(const anvil_device_plan_t *dp) { return av_dplan_device(dp->dp); }
int anvil_device_plan_device(const anvil_device_plan_t *dp) { return av_dplan_device_id(dp->dp); }

int anvil_device_plan_upload(anvil_device_plan_t *dp, const anvil_plan_t *p,
                             const int32_t *table, int64_t row_stride, void *stream,
                             anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  const int rc = av_dplan_upload(dp->dp, av__api_plan_settled(p), p->w->w, table, row_stride,
                                 stream, &e);
  return av__api_error(err, &e, rc);
}

int anvil_device_plan_set_kv_copy(anvil_device_plan_t *dp, int kv_copy, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  int rc = AV_OK;
  if (kv_copy != ANVIL_KV_COPY_TMA && kv_copy != ANVIL_KV_COPY_CP_ASYNC)
    rc = av_error_set(&e, AV_ERR_RANGE, SRC, "kv_copy",
                      "%d; expected ANVIL_KV_COPY_TMA (%d) or ANVIL_KV_COPY_CP_ASYNC (%d)",
                      kv_copy, ANVIL_KV_COPY_TMA, ANVIL_KV_COPY_CP_ASYNC);
  if (!rc) rc = av_dplan_set_kv_copy(dp->dp, (av_kv_copy_t)kv_copy, &e);
  return av__api_error(err, &e, rc);
}

/* One tensor's expected rank, dims (-1: any) and element type. */
typedef struct want {
  const char *name;
  int ndim;
  int64_t dims[4];
  uint8_t code, bits;
  const char *dtype;
} want_t;

static int64_t stride_of(const DLTensor *t, int i) {
  if (t->strides) return t->strides[i];
  int64_t s = 1;
  for (int j = i + 1; j < t->ndim; ++j) s *= t->shape[j];
  return s;
}

/* Rank, element type, device and shape of t against w. */
static int check_tensor(const DLTensor *t, const want_t *w, av_error_t *e) {
  if (!t || !t->data)
    return av_error_set(e, AV_ERR_USAGE, SRC, w->name, "missing; expected a DLPack tensor");
  if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged)
    return av_error_set(e, AV_ERR_MISMATCH, SRC, w->name,
                        "on DLPack device type %d; expected CUDA memory (kDLCUDA)",
                        (int)t->device.device_type);
  if (t->dtype.code != w->code || t->dtype.bits != w->bits || t->dtype.lanes != 1)
    return av_error_set(e, AV_ERR_MISMATCH, SRC, w->name,
                        "dtype (code %d, %d bits, %d lanes); expected %s", (int)t->dtype.code,
                        (int)t->dtype.bits, (int)t->dtype.lanes, w->dtype);
  if (t->ndim != w->ndim)
    return av_error_set(e, AV_ERR_MISMATCH, SRC, w->name, "%d dimensions; expected %d",
                        (int)t->ndim, w->ndim);
  for (int i = 0; i < w->ndim; ++i)
    if (w->dims[i] >= 0 && t->shape[i] != w->dims[i])
      return av_error_set(e, AV_ERR_MISMATCH, SRC, w->name,
                          "dimension %d is %" PRId64 "; expected %" PRId64, i, t->shape[i],
                          w->dims[i]);
  return AV_OK;
}

static int check_contiguous(const DLTensor *t, const char *name, av_error_t *e) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] > 1 && stride_of(t, i) != s)
      return av_error_set(e, AV_ERR_MISMATCH, SRC, name,
                          "stride %" PRId64 " in dimension %d; expected a contiguous tensor "
                          "(stride %" PRId64 ")",
                          stride_of(t, i), i, s);
    s *= t->shape[i];
  }
  return AV_OK;
}

static const void *data_of(const DLTensor *t) {
  return (const char *)t->data + t->byte_offset;
}

/* The paged cache's layout from its shape (kv_layout where block size and KV heads are
 * equal) and its element strides: block, KV head, token. */
static int kv_strides(const DLTensor *k, const av_dplan_shape_t *s, int layout,
                      av_run_tensors_t *r, av_error_t *e) {
  const int bs = s->block_size, hkv = s->heads.hkv;
  const int nhd = k->shape[1] == bs && k->shape[2] == hkv;
  const int hnd = k->shape[1] == hkv && k->shape[2] == bs;
  if (layout == ANVIL_KV_AUTO && nhd && hnd)
    return av_error_set(e, AV_ERR_MISMATCH, SRC, "k_cache",
                        "block size and KV heads are both %d, so the shape does not tell NHD "
                        "from HND; expected kv_layout set to NHD or HND", bs);
  if (layout == ANVIL_KV_AUTO) layout = nhd ? ANVIL_KV_NHD : hnd ? ANVIL_KV_HND : -1;
  if ((layout == ANVIL_KV_NHD && !nhd) || (layout == ANVIL_KV_HND && !hnd) || layout < 0)
    return av_error_set(e, AV_ERR_MISMATCH, SRC, "k_cache",
                        "shape [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]; expected "
                        "%s[n_blocks, %d, %d, %d]%s%s",
                        k->shape[0], k->shape[1], k->shape[2], k->shape[3],
                        layout == ANVIL_KV_HND ? "HND " : "NHD ",
                        layout == ANVIL_KV_HND ? hkv : bs, layout == ANVIL_KV_HND ? bs : hkv,
                        s->heads.head_dim, layout < 0 ? " or HND " : "",
                        layout < 0 ? "[n_blocks, hkv, block, d]" : "");
  const int nh = layout == ANVIL_KV_NHD;
  r->kv_stride_block = stride_of(k, 0);
  r->kv_stride_token = stride_of(k, nh ? 1 : 2);
  r->kv_stride_head = stride_of(k, nh ? 2 : 1);
  r->n_blocks = k->shape[0];
  if (k->shape[3] > 1 && stride_of(k, 3) != 1)
    return av_error_set(e, AV_ERR_MISMATCH, SRC, "k_cache",
                        "head-dim stride %" PRId64 "; expected 1 (contiguous heads)",
                        stride_of(k, 3));
  return AV_OK;
}

/* Every tensor of t against the uploaded plan, into the executor's view r. */
static int check_tensors(const anvil_tensors_t *t, const av_dplan_shape_t *s,
                         av_run_tensors_t *r, av_error_t *e) {
  const int bf = s->heads.dtype == AV_DTYPE_BF16;
  const uint8_t code = bf ? kDLBfloat : kDLFloat;
  const char *dt = bf ? "bf16" : "fp16";
  const int64_t n = s->n_requests, hq = s->heads.hq, d = s->heads.head_dim;
  const want_t q = {"q", 3, {n, hq, d}, code, 16, dt}, o = {"out", 3, {n, hq, d}, code, 16, dt};
  const want_t kv = {"k_cache", 4, {-1, -1, -1, d}, code, 16, dt};
  const want_t l = {"lse", 2, {n, hq}, kDLFloat, 32, "float32"};
  int rc = check_tensor(t->q, &q, e);
  if (!rc) rc = check_contiguous(t->q, "q", e);
  if (!rc) rc = check_tensor(t->out, &o, e);
  if (!rc) rc = check_contiguous(t->out, "out", e);
  if (!rc && t->lse) rc = check_tensor(t->lse, &l, e);
  if (!rc && t->lse) rc = check_contiguous(t->lse, "lse", e);
  if (!rc) rc = check_tensor(t->k_cache, &kv, e);
  if (!rc) rc = kv_strides(t->k_cache, s, t->kv_layout, r, e);
  if (rc) return rc;
  const DLTensor *k = t->k_cache, *v = t->v_cache;
  const want_t vw = {"v_cache", 4, {k->shape[0], k->shape[1], k->shape[2], d}, code, 16, dt};
  rc = check_tensor(v, &vw, e);
  for (int i = 0; !rc && i < 4; ++i)
    if (k->shape[i] > 1 && stride_of(v, i) != stride_of(k, i))
      rc = av_error_set(e, AV_ERR_MISMATCH, SRC, "v_cache",
                        "stride %" PRId64 " in dimension %d; expected k_cache's, %" PRId64,
                        stride_of(v, i), i, stride_of(k, i));
  if (!rc && (uintptr_t)data_of(v) % 16 != 0)
    rc = av_error_set(e, AV_ERR_MISMATCH, SRC, "v_cache",
                      "starts at %p; expected a 16-byte aligned start", data_of(v));
  const DLTensor *all[] = {t->q, t->out, k, v, t->lse};
  const char *names[] = {"q", "out", "k_cache", "v_cache", "lse"};
  for (int i = 1; !rc && i < 5; ++i)
    if (all[i] && all[i]->device.device_id != t->q->device.device_id)
      rc = av_error_set(e, AV_ERR_MISMATCH, SRC, names[i], "on CUDA device %d; expected q's, %d",
                        (int)all[i]->device.device_id, (int)t->q->device.device_id);
  if (rc) return rc;
  r->q = data_of(t->q);
  r->out = (void *)data_of(t->out);
  r->k = data_of(k);
  r->v = data_of(v);
  r->lse = t->lse ? (float *)data_of(t->lse) : NULL;
  r->device = t->q->device.device_id;
  return AV_OK;
}

int anvil_run(anvil_device_plan_t *dp, const anvil_tensors_t *t, void *stream,
              anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_dplan_shape_t s;
  av_dplan_shape(dp->dp, &s);
  int rc = s.n_requests ? AV_OK
                        : av_error_set(&e, AV_ERR_USAGE, SRC, "plan",
                                       "no plan uploaded; expected anvil_device_plan_upload "
                                       "before anvil_run");
  av_run_tensors_t r;
  memset(&r, 0, sizeof r);
  if (!rc) rc = check_tensors(t, &s, &r, &e);
  if (!rc) rc = av_dplan_run(dp->dp, &r, stream, &e);
  return av__api_error(err, &e, rc);
}
