/* Kernel variants table (kernels/variants.json): one row per compiled tile configuration and
 * architecture with the resources the compiler reported, so occupancy models the real
 * kernels (DESIGN §Data model). The file is generated from the compiler's resource report:
 *   {"generated_by": "...", "variants": [{"kind": "partial", "m": 16, "n": 64, "warps": 4,
 *     "head_dim": 128, "dtype": "fp16", "arch": 90, "threads": 128, "regs": 96,
 *     "smem": 20480, "spills": 0}, ...]}
 * (kind/from_name live in core/variants_names.c.) */
#include "core/variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/json_util.h"

static int parse_dtype(const av_jctx_t *c, const json_t *obj, const char *path,
                       av_dtype_t *out) {
  const char *s;
  int rc = av_json_get_string(c, obj, path, "dtype", 1, NULL, &s);
  if (rc) return rc;
  if (strcmp(s, "fp16") == 0) *out = AV_DTYPE_FP16;
  else if (strcmp(s, "bf16") == 0) *out = AV_DTYPE_BF16;
  else {
    char where[256];
    av_jpath_key(where, sizeof where, path, "dtype");
    return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                        "unknown dtype '%s'; expected one of: fp16, bf16", s);
  }
  return AV_OK;
}

static int parse_kind(const av_jctx_t *c, const json_t *obj, const char *path,
                      av_kernel_kind_t *out) {
  const char *s;
  int rc = av_json_get_string(c, obj, path, "kind", 1, NULL, &s);
  if (rc) return rc;
  if (av_kernel_kind_from_name(s, out) == AV_OK) return AV_OK;
  static const av_kernel_kind_t kinds[] = {AV_KERNEL_PARTIAL, AV_KERNEL_PERSISTENT,
                                           AV_KERNEL_DECODE, AV_KERNEL_MERGE};
  const char *names[5];
  for (int i = 0; i < 4; i++) names[i] = av_kernel_kind_name(kinds[i]);
  names[4] = NULL;
  char list[256], where[256];
  av_names_join(list, sizeof list, names, 0);
  av_jpath_key(where, sizeof where, path, "kind");
  return av_error_set(c->err, AV_ERR_NAME, c->source, where,
                      "unknown kernel kind '%s'; expected one of: %s", s, list);
}

/* Does v provide the tile for head_dim and dtype on sm_arch (0: on any architecture)? */
static int provides(const av_variant_t *v, const av_tile_t *tile, int head_dim,
                    av_dtype_t dtype, int sm_arch) {
  return v->tile.kind == tile->kind && v->tile.m_rows == tile->m_rows &&
         v->tile.n_tokens == tile->n_tokens && v->tile.warps == tile->warps &&
         v->head_dim == head_dim && v->dtype == dtype && (!sm_arch || v->sm_arch == sm_arch);
}

static int same_key(const av_variant_t *a, const av_variant_t *b) {
  return provides(a, &b->tile, b->head_dim, b->dtype, b->sm_arch);
}

static int parse_variant(const av_jctx_t *c, const json_t *obj, const char *path,
                         av_variant_t *v) {
  static const char *const keys[] = {"kind", "m", "n", "warps", "head_dim", "dtype", "arch",
                                     "threads", "regs", "smem", "spills", NULL};
  int64_t m, n, warps, hd, arch, threads, regs, smem, spills;
  int rc = av_json_expect_object(c, obj, path);
  if (!rc) rc = av_json_check_keys(c, obj, path, keys);
  if (!rc) rc = parse_kind(c, obj, path, &v->tile.kind);
  if (!rc) rc = av_json_get_int(c, obj, (av_json_field_t){path, "m", 1}, 0, 1, 1024, &m);
  /* The merge kernel walks partial states, not KV tiles: its n is 0. */
  if (!rc)
    rc = av_json_get_int(c, obj, (av_json_field_t){path, "n", 1}, 0,
                         v->tile.kind == AV_KERNEL_MERGE ? 0 : 1, 65536, &n);
  if (!rc) rc = av_json_get_int(c, obj, (av_json_field_t){path, "warps", 1}, 0, 1, 32, &warps);
  if (!rc) rc = av_json_get_int(c, obj, (av_json_field_t){path, "head_dim", 1}, 0, 1, 1024, &hd);
  if (!rc) rc = parse_dtype(c, obj, path, &v->dtype);
  if (!rc) rc = av_json_get_int(c, obj, (av_json_field_t){path, "arch", 1}, 0, 50, 150, &arch);
  if (!rc)
    rc = av_json_get_int(c, obj, (av_json_field_t){path, "threads", 1}, 0, 1, 1024, &threads);
  if (!rc) rc = av_json_get_int(c, obj, (av_json_field_t){path, "regs", 1}, 0, 0, 255, &regs);
  if (!rc) rc = av_json_get_int(c, obj, (av_json_field_t){path, "smem", 1}, 0, 0, 16 << 20, &smem);
  if (!rc)
    rc = av_json_get_int(c, obj, (av_json_field_t){path, "spills", 1}, 0, 0, 1 << 30, &spills);
  if (rc) return rc;
  if (hd != 64 && hd != 128 && hd != 256) {
    char where[256];
    av_jpath_key(where, sizeof where, path, "head_dim");
    return av_error_set(c->err, AV_ERR_RANGE, c->source, where,
                        "unsupported head dim %lld; expected 64, 128 or 256", (long long)hd);
  }
  if (threads != warps * 32) {
    char where[256];
    av_jpath_key(where, sizeof where, path, "threads");
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, where,
                        "%lld threads do not match %lld warps (expected %lld)",
                        (long long)threads, (long long)warps, (long long)(warps * 32));
  }
  v->tile.m_rows = (int)m;
  v->tile.n_tokens = (int)n;
  v->tile.warps = (int)warps;
  v->head_dim = (int)hd;
  v->sm_arch = (int)arch;
  v->threads = (int)threads;
  v->regs_per_thread = (int)regs;
  v->smem_bytes = (int)smem;
  v->spill_bytes = (int)spills;
  return AV_OK;
}

static int parse_table(const av_jctx_t *c, const json_t *root, av_variants_t *vs) {
  static const char *const keys[] = {"generated_by", "variants", NULL};
  const char *gen;
  int rc = av_json_expect_object(c, root, "");
  if (!rc) rc = av_json_check_keys(c, root, "", keys);
  if (!rc) rc = av_json_get_string(c, root, "", "generated_by", 1, NULL, &gen);
  if (rc) return rc;
  json_t *arr = json_object_get(root, "variants");
  if (!arr)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "variants",
                        "missing required key 'variants'");
  if ((rc = av_json_expect_array(c, arr, "variants"))) return rc;
  size_t n = json_array_size(arr);
  if (n == 0)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, "variants",
                        "expected a non-empty array of variants");
  vs->v = calloc(n, sizeof *vs->v);
  if (!vs->v) return av_error_set(c->err, AV_ERR_NOMEM, c->source, "variants", "out of memory");
  for (size_t i = 0; i < n; i++) {
    char where[64];
    av_jpath_index(where, sizeof where, "variants", i);
    av_variant_t *v = &vs->v[i];
    if ((rc = parse_variant(c, json_array_get(arr, i), where, v))) return rc;
    for (size_t j = 0; j < i; j++)
      if (same_key(&vs->v[j], v))
        return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                            "duplicate variant: same kind, m, n, warps, head_dim, dtype and "
                            "arch as variants[%zu]",
                            j);
    vs->n = (int)i + 1;
  }
  return AV_OK;
}

av_variants_t *av_variants_load(const char *path, av_error_t *err) {
  char def[1100];
  if (!path) {
    snprintf(def, sizeof def, "%s/kernels/variants.json", av_data_dir());
    path = def;
  }
  json_t *root;
  if (av_json_load_file(path, &root, err)) return NULL;
  av_variants_t *vs = calloc(1, sizeof *vs);
  if (!vs) {
    json_decref(root);
    av_error_set(err, AV_ERR_NOMEM, path, NULL, "out of memory");
    return NULL;
  }
  av_jctx_t c = {.source = path, .err = err};
  int rc = parse_table(&c, root, vs);
  json_decref(root);
  if (rc) {
    av_variants_destroy(vs);
    return NULL;
  }
  return vs;
}

void av_variants_destroy(av_variants_t *vs) {
  if (!vs) return;
  free(vs->v);
  free(vs);
}

const av_variant_t *av_variants_find(const av_variants_t *vs, const av_tile_t *tile,
                                     int head_dim, av_dtype_t dtype, int sm_arch) {
  if (!vs) return NULL;
  for (int i = 0; i < vs->n; i++)
    if (provides(&vs->v[i], tile, head_dim, dtype, sm_arch)) return &vs->v[i];
  return NULL;
}

static int cmp_tile(const void *pa, const void *pb) {
  const av_tile_t *a = pa, *b = pb;
  if (a->m_rows != b->m_rows) return a->m_rows < b->m_rows ? -1 : 1;
  if (a->n_tokens != b->n_tokens) return a->n_tokens < b->n_tokens ? -1 : 1;
  if (a->warps != b->warps) return a->warps < b->warps ? -1 : 1;
  return 0;
}

/* Sorted by (m, n, warps) so schedulers iterate tiles in a stable order whatever the file's
 * row order. Rows are unique per key (the loader rejects duplicates). */
int av_variants_tiles(const av_variants_t *vs, av_kernel_kind_t kind, int head_dim,
                      av_dtype_t dtype, int sm_arch, av_tile_t *out, int max) {
  if (!vs) return 0;
  int count = 0;
  for (int i = 0; i < vs->n; i++) {
    const av_variant_t *v = &vs->v[i];
    if (v->tile.kind != kind || v->head_dim != head_dim || v->dtype != dtype ||
        (sm_arch && v->sm_arch != sm_arch))
      continue;
    int seen = 0; /* over all architectures, a tile compiled for several counts once */
    for (int j = 0; j < i && !sm_arch && !seen; j++)
      seen = provides(&vs->v[j], &v->tile, head_dim, dtype, 0);
    if (seen) continue;
    if (count < max) out[count] = v->tile;
    count++;
  }
  /* Sorting only what was written is right only when everything fit; otherwise the caller
   * learns the count and asks again with room for all of them. */
  if (count <= max && count > 1) qsort(out, (size_t)count, sizeof *out, cmp_tile);
  return count;
}

int av_variants_require(const av_variants_t *vs, const av_tile_t *t, const av_heads_t *h,
                        const av_gpu_t *gpu, const char *where, av_error_t *err) {
  const int arch = gpu ? gpu->sm_arch : 0;
  if (av_variants_find(vs, t, h->head_dim, h->dtype, arch)) return AV_OK;
  av_tile_t have[48];
  int n = av_variants_tiles(vs, t->kind, h->head_dim, h->dtype, arch, have, 48);
  char list[512] = "none", on[96] = "on any architecture";
  size_t used = 0;
  for (int i = 0; i < n && i < 48 && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%dx%dx%dw", i ? ", " : "",
                             have[i].m_rows, have[i].n_tokens, have[i].warps);
  if (gpu) snprintf(on, sizeof on, "on sm_%d (GPU %s)", gpu->sm_arch, gpu->name);
  const char *kind = av_kernel_kind_name(t->kind);
  return av_error_set(err, AV_ERR_UNSUPPORTED, NULL, where,
                      "no compiled kernel variant for tile %s m=%d n=%d warps=%d (head_dim "
                      "%d, %s) %s; compiled %s tiles (m x n x warps): %s",
                      kind, t->m_rows, t->n_tokens, t->warps, h->head_dim,
                      av_dtype_name(h->dtype), on, kind, list);
}
