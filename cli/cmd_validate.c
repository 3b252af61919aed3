/* `anvil validate EXP.json`: the command around pipeline/validate.h. The device must be the
 * GPU the experiment names (identified by executor/device_id.c); predictions use the
 * calibrated spec the profiler wrote (profiles/<gpu>.spec.json) when there is one. Each
 * finished batch is journaled (DIR/validation.journal.jsonl), so a validation stopped
 * part-way continues with --resume. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/files.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/validate_devices.h"
#include "pipeline/experiment.h"
#include "pipeline/run.h"
#include "pipeline/validate.h"
#include "pipeline/validate_offline.h"
#include "pipeline/validate_report.h"
#include "core/json_util.h"
#include "executor/device_id.h"
#include "profiler/profile.h"
#include "pipeline/results_dir.h"

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

typedef struct vopts {
  const char *exp, *out, *trace_of, *gpu_spec, *spec, *offline;
  int trace, no_cal, resume;
  int64_t repeats;
  int shard, shards;
  av_vdevices_t devices;
} vopts_t;

typedef struct vctx {
  const vopts_t *o;
  av_experiment_t *e;
  av_variants_t *vs;
  av_vreport_t rep;
  char dir[1024];
} vctx_t;

static int parse_args(int argc, char **argv, vopts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->repeats = 20;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        if (o->exp)
          return av_error_set(err, AV_ERR_USAGE, "validate", v,
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
        if (av_run_shard_parse(v, "--shard", &o->shard, &o->shards, err)) return err->code;
        break;
      case OPT_DEVICES:
        if (av_vdevices_parse(v, &o->devices, err)) return err->code;
        break;
      case OPT_REPEATS:
        if (av_cli_parse_int("validate", "--repeats", v, 1, 1000, &o->repeats, err))
          return err->code;
        break;
      case 'h': return -1;
    }
  }
  if (!o->exp && !o->offline)
    return av_error_set(err, AV_ERR_USAGE, "validate", NULL,
                        "missing the experiment file (usage: anvil validate EXP.json)");
  if (o->spec && o->no_cal)
    return av_error_set(err, AV_ERR_USAGE, "validate", "--spec",
                        "--spec and --no-calibration exclude each other");
  if (o->offline && (o->shards > 1 || o->devices.n))
    return av_error_set(err, AV_ERR_USAGE, "validate", o->shards > 1 ? "--shard" : "--devices",
                        "--offline re-predicts a whole record; it takes no --shard or --devices");
  if (o->shards > 1 && o->devices.n)
    return av_error_set(err, AV_ERR_USAGE, "validate", "--shard",
                        "--devices runs the shards itself; give one of --shard and --devices");
  return AV_OK;
}

/* The device must be the experiment's GPU; its prediction uses the calibrated spec. */
static int pick_gpu(vctx_t *c, av_error_t *err) {
  av_device_desc_t d;
  av_gpu_t g;
  char note[512], dev[400];
  int rc = av_device_query(&d, err);
  if (!rc) rc = av_device_pick_spec(&d, c->o->gpu_spec, NULL, &g, note, sizeof note, err);
  if (rc) return rc;
  if (note[0]) fprintf(stderr, "anvil: note: %s\n", note);
  av_device_format(&d, dev, sizeof dev);
  snprintf(c->rep.device, sizeof c->rep.device, "%s", d.name);
  /* an experiment naming several GPUs is validated on the one this device is */
  int j = 0;
  while (j < c->e->n_gpus && strcmp(c->e->gpus[j].name, g.name) != 0) j++;
  if (j == c->e->n_gpus) {
    char names[300] = "";
    for (int k = 0; k < c->e->n_gpus; k++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s'%s'", k ? ", " : "",
               c->e->gpus[k].name);
    return av_error_set(err, AV_ERR_MISMATCH, c->e->path, c->e->n_gpus > 1 ? "gpus" : "gpu",
                        "the experiment predicts for %s but this device is %s (spec '%s'); "
                        "measurements are only compared with predictions for the same GPU",
                        names, dev, g.name);
  }
  c->e->gpus[0] = c->e->gpus[j];
  c->e->n_gpus = 1;
  if (c->o->no_cal) {
    snprintf(c->rep.spec, sizeof c->rep.spec, "gpus/%s.json (uncalibrated)", g.name);
    return AV_OK;
  }
  char path[1024];
  if (c->o->spec)
    snprintf(path, sizeof path, "%s", c->o->spec);
  else
    snprintf(path, sizeof path, "%s/profiles/%s.spec.json", av_data_dir(), g.name);
  if (!c->o->spec && access(path, R_OK) != 0) {
    fprintf(stderr, "anvil: note: no calibrated spec %s (run anvil profile); predicting with "
                    "gpus/%s.json\n", path, g.name);
    snprintf(c->rep.spec, sizeof c->rep.spec, "gpus/%s.json (uncalibrated)", g.name);
    return AV_OK;
  }
  av_gpu_t cal;
  if ((rc = av_profile_load_spec(path, &cal, err))) return rc;
  if (strcmp(cal.name, g.name) != 0 || cal.sm_count != g.sm_count || cal.sm_arch != g.sm_arch)
    return av_error_set(err, AV_ERR_MISMATCH, path, NULL,
                        "calibrated spec is for '%s', this device is '%s'", cal.name, g.name);
  c->e->gpus[0] = cal;
  snprintf(c->rep.spec, sizeof c->rep.spec, "%.500s", path);
  return AV_OK;
}

/* --devices: the shards measure (cli/validate_devices.c), then their journals become this
 * validation's, from which every batch is taken as --resume takes it. Without --devices, the
 * journal of this process (resumed with --resume). */
static int open_journal(vctx_t *c, av_vjournal_t **journal, av_error_t *err) {
  const vopts_t *o = c->o;
  char jpath[1100], repeats[24];
  snprintf(jpath, sizeof jpath, "%s/validation.journal.jsonl", c->dir);
  if (!o->devices.n) return av_vjournal_open(jpath, &c->rep, o->resume, journal, err);
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
  int rc = av_vdevices_run(&o->devices, c->dir, args, n, err);
  char paths[AV_VDEVICES_MAX][1100];
  const char *shards[AV_VDEVICES_MAX];
  for (int k = 0; k < o->devices.n; k++) {
    av_vdevices_journal(c->dir, k, paths[k], sizeof paths[k]);
    shards[k] = paths[k];
  }
  int missing = 0;
  if (!rc) rc = av_vjournal_merge(shards, o->devices.n, jpath, &c->rep, &missing, err);
  if (!rc && missing)
    rc = av_error_set(err, AV_ERR_INTERNAL, jpath, NULL,
                      "%d batches are in no shard's journal", missing);
  return rc ? rc : av_vjournal_open(jpath, &c->rep, 1, journal, err);
}

static void command_line(int argc, char **argv, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "anvil");
  for (int i = 0; i < argc && used < n; i++)
    used += (size_t)snprintf(out + used, n - used, " %s", argv[i]);
}

int av_cmd_validate(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
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
  if (!rc && o.out) rc = av_dir_check_writable("validate", o.out, "--out", &err);
  if (rc) return av_cli_fail(&err);
  vctx_t c = {.o = &o};
  command_line(argc, argv, c.rep.command, sizeof c.rep.command);
  if (o.offline) {
    /* recorded measurements, current simulator: pipeline/validate_offline.c */
    av_voffline_opts_t vo = {.record = o.offline, .exp = o.exp, .out = o.out, .spec = o.spec,
                             .no_cal = o.no_cal, .command = c.rep.command};
    return av_validate_offline(&vo, &err) ? av_cli_fail(&err) : 0;
  }
  c.rep.repeats = (int)o.repeats;
  rc = av_experiment_load(o.exp, &c.e, &err);
  if (!rc) {
    c.rep.e = c.e;
    if (o.out)
      snprintf(c.dir, sizeof c.dir, "%s", o.out);
    else
      snprintf(c.dir, sizeof c.dir, "out/%s/validation", c.e->name);
    rc = pick_gpu(&c, &err);
  }
  if (!rc && o.trace_of) {
    int found = 0;
    for (int bi = 0; bi < c.e->n_batches; bi++) found |= strcmp(c.e->batches[bi].name, o.trace_of) == 0;
    if (!found)
      rc = av_error_set(&err, AV_ERR_USAGE, "validate", "--trace-of",
                        "no batch named '%s' (e.g. %s)", o.trace_of, c.e->batches[0].name);
  }
  if (!rc) {
    c.vs = av_variants_load(NULL, &err);
    if (!c.vs) rc = err.code ? err.code : AV_ERR_INTERNAL;
  }
  av_vjournal_t *journal = NULL;
  if (!rc) rc = av_mkdirs(c.dir, &err);
  if (!rc) rc = open_journal(&c, &journal, &err);
  if (!rc) {
    av_validate_opts_t vo = {.trace = o.trace, .trace_of = o.trace_of,
                             .repeats = (int)o.repeats, .dir = c.dir, .journal = journal,
                             .shard = o.shard, .shards = o.shards};
    rc = av_validate_run(c.e, c.vs, &vo, &c.rep, &err);
  }
  av_vjournal_close(journal);
  if (!rc) rc = av_vreport_write(&c.rep, c.dir, &err);
  if (!rc) {
    av_vreport_print(stdout, &c.rep);
    printf("results: %s/validation.json, %s/validation.csv\n", c.dir, c.dir);
  }
  av_vreport_free(&c.rep);
  av_variants_destroy(c.vs);
  av_experiment_destroy(c.e);
  return rc ? av_cli_fail(&err) : 0;
}
