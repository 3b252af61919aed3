/* `anvil validate EXP.json`: parses the options, runs anvil_validate (include/anvil/
 * validate.h: the device checked against the experiment's GPU, every pair measured and
 * predicted, the report written) and prints its statistics; with --devices the shards run
 * as processes of this program (cli/validate_devices.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anvil/results.h"
#include "anvil/validate.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/validate_devices.h"

enum { OPT_SPEC = 256, OPT_NO_CAL, OPT_TRACE_OF, OPT_REPEATS, OPT_OFFLINE, OPT_RESUME,
       OPT_SHARD, OPT_DEVICES };

static const av_cli_opt_t k_opts[] = {
    {"out", 'o', "DIR", "output directory (default out/<experiment name>/validation)"},
    {"trace", 't', NULL, "record per-CTA timelines, replay them, report dispatch vs cost-model error"},
    {"trace-of", OPT_TRACE_OF, "WORKLOAD", "batch whose timelines are written (default the first)"},
    {"gpu-spec", 'g', "NAME", "GPU spec of this device when it is not recognised"},
    {"spec", OPT_SPEC, "FILE", "calibrated spec (default profiles/<gpu>.spec.json if present)"},
    {"no-calibration", OPT_NO_CAL, NULL, "predict with gpus/<gpu>.json as is"},
    {"repeats", OPT_REPEATS, "N", "timed runs per plan (median; default 20)"},
    {"offline", OPT_OFFLINE, "VALIDATION.json",
     "no GPU: re-predict a recorded report's pairs, recompute its statistics"},
    {"resume", OPT_RESUME, NULL,
     "take the batches a stopped validation finished from DIR/validation.journal.jsonl"},
    {"devices", OPT_DEVICES, "LIST",
     "spread the batches over these CUDA devices (e.g. 0,1), one process each, into one report"},
    {"shard", OPT_SHARD, "I/N", "measure shard I of N, a share of the batches by bytes (what --devices runs)"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

/* An `auto` row as the table lists it under auto's line: its batch and choice. */
typedef struct auto_line {
  char scheduler[128], text[700];
} auto_line_t;

typedef struct vopts {
  const char *exp, *out, *trace_of, *gpu_spec, *spec, *offline;
  int trace, no_cal, resume;
  int64_t repeats;
  int shard, shards;
  av_vdevices_t devices;
  auto_line_t *autos;        /* the rows whose shown scheduler says what auto chose */
  int n_autos, cap_autos;
} vopts_t;

static int parse_args(int argc, char **argv, vopts_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->repeats = 20;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (o->exp)
          return av_cli_error(err, ANVIL_ERR_USAGE, "validate", v,
                              "unexpected argument; give one experiment file");
        o->exp = v;
        break;
      case 'o': o->out = v; break;
      case 't': o->trace = 1; break;
      case OPT_TRACE_OF: o->trace_of = v; break;
      case 'g': o->gpu_spec = v; break;
      case OPT_SPEC: o->spec = v; break;
      case OPT_NO_CAL: o->no_cal = 1; break;
      case OPT_OFFLINE: o->offline = v; break;
      case OPT_RESUME: o->resume = 1; break;
      case OPT_SHARD:
        if (anvil_shard_parse(v, "--shard", &o->shard, &o->shards, err)) return err->code;
        break;
      case OPT_DEVICES:
        if (av_vdevices_parse(v, &o->devices, err)) return err->code;
        break;
      case OPT_REPEATS:
        if (av_cli_int_arg("validate", "--repeats", v, 1, 1000, &o->repeats, err))
          return err->code;
        break;
      case 'h': return -1;
    }
  }
  if (!o->exp && !o->offline)
    return av_cli_error(err, ANVIL_ERR_USAGE, "validate", NULL,
                        "missing the experiment file (usage: anvil validate EXP.json)");
  if (o->spec && o->no_cal)
    return av_cli_error(err, ANVIL_ERR_USAGE, "validate", "--spec",
                        "--spec and --no-calibration exclude each other");
  if (o->offline && (o->shards > 1 || o->devices.n))
    return av_cli_error(err, ANVIL_ERR_USAGE, "validate", o->shards > 1 ? "--shard" : "--devices",
                        "--offline re-predicts a whole record; it takes no --shard or --devices");
  if (o->shards > 1 && o->devices.n)
    return av_cli_error(err, ANVIL_ERR_USAGE, "validate", "--shard",
                        "--devices runs the shards itself; give one of --shard and --devices");
  return ANVIL_OK;
}

/* --devices: the shards measure in processes of their own (cli/validate_devices.c). */
static int run_shards(const char *dir, int *n_shards, void *user, anvil_error_t *out) {
  const vopts_t *o = user;
  char repeats[24];
  const char *args[16];
  int n = 0;
  args[n++] = o->exp;
  snprintf(repeats, sizeof repeats, "%" PRId64, o->repeats);
  args[n++] = "--repeats";
  args[n++] = repeats;
  if (o->trace) args[n++] = "--trace";
  if (o->trace_of) args[n++] = "--trace-of", args[n++] = o->trace_of;
  if (o->gpu_spec) args[n++] = "--gpu-spec", args[n++] = o->gpu_spec;
  if (o->spec) args[n++] = "--spec", args[n++] = o->spec;
  if (o->no_cal) args[n++] = "--no-calibration";
  if (o->resume) args[n++] = "--resume";
  *n_shards = o->devices.n;
  return av_vdevices_run(&o->devices, dir, args, n, out);
}

static void print_note(int kind, const char *text, void *user) {
  (void)user;
  if (kind == ANVIL_NOTE_PROGRESS) fprintf(stderr, "validate: %s\n", text);
  else fprintf(stderr, "anvil: %s: %s\n", kind == ANVIL_NOTE_WARNING ? "warning" : "note", text);
}

/* Keeps each `auto` row's line ("  docqa-1 32/8  auto→greedy_division (+3.1 %)") for the
 * statistics' table, which lists them under auto's line. */
static int keep_auto_row(const anvil_validate_row_t *r, void *user) {
  vopts_t *o = user;
  if (!r->shown || strcmp(r->shown, r->scheduler) == 0) return 0;
  if (o->n_autos == o->cap_autos) {
    int cap = o->cap_autos ? 2 * o->cap_autos : 16;
    auto_line_t *a = realloc(o->autos, sizeof *a * (size_t)cap);
    if (!a) return 1;
    o->autos = a;
    o->cap_autos = cap;
  }
  auto_line_t *a = &o->autos[o->n_autos++];
  char b1[512], b2[512];
  snprintf(a->scheduler, sizeof a->scheduler, "%s", r->scheduler);
  snprintf(a->text, sizeof a->text, "  %-22s %3d/%-3d %s",
           anvil_escape_text(r->batch, b1, sizeof b1), r->q_heads, r->kv_heads,
           anvil_escape_text(r->shown, b2, sizeof b2));
  return 0;
}

/* The statistics the report is read by: per scheduler, overall, and the traced parts. */
static void print_stats(const anvil_validate_summary_t *s, const vopts_t *o) {
  char b1[512], b2[512], b3[512];
  printf("%-24s %6s %9s %9s %9s\n", "scheduler", "pairs", "MAPE", "worst", "spearman");
  for (int k = 0; k < s->n_schedulers; k++) {
    const anvil_validate_scheduler_t *x = &s->schedulers[k];
    printf("%-24s %6d %8.1f%% %8.1f%% %9.3f\n",
           anvil_escape_text(x->scheduler, b1, sizeof b1), x->pairs, 100 * x->mape,
           100 * x->worst_ape, x->spearman);
    for (int i = 0; i < o->n_autos; i++)
      if (strcmp(o->autos[i].scheduler, x->scheduler) == 0) printf("%s\n", o->autos[i].text);
  }
  if (s->overall) {
    printf("%s on %s: %d pairs, MAPE %.1f%%, worst %.1f%% (%s / %s), Spearman %.3f, "
           "Kendall %.3f\n",
           s->experiment, anvil_escape_text(s->device, b3, sizeof b3), s->pairs, 100 * s->mape,
           100 * s->worst_ape, anvil_escape_text(s->worst_batch, b1, sizeof b1),
           anvil_escape_text(s->worst_scheduler, b2, sizeof b2), s->spearman, s->kendall);
    printf("best plan: agree on %d of %d batches; regret mean %.1f%%, max %.1f%%\n",
           s->best_agree, s->n_batches, 100 * s->regret_mean, 100 * s->regret_max);
    if (s->auto_batches)
      printf("auto: within 5%% of the measured best on %d of %d batches (%.0f%%)\n",
             s->auto_within, s->auto_batches, 100 * s->auto_within_frac);
  }
  if (s->dispatch_pairs)
    printf("dispatch model (replayed vs measured): MAPE %.1f%% over %d traced pairs\n",
           100 * s->dispatch_mape, s->dispatch_pairs);
  if (s->cost_pairs)
    printf("cost model (predicted vs replayed): MAPE %.1f%% over %d traced pairs\n",
           100 * s->cost_mape, s->cost_pairs);
}

static void print_summary(const anvil_validate_summary_t *s, void *user) {
  const vopts_t *o = user;
  if (s->offline) {
    printf("offline: measurements from %s; predictions re-made with %s\n", s->record, s->spec);
    if (s->changed_plans)
      printf("offline: %d plans differ from the recorded ones (their measurements may not "
             "apply)\n", s->changed_plans);
    printf("offline: auto changed its choice on %d batches (measured time of the new "
           "choice used)\n", s->auto_switched);
  }
  if (s->rows) print_stats(s, o);
  if (s->dir) printf("results: %s/validation.json, %s/validation.csv\n", s->dir, s->dir);
}

static void command_line(int argc, char **argv, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "anvil");
  for (int i = 0; i < argc && used < n; i++)
    used += (size_t)snprintf(out + used, n - used, " %s", argv[i]);
}

int av_cmd_validate(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
  vopts_t o = {0};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("validate EXP.json [--out DIR] [--trace] [--gpu-spec NAME] [--devices LIST]\n"
                      "       anvil validate --offline VALIDATION.json [EXP.json] [--out DIR]",
                      "Runs every batch x scheduler of an experiment on this GPU and compares "
                      "the\nsimulator's prediction with the measurement: APE per pair, MAPE, "
                      "worst error,\nSpearman and Kendall rank correlation, best-plan agreement, "
                      "regret and auto's\ngap to the best plan. Writes DIR/validation.json and "
                      "DIR/validation.csv.\nNeeds a CUDA device, except with --offline: "
                      "the recorded measurements are\nkept, every plan is re-made and "
                      "re-simulated. With --devices 0,1 the batches are\nmeasured on several "
                      "GPUs of this host at once, one process each, into one\nreport. "
                      "Method: docs/validation.md.",
                      k_opts);
    return 0;
  }
  if (rc) return av_cli_fail_public(&err);
  char command[1024];
  command_line(argc, argv, command, sizeof command);
  anvil_validate_options_t v = {
      .experiment = o.exp, .offline = o.offline, .out_dir = o.out, .trace_of = o.trace_of,
      .gpu_spec = o.gpu_spec, .spec = o.spec, .trace = o.trace, .no_calibration = o.no_cal,
      .resume = o.resume, .repeats = (int)o.repeats, .shard_index = o.shard,
      .shard_count = o.shards, .command = command,
      .run_shards = o.devices.n ? run_shards : NULL, .on_note = print_note,
      .on_summary = print_summary};
  anvil_error_t e;
  rc = anvil_validate(&v, keep_auto_row, &o, &e) ? av_cli_fail_public(&e) : 0;
  free(o.autos);
  return rc;
}
