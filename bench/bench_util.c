/* Timing helpers of the `anvil bench` benchmarks (cli/bench.h). */
#include <stdlib.h>
#include <sys/resource.h>

#include "cli/bench.h"

double av_bench_clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double av_bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, dbl_cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

long av_bench_maxrss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}
