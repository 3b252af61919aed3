/* Subcommands of the `anvil` program. Each is `int av_cmd_<name>(int argc, char **argv)`
 * (argv[0] is the subcommand name) returning the exit status: 0 ok, 1 bad input, 2 internal
 * error. cli/main.c holds the table; the owner of a command adds its one line there. */
#ifndef AV_CLI_COMMANDS_H
#define AV_CLI_COMMANDS_H

#include "anvil/error.h"

typedef struct av_command {
  const char *name;
  const char *summary;   /* one line for `anvil --help` */
  int (*run)(int argc, char **argv);
} av_command_t;

int av_cmd_run(int argc, char **argv);       /* cli/cmd_run.c */
int av_cmd_plan(int argc, char **argv);      /* cli/cmd_plan.c */
int av_cmd_check(int argc, char **argv);     /* cli/cmd_check.c */
int av_cmd_describe(int argc, char **argv);  /* cli/cmd_describe.c */
int av_cmd_list(int argc, char **argv);      /* cli/cmd_list.c */
int av_cmd_bench(int argc, char **argv);     /* bench/cmd_bench.c: dispatches to the four below */
int av_bench_sim(int argc, char **argv);     /* bench/bench_sim.c */
int av_bench_plan(int argc, char **argv);    /* bench/bench_plan.c */
int av_bench_sweep(int argc, char **argv);   /* bench/bench_sweep.c */
int av_bench_workload(int argc, char **argv); /* bench/bench_workload_cmd.c */
int av_cmd_replay(int argc, char **argv);    /* cli/cmd_replay.c: measured CTA timeline replay */
int av_cmd_trace(int argc, char **argv);     /* cli/cmd_trace.c: JSONL decode-trace run */
int av_cmd_exec(int argc, char **argv);      /* cli/cmd_exec.c: run plans on the GPU */
int av_cmd_profile(int argc, char **argv);   /* cli/cmd_profile.c: measure the GPU */
int av_cmd_validate(int argc, char **argv);  /* cli/cmd_validate.c: predicted vs measured */
int av_cmd_table2(int argc, char **argv);    /* cli/cmd_table2.c: FlashForge Table 2 */
int av_cmd_merge(int argc, char **argv);     /* cli/cmd_merge.c: shards into one result set */

/* Prints an error the way every command does ("anvil: <source>: <path>: <message>") to
 * stderr and returns its exit class (1 or 2). */
int av_cli_fail_public(const anvil_error_t *err);

#endif
