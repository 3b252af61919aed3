/* The serving engines' block table (a padded row of int32 block ids per request plus its
 * token count) as the library's builder takes it: the rows read in place, with the blocks
 * used and the tokens used of each request's last block. The buffers are the caller's, so a
 * planner keeps them between steps. */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_internal.h"

/* Grows *p to hold n elements of size `elem` (kept when large enough). */
static int grow(void *p, size_t *cap, size_t n, size_t elem) {
  if (n <= *cap && *(void **)p) return 0;
  void *q = realloc(*(void **)p, (n ? n : 1) * elem);
  if (!q) return -1;
  *(void **)p = q;
  *cap = n;
  return 0;
}

int av__api_bt_check(int64_t row_stride, const int32_t *kv_tokens, int32_t n_requests,
                     int block_size, av_error_t *e) {
  if (n_requests < 1)
    return av_error_set(e, AV_ERR_SCHEMA, "block_table", "requests",
                        "empty batch: no requests; expected at least one row");
  if (block_size < 1)
    return av_error_set(e, AV_ERR_RANGE, "block_table", "block_size",
                        "block size %d is out of range; expected a positive integer",
                        block_size);
  for (int32_t r = 0; r < n_requests; r++) {
    int64_t n = ((int64_t)kv_tokens[r] + block_size - 1) / block_size;
    if (kv_tokens[r] < 1 || n > row_stride) {
      char where[64];
      snprintf(where, sizeof where, "kv_tokens[%d]", (int)r);
      return av_error_set(e, AV_ERR_RANGE, "block_table", where,
                          "%d tokens; expected 1 to %lld (the row holds %lld blocks of %d)",
                          (int)kv_tokens[r], (long long)row_stride * block_size,
                          (long long)row_stride, block_size);
    }
  }
  return AV_OK;
}

int av__api_block_table(const av__api_bt_t *bt, int block_size, const av_heads_t *heads,
                        av__api_bt_buf_t *buf, av_workload_t **out, av_error_t *e) {
  const int32_t *kv_tokens = bt->kv_tokens;
  const int64_t row_stride = bt->row_stride;
  const int32_t n_requests = bt->n_requests;
  *out = NULL;
  int rc = av__api_bt_check(row_stride, kv_tokens, n_requests, block_size, e);
  if (rc) return rc;
  if (grow(&buf->counts, &buf->cap_counts, (size_t)n_requests, sizeof *buf->counts) ||
      grow(&buf->last, &buf->cap_last, (size_t)n_requests, sizeof *buf->last) ||
      (buf->want_shared &&
       grow(&buf->shared, &buf->cap_shared, (size_t)n_requests, sizeof *buf->shared)))
    return av_error_set(e, AV_ERR_NOMEM, "block_table", NULL, "out of memory");
  for (int32_t r = 0; r < n_requests; r++) {
    int32_t n = (int32_t)(((int64_t)kv_tokens[r] + block_size - 1) / block_size);
    buf->counts[r] = n;
    buf->last[r] = kv_tokens[r] - (n - 1) * block_size;
  }
  const av_block_rows_t rows = {bt->table, row_stride, buf->counts, n_requests};
  *out = av_workload_from_block_rows(&rows, block_size, buf->last, heads,
                                     buf->want_shared ? buf->shared : NULL, e);
  return *out ? AV_OK : e->code ? e->code : AV_ERR_INTERNAL;
}

void av__api_bt_buf_free(av__api_bt_buf_t *buf) {
  free(buf->counts);
  free(buf->last);
  free(buf->shared);
}
