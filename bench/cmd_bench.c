/* `anvil bench <what>`: benchmarks that report figures (tests assert behaviour; these
 * measure). Dispatches to the simulator and planner benchmarks. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const av_command_t k_benches[] = {
    {"sim", "CTAs simulated per second: short-node plans of 1k..1M CTAs and scheduled plans "
            "of realistic batches, on the H200 spec",
     av_bench_sim},
    {"plan", "planning time per scheduler on 3-level batches", av_bench_plan},
    {"sweep", "load time and memory of a 10^5-point sweep in an experiment file",
     av_bench_sweep},
    {"workload", "the fixed plan + simulate workload of the instruction-count guard",
     av_bench_workload},
};
static const int k_n_benches = (int)(sizeof k_benches / sizeof k_benches[0]);

static void usage(FILE *f) {
  fprintf(f, "usage: anvil bench <benchmark> [options]   (anvil bench <benchmark> --help)\n\n"
             "benchmarks:\n");
  for (int i = 0; i < k_n_benches; i++)
    fprintf(f, "  %-8s %s\n", k_benches[i].name, k_benches[i].summary);
}

int av_cmd_bench(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    fprintf(stderr,
            "anvil: bench: missing the benchmark name; expected one of: sim, plan, sweep, "
            "workload\n");
    return 1;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  for (int i = 0; i < k_n_benches; i++)
    if (strcmp(argv[1], k_benches[i].name) == 0) return k_benches[i].run(argc - 1, argv + 1);
  fprintf(stderr,
          "anvil: bench: unknown benchmark '%s'; expected one of: sim, plan, sweep, workload\n",
          argv[1]);
  return 1;
}
