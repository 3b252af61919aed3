/* Public batches: the library's workload builders behind anvil_workload_t handles, with the
 * block table in the layout serving engines hold (a padded row of block ids per request and
 * its token count). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "core/json_util.h"

anvil_workload_t *av__api_workload_wrap(av_workload_t *w) {
  if (!w) return NULL;
  anvil_workload_t *h = malloc(sizeof *h);
  if (!h) {
    av_workload_destroy(w);
    return NULL;
  }
  h->refs = 1;
  h->w = w;
  return h;
}

anvil_workload_t *av__api_workload_ref(const anvil_workload_t *w) {
  anvil_workload_t *m = (anvil_workload_t *)w;
  m->refs++;
  return m;
}

void anvil_workload_destroy(anvil_workload_t *w) {
  if (!w || --w->refs > 0) return;
  av_workload_destroy(w->w);
  free(w);
}

/* Hands a built workload (or the builder's error) to the caller. */
static int finish(av_workload_t *w, anvil_workload_t **out, av_error_t *e, anvil_error_t *err) {
  *out = av__api_workload_wrap(w);
  if (*out) return av__api_error(err, e, AV_OK);
  if (w) av_error_set(e, AV_ERR_NOMEM, NULL, NULL, "out of memory");
  return av__api_error(err, e, AV_ERR_INTERNAL);
}

int anvil_workload_from_block_table(const int32_t *table, int64_t row_stride,
                                    const int32_t *kv_tokens, int32_t n_requests,
                                    int block_size, const anvil_heads_t *heads,
                                    anvil_workload_t **out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_heads_t h = av__api_heads(heads);
  av__api_bt_buf_t buf = {0};
  av_workload_t *w = NULL;
  av__api_block_table(&(av__api_bt_t){table, row_stride, kv_tokens, n_requests}, block_size, &h,
                      &buf, &w, &e);
  av__api_bt_buf_free(&buf);
  return finish(w, out, &e, err);
}

int anvil_workload_from_levels(const int64_t *B, const int64_t *L, int n_levels,
                               const anvil_heads_t *heads, anvil_workload_t **out,
                               anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  av_heads_t h = av__api_heads(heads);
  return finish(av_workload_from_levels(B, L, n_levels, &h, &e), out, &e, err);
}

int anvil_workload_from_explicit(const int32_t *parents, const int64_t *kv_tokens,
                                 int32_t n_nodes, const int32_t *request_node,
                                 int32_t n_requests, const anvil_heads_t *heads,
                                 anvil_workload_t **out, anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  if (n_nodes < 1 || n_requests < 1) {
    av_error_set(&e, AV_ERR_SCHEMA, "workload", n_nodes < 1 ? "nodes" : "requests",
                 "empty; expected at least one node and one request");
    return av__api_error(err, &e, AV_ERR_SCHEMA);
  }
  av_workload_t *w = av_workload_create(n_nodes, n_requests);
  if (!w) return finish(NULL, out, &e, err);
  snprintf(w->name, sizeof w->name, "explicit");
  w->heads = av__api_heads(heads);
  for (int32_t u = 0; u < n_nodes; u++) {
    w->nodes[u].parent = parents[u];
    w->nodes[u].kv_len_tokens = kv_tokens[u];
  }
  for (int32_t r = 0; r < n_requests; r++) {
    if (request_node[r] < 0 || request_node[r] >= n_nodes) {
      char where[64];
      snprintf(where, sizeof where, "requests[%d]", (int)r);
      av_error_set(&e, AV_ERR_RANGE, "workload", where,
                   "node %d is out of range; expected an integer in [0, %d]",
                   (int)request_node[r], (int)n_nodes - 1);
      av_workload_destroy(w);
      return av__api_error(err, &e, AV_ERR_RANGE);
    }
    w->request_node[r] = request_node[r];
  }
  if (av_workload_finalize(w, &e)) {
    av_workload_destroy(w);
    w = NULL;
  }
  return finish(w, out, &e, err);
}

static int from_doc(json_t *spec, const char *source, const anvil_heads_t *heads,
                    anvil_workload_t **out, av_error_t *e, anvil_error_t *err) {
  av_heads_t h = av__api_heads(heads);
  av_jctx_t c = {.source = source, .err = e};
  av_workload_t *w = NULL;
  if (av_json_expect_object(&c, spec, "") == AV_OK) w = av_workload_from_json(spec, &h, &c, "");
  json_decref(spec);
  return finish(w, out, e, err);
}

int anvil_workload_from_json(const char *json_text, const char *source,
                             const anvil_heads_t *heads, anvil_workload_t **out,
                             anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  json_t *spec = NULL;
  if (!source) source = "workload";
  if (av_json_load_string(json_text, source, &spec, &e)) return av__api_error(err, &e, 1);
  return from_doc(spec, source, heads, out, &e, err);
}

int anvil_workload_load(const char *path, const anvil_heads_t *heads, anvil_workload_t **out,
                        anvil_error_t *err) {
  av_error_t e;
  av_error_clear(&e);
  *out = NULL;
  json_t *spec = NULL;
  if (av_json_load_file(path, &spec, &e)) return av__api_error(err, &e, 1);
  return from_doc(spec, path, heads, out, &e, err);
}

char *anvil_workload_to_json(const anvil_workload_t *w) {
  json_t *doc = av_workload_to_json(w->w);
  char *text = doc ? av_json_dump_text(doc) : NULL;
  json_decref(doc);
  return text;
}

void anvil_workload_info(const anvil_workload_t *w, anvil_workload_info_t *out) {
  av_workload_stats_t s;
  av_workload_stats(w->w, &s);
  memset(out, 0, sizeof *out);
  out->requests = s.requests;
  out->nodes = s.nodes;
  out->depth = s.depth;
  out->heads = (anvil_heads_t){w->w->heads.hq, w->w->heads.hkv, w->w->heads.head_dim,
                               (int)w->w->heads.dtype};
  out->block_size = w->w->block_size_tokens;
  out->unique_kv_tokens = s.unique_kv_tokens;
  out->query_centric_kv_tokens = s.query_centric_kv_tokens;
  out->unique_kv_bytes = s.unique_kv_bytes;
  out->query_centric_kv_bytes = s.query_centric_kv_bytes;
  out->sharing_ratio = s.sharing_ratio;
}

void anvil_workload_nodes(const anvil_workload_t *w, int32_t *parents, int64_t *kv_tokens) {
  for (int32_t u = 0; u < w->w->n_nodes; u++) {
    if (parents) parents[u] = w->w->nodes[u].parent;
    if (kv_tokens) kv_tokens[u] = w->w->nodes[u].kv_len_tokens;
  }
}

void anvil_workload_requests(const anvil_workload_t *w, int32_t *request_node,
                             int64_t *request_kv_tokens) {
  for (int32_t r = 0; r < w->w->n_requests; r++) {
    if (request_node) request_node[r] = w->w->request_node[r];
    if (request_kv_tokens) request_kv_tokens[r] = w->w->request_kv_tokens[r];
  }
}
