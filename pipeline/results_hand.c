/* Results handed over row by row (pipeline/results_hand.h). */
#include "pipeline/results_hand.h"

int av_results_hand(const av_results_head_t *h, const av_results_t *r, av_results_head_fn on_head,
                    av_results_row_fn on_row, void *user, av_error_t *err) {
  if (on_head) on_head(h, user);
  for (int i = 0; on_row && i < r->n; i++) {
    int rc = on_row(h->e, &r->rows[i], user, err);
    if (rc) return rc;
  }
  return AV_OK;
}
