/* `anvil validate` with its files (pipeline/validate_files.h): the device and the spec
 * checked, the journal opened (or the shards' journals merged), the batches measured, the
 * report written and handed over. */
#include "pipeline/validate_files.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/gpu.h"
#include "executor/device_id.h"
#include "pipeline/files.h"
#include "pipeline/results_dir.h"
#include "pipeline/validate.h"
#include "profiler/profile.h"

typedef struct vctx {
  const av_validate_files_opts_t *o;
  void *user;
  av_experiment_t *e;
  av_variants_t *vs;
  av_vreport_t rep;
  char dir[1024];
} vctx_t;

/* The device must be the experiment's GPU; its prediction uses the calibrated spec. */
static int pick_gpu(vctx_t *c, av_error_t *err) {
  av_device_desc_t d;
  av_gpu_t g;
  char note[512], dev[400];
  int rc = av_device_query(&d, err);
  if (!rc) rc = av_device_pick_spec(&d, c->o->gpu_spec, NULL, &g, note, sizeof note, err);
  if (rc) return rc;
  if (note[0]) av_vnote(c->o->note, c->user, AV_VNOTE_NOTE, "%s", note);
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
    av_vnote(c->o->note, c->user, AV_VNOTE_NOTE,
             "no calibrated spec %s (run anvil profile); predicting with gpus/%s.json", path,
             g.name);
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

/* With run_shards, the shards measure, then their journals become this validation's, from
 * which every batch is taken as `resume` takes it. Without, the journal of this process
 * (resumed with `resume`). */
static int open_journal(vctx_t *c, av_vjournal_t **journal, av_error_t *err) {
  const av_validate_files_opts_t *o = c->o;
  char jpath[1100];
  snprintf(jpath, sizeof jpath, "%s/validation.journal.jsonl", c->dir);
  if (!o->run_shards) return av_vjournal_open(jpath, &c->rep, o->resume, journal, err);
  int n = 0;
  int rc = o->run_shards(c->dir, &n, c->user, err);
  if (!rc && (n < 1 || n > AV_VALIDATE_MAX_SHARDS))
    rc = av_error_set(err, AV_ERR_INTERNAL, "validate", NULL, "%d shards", n);
  if (rc) return rc;
  char paths[AV_VALIDATE_MAX_SHARDS][1100];
  const char *shards[AV_VALIDATE_MAX_SHARDS];
  for (int k = 0; k < n; k++) {
    snprintf(paths[k], sizeof paths[k], "%s/shards/%d/validation.journal.jsonl", c->dir, k);
    shards[k] = paths[k];
  }
  int missing = 0;
  rc = av_vjournal_merge(shards, n, jpath, &c->rep, &missing, err);
  if (!rc && missing)
    rc = av_error_set(err, AV_ERR_INTERNAL, jpath, NULL,
                      "%d batches are in no shard's journal", missing);
  return rc ? rc : av_vjournal_open(jpath, &c->rep, 1, journal, err);
}

/* The experiment loaded, the device and spec picked, --trace-of and the variants checked. */
static int prepare(vctx_t *c, av_error_t *err) {
  const av_validate_files_opts_t *o = c->o;
  int rc = av_experiment_load(o->experiment, &c->e, err);
  if (!rc) {
    c->rep.e = c->e;
    if (o->out)
      snprintf(c->dir, sizeof c->dir, "%s", o->out);
    else
      snprintf(c->dir, sizeof c->dir, "out/%s/validation", c->e->name);
    rc = pick_gpu(c, err);
  }
  if (!rc && o->trace_of) {
    int found = 0;
    for (int bi = 0; bi < c->e->n_batches; bi++)
      found |= strcmp(c->e->batches[bi].name, o->trace_of) == 0;
    if (!found)
      rc = av_error_set(err, AV_ERR_USAGE, "validate", "--trace-of",
                        "no batch named '%s' (e.g. %s)", o->trace_of, c->e->batches[0].name);
  }
  if (!rc) {
    c->vs = av_variants_load(NULL, err);
    if (!c->vs) rc = err->code ? err->code : AV_ERR_INTERNAL;
  }
  return rc;
}

int av_validate_files(const av_validate_files_opts_t *o, void *user, av_error_t *err) {
  int rc = o->out ? av_dir_check_writable("validate", o->out, "--out", err) : AV_OK;
  if (!rc && !o->experiment && !o->offline)
    rc = av_error_set(err, AV_ERR_USAGE, "validate", NULL,
                      "missing the experiment file (usage: anvil validate EXP.json)");
  if (rc) return rc;
  vctx_t c = {.o = o, .user = user};
  snprintf(c.rep.command, sizeof c.rep.command, "%s", o->command ? o->command : "");
  if (o->offline) {
    /* recorded measurements, current simulator: pipeline/validate_offline.c */
    av_voffline_opts_t vo = {.record = o->offline, .exp = o->experiment, .out = o->out,
                             .spec = o->spec, .no_cal = o->no_cal, .command = c.rep.command,
                             .note = o->note, .done = o->done, .user = user};
    return av_validate_offline(&vo, err);
  }
  c.rep.repeats = o->repeats;
  rc = prepare(&c, err);
  av_vjournal_t *journal = NULL;
  if (!rc) rc = av_mkdirs(c.dir, err);
  if (!rc) rc = open_journal(&c, &journal, err);
  if (!rc) {
    av_validate_opts_t vo = {.trace = o->trace, .trace_of = o->trace_of,
                             .repeats = o->repeats, .dir = c.dir, .journal = journal,
                             .shard = o->shard, .shards = o->shards, .note = o->note,
                             .note_user = user};
    rc = av_validate_run(c.e, c.vs, &vo, &c.rep, err);
  }
  av_vjournal_close(journal);
  if (!rc) rc = av_vreport_write(&c.rep, c.dir, err);
  if (!rc && o->done) {
    av_vdone_t d = {.rep = &c.rep, .dir = c.dir};
    rc = o->done(&d, user, err);
  }
  av_vreport_free(&c.rep);
  av_variants_destroy(c.vs);
  av_experiment_destroy(c.e);
  return rc;
}
