/* The `anvil` program: a table of subcommands (cli/commands.h), each a function returning
 * the exit status (0 ok, 1 bad input, 2 internal error). Owners of a command add its line. */
#include <stdio.h>
#include <string.h>

#include "anvil/anvil.h"
#include "cli/args.h"
#include "cli/commands.h"

static const av_command_t k_commands[] = {
    {"run", "plan, check and predict every batch x scheduler of an experiment file", av_cmd_run},
    {"plan", "plan one batch with one scheduler and save the plan as JSON", av_cmd_plan},
    {"check", "prove a plan file exact and run it on the fp64 CPU reference", av_cmd_check},
    {"describe", "print a batch's figures: sharing, unique vs query-centric KV, floor",
     av_cmd_describe},
    {"list", "list GPUs, schedulers and cost models with their parameters", av_cmd_list},
    {"bench", "benchmarks: simulator speed (bench sim), planning speed (bench plan)",
     av_cmd_bench},
    {"replay", "replay a measured per-CTA trace through the simulator's dispatch model",
     av_cmd_replay},
    {"trace", "plan and simulate every step of a JSONL decode trace (plan reuse)",
     av_cmd_trace},
    {"profile", "measure this GPU: bandwidth, launches, occupancy, C(n_q, n) -> profiles/", av_cmd_profile},
    {"validate", "run an experiment on this GPU and compare with the simulator's predictions", av_cmd_validate},
    {"table2", "FlashForge Table 2: single-CTA time over n x n_q, predicted per GPU spec", av_cmd_table2},
    {"exec", "run plans on the GPU: verify against fp64 attention, time, trace CTAs",
     av_cmd_exec},
    {"merge", "combine the result directories of an experiment's shards (run --shard I/N)", av_cmd_merge},
};
static const int k_n_commands = (int)(sizeof k_commands / sizeof k_commands[0]);

static void usage(FILE *f) {
  fprintf(f,
          "usage: anvil <command> [options]   (anvil <command> --help for its options)\n"
          "       anvil --version\n\n"
          "anvil schedules prefix-shared decode attention on GPUs: it plans batches whose\n"
          "requests share KV prefixes, proves each plan exact, and predicts its time.\n\n"
          "commands:\n");
  for (int i = 0; i < k_n_commands; i++)
    fprintf(f, "  %-10s %s\n", k_commands[i].name, k_commands[i].summary);
  fprintf(f, "\nexit status: 0 ok, 1 bad input, 2 internal error. Docs: README.md, docs/.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 1;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("anvil %s (git %s)\n", anvil_version(), anvil_git_commit());
    return 0;
  }
  /* every command may name a scheduler, `auto` among them */
  anvil_error_t err;
  if (anvil_init(&err)) return av_cli_fail_public(&err);
  for (int i = 0; i < k_n_commands; i++)
    if (strcmp(cmd, k_commands[i].name) == 0) return k_commands[i].run(argc - 1, argv + 1);
  char names[512];
  size_t used = 0;
  names[0] = '\0';
  for (int i = 0; i < k_n_commands && used < sizeof names; i++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                             k_commands[i].name);
  fprintf(stderr, "anvil: unknown command '%s'; expected one of: %s\n", cmd, names);
  return 1;
}
