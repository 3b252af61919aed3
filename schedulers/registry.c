/* The schedulers anvil knows, by name, in the order `anvil list` and `auto` use. Adding one
 * is one C file plus one line here. */
#include <string.h>

#include "schedulers/scheduler.h"

extern const av_scheduler_ops_t av_sched_query_centric, av_sched_node_naive,
    av_sched_fixed_division, av_sched_greedy_division, av_sched_profit_pack,
    av_sched_streamk_balance, av_sched_auto;

static const av_scheduler_ops_t *const registry[] = {
    &av_sched_query_centric, &av_sched_node_naive, &av_sched_fixed_division,
    &av_sched_greedy_division, &av_sched_profit_pack, &av_sched_streamk_balance,
    &av_sched_auto,
};
enum { N_SCHEDULERS = sizeof registry / sizeof registry[0] };

const av_scheduler_ops_t *av_scheduler_find(const char *name) {
  for (int i = 0; name && i < N_SCHEDULERS; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const av_scheduler_ops_t *const *av_scheduler_all(int *n) {
  if (n) *n = N_SCHEDULERS;
  return registry;
}

int av_scheduler_lookup(const char *name, const char *source, const char *path,
                        const av_scheduler_ops_t **out, av_error_t *err) {
  const av_scheduler_ops_t *ops = av_scheduler_find(name);
  if (out) *out = ops;
  if (ops) return AV_OK;
  const char *names[N_SCHEDULERS];
  for (int i = 0; i < N_SCHEDULERS; i++) names[i] = registry[i]->name;
  char list[512];
  av_names_join(list, sizeof list, names, N_SCHEDULERS);
  return av_error_set(err, AV_ERR_NAME, source, path,
                      "unknown scheduler '%s'; expected one of: %s", name ? name : "", list);
}
