/* `anvil profile` (pipeline/profile_run.h): the options and --out checked before the device
 * is opened, the device identified, the measurements made and written, what was written
 * handed over. */
#include "pipeline/profile_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json_util.h"
#include "executor/device_id.h"
#include "pipeline/files.h"
#include "pipeline/models.h"
#include "pipeline/results_dir.h"
#include "profiler/profile.h"

/* --out before the device: a file path whose directory can be made or written. */
static int check_out(const char *out, av_error_t *err) {
  struct stat st;
  if (out[0] && stat(out, &st) == 0 && S_ISDIR(st.st_mode))
    return av_error_set(err, AV_ERR_USAGE, "profile", "--out",
                        "'%s' is a directory, not a file", out);
  if (!out[0])
    return av_error_set(err, AV_ERR_USAGE, "profile", "--out", "empty path; expected a file");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", out);
  char *slash = strrchr(dir, '/');
  if (!slash) return AV_OK;
  slash[slash == dir] = '\0';
  return av_dir_check_writable("profile", dir, "--out", err);
}

/* --graph-only, --pdl-only and --add-tiles (`flag`) add to a profile that exists: its calibrated spec must
 * be there, and be this device's GPU (gpu; NULL: not known yet). */
static int add_target(const char *out, const char *gpu, const char *flag, av_error_t *err) {
  char spec[1100];
  size_t n = strlen(out);
  if (n > 5 && !strcmp(out + n - 5, ".json")) n -= 5;
  snprintf(spec, sizeof spec, "%.*s.spec.json", (int)n, out);
  struct stat st;
  if (stat(spec, &st) != 0 || !S_ISREG(st.st_mode))
    return av_error_set(err, AV_ERR_IO, "profile", flag,
                        "'%s' does not exist; %s adds to a profile made by anvil profile "
                        "(name it with --out)", spec, flag);
  av_gpu_t g;
  int rc = av_profile_load_spec(spec, &g, err);
  if (!rc && gpu && strcmp(g.name, gpu) != 0)
    rc = av_error_set(err, AV_ERR_MISMATCH, "profile", "--out",
                      "'%s' is the profile of %s, but this device is %s", spec, g.name, gpu);
  return rc;
}

/* A whole profile's three files at --out (default profiles/<gpu>.json), then its summary. */
static int write_full(const av_profile_run_opts_t *o, const av_gpu_t *g, const av_device_desc_t *d,
                      av_profile_t *p, void *user,
                      av_error_t *err) {
  char out[1024], spec_path[1200], dir[1024];
  snprintf(p->device, sizeof p->device, "%s", d->name);
  snprintf(p->command, sizeof p->command, "%s", o->command ? o->command : "");
  if (o->out)
    snprintf(out, sizeof out, "%s", o->out);
  else
    snprintf(out, sizeof out, "profiles/%s.json", g->name);
  snprintf(spec_path, sizeof spec_path, "%s/gpus/%s.json", av_data_dir(), g->name);
  snprintf(dir, sizeof dir, "%s", out);
  char *slash = strrchr(dir, '/');
  int rc = AV_OK;
  if (slash) {
    *slash = '\0';
    rc = av_mkdirs(dir, err);
  }
  if (!rc) rc = av_profile_write(p, out, spec_path, err);
  if (!rc && o->done) o->done(AV_PROFILE_FULL, p, g, out, user);
  return rc;
}

/* --add-tiles: the tiles the profile at --out (default profiles/<gpu>.json) lacks, measured
 * with the lone-CTA fixed cost of its details file and added to it. */
static int add_tiles(const av_profile_run_opts_t *o, const av_gpu_t *g, const av_device_desc_t *d,
                     const av_variants_t *vs, void *user, av_error_t *err) {
  char out[1024], dpath[1100];
  snprintf(out, sizeof out, "%s", o->out ? o->out : "");
  if (!o->out) snprintf(out, sizeof out, "profiles/%s.json", g->name);
  size_t n = strlen(out);
  if (n > 5 && !strcmp(out + n - 5, ".json")) n -= 5;
  snprintf(dpath, sizeof dpath, "%.*s.details.json", (int)n, out);
  json_t *have = NULL, *details = NULL;
  av_profile_t p = {0};
  int rc = add_target(out, g->name, "--add-tiles", err);
  if (!rc) rc = av_json_load_file(out, &have, err);
  if (!rc) rc = av_json_load_file(dpath, &details, err);
  const json_t *fixed = json_object_get(json_object_get(details, "lone_cta"), "fixed_us");
  if (!rc && !json_is_number(fixed))
    rc = av_error_set(err, AV_ERR_SCHEMA, dpath, "lone_cta.fixed_us",
                      "expected the lone CTA's fixed cost (a number), as anvil profile writes");
  if (!rc) {
    av_profile_opts_t po;
    av_profile_opts_default(&po);
    po.runs = o->runs;
    po.quick = o->quick;
    po.verbose = o->verbose;
    po.have = have;
    p.cta_fixed_us = json_number_value(fixed);
    rc = av_profile_measure_tiles(g, vs, &po, &p, err);
  }
  if (!rc) {
    snprintf(p.device, sizeof p.device, "%s", d->name);
    snprintf(p.command, sizeof p.command, "%s", o->command ? o->command : "");
    rc = av_profile_write_tiles(&p, out, err);
  }
  if (!rc && o->done) o->done(AV_PROFILE_TILES, &p, g, out, user);
  av_profile_free(&p);
  json_decref(have);
  json_decref(details);
  return rc;
}

/* The flag of a run that adds to an existing profile, NULL for a whole profile. */
static const char *only_flag(const av_profile_run_opts_t *o) {
  return o->add_tiles ? "--add-tiles" : o->graph_only ? "--graph-only"
                                      : o->pdl_only   ? "--pdl-only" : NULL;
}

/* --graph-only / --pdl-only: one launch model's figures, added to the profile at --out
 * (default profiles/<gpu>.json). */
static int add_launch(const av_profile_run_opts_t *o, const av_gpu_t *g, const av_device_desc_t *d,
                      const av_variants_t *vs, void *user, av_error_t *err) {
  char out[1024];
  snprintf(out, sizeof out, "%s", o->out ? o->out : "");
  if (!o->out) snprintf(out, sizeof out, "profiles/%s.json", g->name);
  av_profile_opts_t po;
  av_profile_opts_default(&po);
  po.runs = o->runs;
  po.verbose = o->verbose;
  av_profile_t p = {0};
  int rc = add_target(out, g->name, only_flag(o), err);
  if (!rc && o->pdl_only && g->sm_arch < 90)
    rc = av_error_set(err, AV_ERR_UNSUPPORTED, "profile", "--pdl-only",
                      "%s is sm_%d; a programmatic dependent launch needs sm_90 or later",
                      g->name, g->sm_arch);
  if (!rc)
    rc = o->graph_only ? av_profile_measure_graph(g, vs, &po, &p, err)
                       : av_profile_measure_pdl(g, vs, &po, &p, err);
  if (!rc) {
    snprintf(p.device, sizeof p.device, "%s", d->name);
    snprintf(p.command, sizeof p.command, "%s", o->command ? o->command : "");
    rc = av_profile_write_launch(&p, out, err);
  }
  if (!rc && o->done)
    o->done(o->graph_only ? AV_PROFILE_GRAPH : AV_PROFILE_PDL, &p, g, out, user);
  av_profile_free(&p);
  return rc;
}

int av_profile_run(const av_profile_run_opts_t *o, void *user, av_error_t *err) {
  int rc = AV_OK;
  const char *flag = only_flag(o);
  if (!rc && o->out) rc = check_out(o->out, err);
  if (!rc && o->graph_only + o->pdl_only + o->add_tiles > 1)
    rc = av_error_set(err, AV_ERR_USAGE, "profile", flag,
                      "--graph-only, --pdl-only and --add-tiles are separate runs; give one");
  if (!rc && o->out && flag) rc = add_target(o->out, NULL, flag, err);
  if (rc) return rc;
  av_device_desc_t d;
  av_gpu_t g;
  char note[512];
  av_profile_t p = {0};
  av_variants_t *vs = NULL;
  rc = av_device_query(&d, err);
  if (!rc) rc = av_device_pick_spec(&d, o->gpu_spec, NULL, &g, note, sizeof note, err);
  if (!rc && note[0] && o->note) o->note(note, user);
  if (!rc) rc = av_models_load_variants(0, &vs, err);
  if (!rc && o->add_tiles) rc = add_tiles(o, &g, &d, vs, user, err);
  if (!rc && (o->graph_only || o->pdl_only)) rc = add_launch(o, &g, &d, vs, user, err);
  if (!rc && !flag) {
    av_profile_opts_t po;
    av_profile_opts_default(&po);
    po.runs = o->runs;
    po.quick = o->quick;
    po.verbose = o->verbose;
    rc = av_profile_measure(&g, vs, &po, &p, err);
  }
  if (!rc && !flag) rc = write_full(o, &g, &d, &p, user, err);
  av_profile_free(&p);
  av_variants_destroy(vs);
  return rc;
}
