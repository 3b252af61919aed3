/* `anvil exec EXP.json` / `anvil exec --plan PLAN.json`: runs plans on the GPU through
 * anvil_exec_experiment (include/anvil/exec.h: the device identified, every plan verified
 * against fp64 attention and timed, --out and --csv written once everything ran) and prints
 * each row as it finishes; a failed verification makes the exit status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/exec.h"
#include "cli/args.h"
#include "cli/commands.h"

enum { OPT_PLAN = 256, OPT_CSV, OPT_TRACE, OPT_REPEATS, OPT_WARMUP, OPT_NOVERIFY, OPT_ALL,
       OPT_CHECKREQ, OPT_COPYBW, OPT_ONLY, OPT_FLUSH, OPT_AUTOTUNE, OPT_TUNE_CACHE,
       OPT_KV_COPY };

static const av_cli_opt_t k_opts[] = {
    {"plan", OPT_PLAN, "PLAN.json", "run one saved plan instead of an experiment"},
    {"out", 'o', "FILE", "results JSON (written when every row ran)"},
    {"csv", OPT_CSV, "FILE", "the same rows as CSV"},
    {"trace", OPT_TRACE, "DIR", "write each row's per-CTA timeline (SM, start, end) to DIR"},
    {"repeats", OPT_REPEATS, "N", "timed runs per plan, median reported (default 20; 0 = no timing)"},
    {"warmup", OPT_WARMUP, "N", "untimed runs before timing (default 3)"},
    {"no-verify", OPT_NOVERIFY, NULL, "skip the fp64 comparison and output checks"},
    {"all-schedulers", OPT_ALL, NULL, "run every registered scheduler (default parameters)"},
    {"check-requests", OPT_CHECKREQ, "N", "requests compared with fp64 per batch (default 8)"},
    {"copy-bw", OPT_COPYBW, NULL, "measure copy and read-stream bandwidth; report time vs the floor (read stream)"},
    {"only", OPT_ONLY, "NAME", "run only batches whose name contains NAME"},
    {"l2-flush", OPT_FLUSH, "MODE",
     "how L2 is evicted before each run: read (default), write, none"},
    {"autotune", OPT_AUTOTUNE, "K",
     "auto measures its K predicted-fastest candidates and keeps the fastest (1-16)"},
    {"autotune-cache", OPT_TUNE_CACHE, "FILE",
     "keep each batch shape's autotuned winner in FILE and reuse it"},
    {"kv-copy", OPT_KV_COPY, "MODE",
     "how the kernels copy KV: tma (default, or the experiment's \"kv_copy\") or cp_async"},
    {"gpu-spec", 'g', "NAME", "GPU spec of this device when it is not recognised"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

static int parse_args(int argc, char **argv, anvil_exec_options_t *o, int *help,
                      anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int key;
  int64_t n;
  while ((key = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (key) {
      case -2: return err->code;
      case 0:
        if (o->experiment) return av_cli_error(err, ANVIL_ERR_USAGE, "exec", NULL, "one experiment file only");
        o->experiment = v;
        break;
      case OPT_PLAN: o->plan = v; break;
      case 'o': o->out = v; break;
      case OPT_CSV: o->csv = v; break;
      case OPT_TRACE: o->trace_dir = v; break;
      case OPT_REPEATS:
        if (av_cli_int_arg("exec", "--repeats", v, 0, 100000, &n, err)) return err->code;
        o->repeats = (int)n;
        break;
      case OPT_WARMUP:
        if (av_cli_int_arg("exec", "--warmup", v, 0, 1000, &n, err)) return err->code;
        o->warmup = (int)n;
        break;
      case OPT_CHECKREQ:
        if (av_cli_int_arg("exec", "--check-requests", v, 1, 100000, &n, err)) return err->code;
        o->check_requests = (int)n;
        break;
      case OPT_NOVERIFY: o->verify = 0; break;
      case OPT_ALL: o->all_schedulers = 1; break;
      case OPT_COPYBW: o->copy_bw = 1; break;
      case OPT_ONLY: o->only = v; break;
      case OPT_FLUSH:
        if ((o->l2_flush = anvil_l2_flush_from_name(v)) < 0)
          return av_cli_error(err, ANVIL_ERR_USAGE, "exec", "--l2-flush",
                              "'%s' is not a flush mode; expected write, read or none", v);
        break;
      case OPT_AUTOTUNE:
        if (av_cli_int_arg("exec", "--autotune", v, 1, ANVIL_AUTOTUNE_MAX_K, &n, err))
          return err->code;
        o->autotune = (int)n;
        break;
      case OPT_TUNE_CACHE: o->autotune_cache = v; break;
      case OPT_KV_COPY:
        if ((o->kv_copy = anvil_kv_copy_from_name(v)) < 0)
          return av_cli_error(err, ANVIL_ERR_USAGE, "exec", "--kv-copy",
                              "'%s' is not a KV copy; expected tma or cp_async", v);
        break;
      case 'g': o->gpu_spec = v; break;
      case 'h': *help = 1; return ANVIL_OK;
      default: break;
    }
  }
  return ANVIL_OK;  /* the options' combinations are anvil_exec_experiment's to check */
}

static int print_row(const anvil_exec_row_t *row, void *user) {
  (void)user;
  char b1[512], b2[512];
  const char *batch = anvil_escape_text(row->batch, b1, sizeof b1);
  const char *sched = anvil_escape_text(row->scheduler, b2, sizeof b2);
  if (row->error) {
    printf("%-18s %3d/%-2d %-4s %-16s not run: %s\n", batch, row->q_heads, row->kv_heads,
           row->dtype, sched, row->error);
    return 0;
  }
  printf("%-18s %3d/%-2d %-4s %-16s %7d %10.1f %8.3f %10.2e %s%s\n", batch, row->q_heads,
         row->kv_heads, row->dtype, sched, row->ctas, row->median_us, row->floor_fraction,
         row->max_rel_err, row->pass ? "ok" : "FAIL",
         row->verified && (row->unwritten || !row->deterministic)
             ? " (unwritten/nondeterministic)" : "");
  fflush(stdout);
  if (!row->tuned) return 0;
  /* --autotune: what was measured for auto's row, and which candidate won */
  if (row->tune_from_cache) {
    printf("  autotune: %s (from the cache)\n", row->tune_chose);
    return 0;
  }
  printf("  autotune:");
  for (int i = 0; i < row->n_tune; i++)
    printf("%s %s %.1f us (predicted %.1f)", i ? "," : "", row->tune[i].name,
           row->tune[i].measured_us, row->tune[i].predicted_us);
  printf("; chose %s\n", row->tune_chose);
  return 0;
}

static void print_note(const char *text, void *user) {
  (void)user;
  fprintf(stderr, "anvil: note: %s\n", text);
}

static void print_device(const char *device, const char *spec, void *user) {
  (void)user;
  printf("device: %s -> spec %s\n", device, spec);
}

static void print_copy_bw(double copy_GBps, double read_GBps, void *user) {
  (void)user;
  printf("copy bandwidth (read+write): %.0f GB/s; read stream: %.0f GB/s (the floor's)\n",
         copy_GBps, read_GBps);
}

static void print_header(void *user) {
  (void)user;
  printf("%-18s %-6s %-4s %-16s %7s %10s %8s %10s %s\n", "batch", "heads", "type", "scheduler",
         "ctas", "median_us", "floor%", "max_rel", "check");
}

int av_cmd_exec(int argc, char **argv) {
  anvil_exec_options_t o;
  anvil_exec_options_default(&o);
  anvil_error_t err;
  av_cli_error_clear(&err);
  int help = 0;
  if (parse_args(argc, argv, &o, &help, &err)) return av_cli_fail_public(&err);
  if (help) {
    av_cli_print_help("exec EXP.json | --plan PLAN.json [options]",
                      "Run plans on the GPU: verify against fp64 attention and time them.\n"
                      "The device is identified and matched to its spec in gpus/ (or\n"
                      "--gpu-spec NAME); plans are made for that GPU, which the experiment's\n"
                      "gpu/gpus must list. Needs a CUDA device. Method: docs/validation.md.",
                      k_opts);
    return 0;
  }
  o.on_note = print_note;
  o.on_device = print_device;
  o.on_copy_bw = print_copy_bw;
  o.on_start = print_header;
  anvil_exec_summary_t sum;
  anvil_error_t e;
  if (anvil_exec_experiment(&o, print_row, NULL, &sum, &e)) return av_cli_fail_public(&e);
  printf("%d plans run, %d failed verification%s, %d could not run\n", sum.run, sum.failed,
         o.verify ? "" : " (verification off)", sum.not_run);
  return sum.failed ? 2 : 0;
}
