/* The schedulers anvil knows, by name, in the order `anvil list` and `auto` use: those of this
 * folder (adding one is one C file plus one line here), then those a higher layer registers
 * at start-up, which this layer cannot name (the selectors of selectors/: `auto`). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "schedulers/scheduler.h"

extern const av_scheduler_ops_t av_sched_query_centric, av_sched_node_naive,
    av_sched_fixed_division, av_sched_greedy_division, av_sched_profit_pack,
    av_sched_streamk_balance;

enum { MAX_SCHEDULERS = 32 };

#define OWN_SCHEDULERS                                                                    \
  &av_sched_query_centric, &av_sched_node_naive, &av_sched_fixed_division,                \
      &av_sched_greedy_division, &av_sched_profit_pack, &av_sched_streamk_balance
enum { N_OWN = sizeof((const av_scheduler_ops_t *[]){OWN_SCHEDULERS}) / sizeof(void *) };
static const av_scheduler_ops_t *registry[MAX_SCHEDULERS] = {OWN_SCHEDULERS};
/* Entries below n are set and never change: a registration writes its entry, then publishes
 * the new count (release), so a lookup that reads the count (acquire) sees every entry below
 * it, even while another thread registers. */
static atomic_int n_registered = N_OWN;
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

const av_scheduler_ops_t *av_scheduler_find(const char *name) {
  const int n = atomic_load_explicit(&n_registered, memory_order_acquire);
  for (int i = 0; name && i < n; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const av_scheduler_ops_t *const *av_scheduler_all(int *n) {
  if (n) *n = atomic_load_explicit(&n_registered, memory_order_acquire);
  return registry;
}

int av_scheduler_register(const av_scheduler_ops_t *ops, av_error_t *err) {
  pthread_mutex_lock(&register_lock);
  const int n = atomic_load_explicit(&n_registered, memory_order_relaxed);
  int rc = AV_OK;
  if (!ops || !ops->name || !ops->plan)
    rc = av_error_set(err, AV_ERR_INTERNAL, "schedulers", NULL,
                      "a scheduler needs a name and a plan function");
  else if (av_scheduler_find(ops->name))
    rc = av_error_set(err, AV_ERR_INTERNAL, "schedulers", NULL,
                      "a scheduler named '%s' is already registered", ops->name);
  else if (n == MAX_SCHEDULERS)
    rc = av_error_set(err, AV_ERR_INTERNAL, "schedulers", NULL,
                      "cannot register '%s': the registry holds %d schedulers at most",
                      ops->name, MAX_SCHEDULERS);
  if (!rc) {
    registry[n] = ops;
    atomic_store_explicit(&n_registered, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&register_lock);
  return rc;
}

int av_scheduler_lookup(const char *name, const char *source, const char *path,
                        const av_scheduler_ops_t **out, av_error_t *err) {
  const av_scheduler_ops_t *ops = av_scheduler_find(name);
  if (out) *out = ops;
  if (ops) return AV_OK;
  int n;
  const av_scheduler_ops_t *const *all = av_scheduler_all(&n);
  const char *names[MAX_SCHEDULERS];
  for (int i = 0; i < n; i++) names[i] = all[i]->name;
  char list[512];
  av_names_join(list, sizeof list, names, (size_t)n);
  return av_error_set(err, AV_ERR_NAME, source, path,
                      "unknown scheduler '%s'; expected one of: %s", name ? name : "", list);
}
