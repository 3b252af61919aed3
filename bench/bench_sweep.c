/* `anvil bench sweep`: what a large sweep costs to load. Loads an experiment whose one
 * workload entry is {"kind": "random", "seeds": {"from": 1, "to": N}} (default N = 10^5;
 * random forests of up to 64 requests) and reports the median load time over the runs, the
 * points loaded per second, and the peak resident memory the loaded experiment adds, per
 * batch. The points are computed from their index (pipeline/sweep.h), so the memory is that
 * of the built batches. The last line is `sweep_load_s=<median> sweep_rss_mib=<peak>`. */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/experiment.h"

enum { OPT_POINTS = 256, OPT_RUNS, MAX_RUNS = 31 };

static const av_cli_opt_t k_opts[] = {
    {"points", OPT_POINTS, "N", "seeds in the sweep (default 100000)"},
    {"runs", OPT_RUNS, "N", "timed loads (default 3; median)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long maxrss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static int parse(int argc, char **argv, int64_t *points, int64_t *runs, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k, rc = AV_OK;
  while (rc == AV_OK && (k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 'h': return -1;
      case OPT_POINTS:
        rc = av_cli_parse_int("bench sweep", "--points", v, 1, 1000000, points, err);
        break;
      case OPT_RUNS:
        rc = av_cli_parse_int("bench sweep", "--runs", v, 1, MAX_RUNS, runs, err);
        break;
      default:
        return av_error_set(err, AV_ERR_USAGE, "bench sweep", v ? v : "",
                            "unexpected argument; see anvil bench sweep --help");
    }
  }
  return rc;
}

int av_bench_sweep(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  int64_t points = 100000, runs = 3;
  int rc = parse(argc, argv, &points, &runs, &err);
  if (rc == -1) {
    av_cli_print_help("bench sweep [--points N] [--runs N]",
                      "Loads a sweep of N seeded random forests and reports load time and "
                      "memory.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail(&err);
  json_t *root = json_pack("{s:s, s:[{s:s, s:s, s:{s:i, s:I}}], s:[s]}", "name", "bench-sweep",
                           "workloads", "kind", "random", "name", "rnd", "seeds", "from", 1,
                           "to", (json_int_t)points, "schedulers", "query_centric");
  long rss0 = maxrss_kib();
  double t[MAX_RUNS];
  for (int i = 0; rc == AV_OK && i < runs; i++) {
    av_experiment_t *e = NULL;
    double t0 = now_s();
    rc = av_experiment_from_json(root, "bench-sweep", &e, &err);
    t[i] = now_s() - t0;
    av_experiment_destroy(e);
  }
  json_decref(root);
  if (rc) return av_cli_fail(&err);
  for (int i = 1; i < runs; i++) /* insertion sort: a handful of runs */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  double med = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
  double mib = (double)(maxrss_kib() - rss0) / 1024.0;
  printf("%lld points: load median %.3f s over %lld runs (%.0f points/s), peak RSS +%.1f MiB "
         "(%.0f bytes per batch)\n",
         (long long)points, med, (long long)runs, (double)points / med, mib,
         mib * 1048576.0 / (double)points);
  printf("sweep_load_s=%.3f sweep_rss_mib=%.1f\n", med, mib);
  return 0;
}
