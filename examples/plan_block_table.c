/* Plans, checks and simulates a block-table batch through the installed libanvil:
 *   cc plan_block_table.c $(pkg-config --cflags --libs anvil) -o plan_block_table
 * Eight requests share a 64-token system prompt (4 blocks of 16) and each has 20 tokens of
 * its own; every registered scheduler plans the batch, the checker proves each plan exact, the fp64
 * reference runs it, and the simulator predicts its time on the H100. */
#include <stdio.h>
#include <stdlib.h>

#include <anvil/anvil.h>

enum { REQUESTS = 8, BLOCK = 16, ROW = 6 };

static int fail(const anvil_error_t *err) {
  fprintf(stderr, "plan_block_table: %s\n", err->message);
  return anvil_status_class(err->code);
}

int main(void) {
  /* vLLM's layout: a padded row of block ids per request, and its token count. */
  int32_t table[REQUESTS][ROW], tokens[REQUESTS];
  for (int r = 0; r < REQUESTS; r++) {
    for (int j = 0; j < 4; j++) table[r][j] = j;              /* the shared prompt */
    table[r][4] = 4 + 2 * r;                                   /* the request's own blocks */
    table[r][5] = 5 + 2 * r;
    tokens[r] = 64 + 20;
  }
  anvil_error_t err;
  anvil_workload_t *w = NULL;
  anvil_target_t *t = NULL;
  if (anvil_workload_from_block_table(&table[0][0], ROW, tokens, REQUESTS, BLOCK, NULL, &w,
                                      &err) ||
      anvil_target_create("H100-SXM", "roofline", NULL, 0, &t, &err))
    return fail(&err);
  anvil_workload_info_t info;
  anvil_workload_info(w, &info);
  printf("batch: %d requests, %d nodes, sharing ratio %.2f (data: %s)\n", info.requests,
         info.nodes, info.sharing_ratio, anvil_data_dir());
  int rc = 0;
  const char *name;
  for (int i = 0; !rc && (name = anvil_scheduler_name(i)) != NULL; i++) {
    anvil_plan_t *p = NULL;
    anvil_sim_result_t sim;
    double rel = 0;
    anvil_plan_counts_t n;
    if (anvil_plan(t, w, name, NULL, 0, &p, &err) || anvil_plan_check(p, &err) ||
        anvil_plan_reference(p, 1, 16, 0, &rel, &err) ||
        anvil_simulate(t, p, "engine", &sim, NULL, &err)) {
      rc = fail(&err);
    } else {
      anvil_plan_counts(p, &n);
      printf("%-16s %3d items  exact (fp64 rel err %.1e)  predicted %7.2f us  floor %5.2f us\n",
             name, n.items, rel, sim.predicted_us, sim.floor_us);
    }
    anvil_plan_destroy(p);
  }
  anvil_target_destroy(t);
  anvil_workload_destroy(w);
  return rc;
}
