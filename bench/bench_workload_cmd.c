/* `anvil bench workload`: runs the fixed plan + simulate workload of the instruction-count
 * guard once on the H200-SXM spec and prints what each plan predicted, so a change in the
 * count can be told apart from a change in the work. The guard (scripts/instruction-count,
 * CTest valgrind_instruction_count) runs this command under callgrind and counts the
 * instructions of av_bench_workload_run alone. */
#include <stdio.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/cli_util.h"
#include "cli/commands.h"

static const av_cli_opt_t k_opts[] = {{"help", 'h', NULL, "show this help"},
                                      {NULL, 0, NULL, NULL}};

int av_bench_workload(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  while ((k = av_cli_next(&ps, &v, &err)) != -1) {
    if (k == 'h') {
      av_cli_print_help("bench workload",
                        "The fixed workload of the instruction-count guard: 3 realistic "
                        "batches x 3 schedulers, planned, proved exact and simulated once on "
                        "H200-SXM (run it under valgrind --tool=callgrind).",
                        k_opts);
      return 0;
    }
    if (k == -2) return av_cli_fail(&err);
    av_error_set(&err, AV_ERR_USAGE, "bench workload", v ? v : "",
                 "unexpected argument; see anvil bench workload --help");
    return av_cli_fail(&err);
  }
  av_gpu_t gpu;
  int rc = av_cli_load_gpu("bench workload", "H200-SXM", &gpu, &err);
  if (rc) return av_cli_fail(&err);
  av_error_t verr;
  av_error_clear(&verr);
  av_variants_t *vs = av_variants_load(NULL, &verr); /* NULL: schedulers' default menu */
  av_bench_workload_plan_t out[AV_BENCH_WORKLOAD_PLANS];
  memset(out, 0, sizeof out);
  rc = av_bench_workload_run(&gpu, vs, out, &err);
  av_variants_destroy(vs);
  if (rc) return av_cli_fail(&err);
  printf("%-14s %-16s %7s %7s %13s %15s\n", "batch", "scheduler", "items", "ctas",
         "makespan_us", "hbm_bytes");
  for (int i = 0; i < AV_BENCH_WORKLOAD_PLANS; i++)
    printf("%-14s %-16s %7d %7lld %13.3f %15.0f\n", out[i].batch, out[i].scheduler,
           out[i].items, (long long)out[i].ctas, out[i].makespan_us, out[i].hbm_bytes);
  printf("workload_plans=%d variants=%s\n", AV_BENCH_WORKLOAD_PLANS,
         vs ? "kernels/variants.json" : "default menu");
  return 0;
}
