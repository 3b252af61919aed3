/* Registers the selectors in the scheduler registry, once per process (selectors/selectors.h).
 * Adding a selector is one C file here plus one line in `selectors[]`. */
#include <pthread.h>

#include "schedulers/scheduler.h"
#include "selectors/selectors.h"

extern const av_scheduler_ops_t av_sched_auto;

static const av_scheduler_ops_t *const selectors[] = {&av_sched_auto};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_rc;
static av_error_t once_err;

static void register_all(void) {
  for (size_t i = 0; i < sizeof selectors / sizeof selectors[0] && !once_rc; i++)
    once_rc = av_scheduler_register(selectors[i], &once_err);
}

int av_selectors_register(av_error_t *err) {
  pthread_once(&once, register_all);
  if (!once_rc) return AV_OK;
  return av_error_set(err, once_err.code, once_err.source, once_err.path, "%s",
                      once_err.message);
}
