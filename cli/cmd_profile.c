/* `anvil profile` (docs/validation.md): identifies the CUDA device, measures it with the
 * profiler (profiler/profile.h) and writes profiles/<gpu>.json (the `profile` cost model's
 * table), profiles/<gpu>.spec.json (the GPU spec with measured figures, used by `anvil
 * validate`) and profiles/<gpu>.details.json. Nothing is written unless every measurement
 * succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json_util.h"
#include "pipeline/files.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "executor/device_id.h"
#include "profiler/profile.h"
#include "pipeline/results_dir.h"

enum { OPT_QUICK = 256, OPT_RUNS, OPT_GRAPH, OPT_PDL, OPT_TILES };

static const av_cli_opt_t k_opts[] = {
    {"out", 'o', "FILE", "profile path (default profiles/<gpu>.json)"},
    {"gpu-spec", 'g', "NAME", "GPU spec of this device when it is not recognised"},
    {"quick", OPT_QUICK, NULL, "a 3-point KV grid (smoke test; not for committing)"},
    {"runs", OPT_RUNS, "N", "traced runs per plan, averaged (default 5)"},
    {"graph-only", OPT_GRAPH, NULL,
     "measure only the CUDA-graph launch figures and add them to the existing profile --out"},
    {"pdl-only", OPT_PDL, NULL,
     "measure only the join of a merge launched as a programmatic dependent (sm_90+) and add "
     "it to the existing profile --out"},
    {"add-tiles", OPT_TILES, NULL,
     "measure only the compiled tiles the existing profile --out lacks and add them"},
    {"verbose", 'v', NULL, "progress on stderr"},
    {"help", 'h', NULL, "show this help"},
    {NULL, 0, NULL, NULL}};

typedef struct popts {
  const char *out, *gpu_spec;
  int quick, verbose, graph_only, pdl_only, add_tiles;
  int64_t runs;
} popts_t;

static int parse_args(int argc, char **argv, popts_t *o, av_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->runs = 5;
  while ((k = av_cli_next(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        return av_error_set(err, AV_ERR_USAGE, "profile", v,
                            "unexpected argument (usage: anvil profile [--out FILE])");
      case 'o': o->out = v; break;
      case 'g': o->gpu_spec = v; break;
      case OPT_QUICK: o->quick = 1; break;
      case OPT_GRAPH: o->graph_only = 1; break;
      case OPT_PDL: o->pdl_only = 1; break;
      case OPT_TILES: o->add_tiles = 1; break;
      case OPT_RUNS:
        if (av_cli_parse_int("profile", "--runs", v, 1, 101, &o->runs, err)) return err->code;
        break;
      case 'v': o->verbose = 1; break;
      case 'h': return -1;
    }
  }
  return AV_OK;
}

static void print_summary(const av_profile_t *p, const char *out) {
  printf("%s on %s\n", p->gpu, p->device);
  printf("  copy bandwidth   %8.0f GB/s (read + write)\n", p->copy_GBps);
  printf("  read stream      %8.0f GB/s (read only: the floor's bandwidth)\n", p->read_GBps);
  printf("  launch overhead  %8.2f us per launch (R^2 %.3f)\n", p->launch_us, p->launch_r2);
  printf("  lone CTA         %8.1f GB/s, fixed %.2f us (R^2 %.3f)\n", p->lone_GBps,
         p->cta_fixed_us, p->lone_r2);
  if (p->tensor_tflops > 0)
    printf("  mma rate         %8.1f TFLOP/s (one CTA per SM, x SMs)\n", p->tensor_tflops);
  int differ = 0;
  for (int i = 0; i < p->n; i++)
    if (p->t[i].occ_measured != p->t[i].occ_predicted) {
      if (!differ++) printf("  occupancy differs from core/occupancy.c:\n");
      printf("    %s m=%d n=%d d=%d %s: measured %d, predicted %d\n",
             av_kernel_kind_name(p->t[i].tile.kind), p->t[i].tile.m_rows, p->t[i].tile.n_tokens,
             p->t[i].head_dim, av_dtype_name(p->t[i].dtype), p->t[i].occ_measured,
             p->t[i].occ_predicted);
    }
  if (!differ) printf("  occupancy: all %d variants as core/occupancy.c predicts\n", p->n);
  printf("profile: %s (+ .spec.json, .details.json), %d variants\n", out, p->n);
}

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

static void command_line(int argc, char **argv, av_profile_t *p) {
  size_t used = (size_t)snprintf(p->command, sizeof p->command, "anvil");
  for (int i = 0; i < argc && used < sizeof p->command; i++)
    used += (size_t)snprintf(p->command + used, sizeof p->command - used, " %s", argv[i]);
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
static int write_full(const popts_t *o, const av_gpu_t *g, const av_device_desc_t *d,
                      av_profile_t *p, int argc, char **argv, av_error_t *err) {
  char out[1024], spec_path[1200], dir[1024];
  snprintf(p->device, sizeof p->device, "%s", d->name);
  command_line(argc, argv, p);
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
  if (!rc) print_summary(p, out);
  return rc;
}

/* --add-tiles: the tiles the profile at --out (default profiles/<gpu>.json) lacks, measured
 * with the lone-CTA fixed cost of its details file and added to it. */
static int add_tiles(const popts_t *o, const av_gpu_t *g, const av_device_desc_t *d,
                     const av_variants_t *vs, int argc, char **argv, av_error_t *err) {
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
    po.runs = (int)o->runs;
    po.quick = o->quick;
    po.verbose = o->verbose;
    po.have = have;
    p.cta_fixed_us = json_number_value(fixed);
    rc = av_profile_measure_tiles(g, vs, &po, &p, err);
  }
  if (!rc) {
    snprintf(p.device, sizeof p.device, "%s", d->name);
    command_line(argc, argv, &p);
    rc = av_profile_write_tiles(&p, out, err);
  }
  for (int i = 0; !rc && i < p.n; i++)
    printf("%s m=%d n=%d d=%d %s: occupancy %d (predicted %d), C(%d, %lld) = %.2f us\n",
           av_kernel_kind_name(p.t[i].tile.kind), p.t[i].tile.m_rows, p.t[i].tile.n_tokens,
           p.t[i].head_dim, av_dtype_name(p.t[i].dtype), p.t[i].occ_measured,
           p.t[i].occ_predicted, p.t[i].nq[p.t[i].n_nq - 1], (long long)p.t[i].kv[p.t[i].n_kv - 1],
           p.t[i].time_us[p.t[i].n_nq - 1][p.t[i].n_kv - 1]);
  if (!rc) printf("profile: added %d variants to %s (.details.json)\n", p.n, out);
  av_profile_free(&p);
  json_decref(have);
  json_decref(details);
  return rc;
}

/* The flag of a run that adds to an existing profile, NULL for a whole profile. */
static const char *only_flag(const popts_t *o) {
  return o->add_tiles ? "--add-tiles" : o->graph_only ? "--graph-only"
                                      : o->pdl_only   ? "--pdl-only" : NULL;
}

/* --graph-only / --pdl-only: one launch model's figures, added to the profile at --out
 * (default profiles/<gpu>.json). */
static int add_launch(const popts_t *o, const av_gpu_t *g, const av_device_desc_t *d,
                      const av_variants_t *vs, int argc, char **argv, av_error_t *err) {
  char out[1024];
  snprintf(out, sizeof out, "%s", o->out ? o->out : "");
  if (!o->out) snprintf(out, sizeof out, "profiles/%s.json", g->name);
  av_profile_opts_t po;
  av_profile_opts_default(&po);
  po.runs = (int)o->runs;
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
    command_line(argc, argv, &p);
    rc = av_profile_write_launch(&p, out, err);
  }
  if (!rc && o->graph_only)
    printf("%s on %s, as CUDA graphs: same-stream gap %.2f us, join %.2f us, run tail "
           "%.2f us\n", g->name, p.device, p.graph_gap_us, p.graph_join_us, p.graph_tail_us);
  if (!rc && o->pdl_only)
    printf("%s on %s, the merge a programmatic dependent launch: join %.2f us\n", g->name,
           p.device, p.pdl_join_us);
  if (!rc) printf("profile: added to %s (.spec.json, .details.json)\n", out);
  av_profile_free(&p);
  return rc;
}

int av_cmd_profile(int argc, char **argv) {
  av_error_t err;
  av_error_clear(&err);
  popts_t o = {0};
  int rc = parse_args(argc, argv, &o, &err);
  if (rc == -1) {
    av_cli_print_help("profile [--out profiles/<gpu>.json] [--gpu-spec NAME]",
                      "Measures this GPU: copy bandwidth, launch overhead, every kernel "
                      "variant's\noccupancy, a lone CTA's rate, and per variant the single-CTA "
                      "times C(n_q, n)\n(FlashForge 5.2). Writes the profile, a calibrated GPU "
                      "spec and the raw details.\nNeeds a CUDA device. Method: docs/validation.md.",
                      k_opts);
    return 0;
  }
  const char *flag = only_flag(&o);
  if (!rc && o.out) rc = check_out(o.out, &err);
  if (!rc && o.graph_only + o.pdl_only + o.add_tiles > 1)
    rc = av_error_set(&err, AV_ERR_USAGE, "profile", flag,
                      "--graph-only, --pdl-only and --add-tiles are separate runs; give one");
  if (!rc && o.out && flag) rc = add_target(o.out, NULL, flag, &err);
  if (rc) return av_cli_fail(&err);
  av_device_desc_t d;
  av_gpu_t g;
  char note[512];
  av_profile_t p = {0};
  av_variants_t *vs = NULL;
  rc = av_device_query(&d, &err);
  if (!rc) rc = av_device_pick_spec(&d, o.gpu_spec, NULL, &g, note, sizeof note, &err);
  if (!rc && note[0]) fprintf(stderr, "anvil: note: %s\n", note);
  if (!rc) rc = av_cli_load_variants(0, &vs, &err);
  if (!rc && o.add_tiles) rc = add_tiles(&o, &g, &d, vs, argc, argv, &err);
  if (!rc && (o.graph_only || o.pdl_only)) rc = add_launch(&o, &g, &d, vs, argc, argv, &err);
  if (!rc && !flag) {
    av_profile_opts_t po;
    av_profile_opts_default(&po);
    po.runs = (int)o.runs;
    po.quick = o.quick;
    po.verbose = o.verbose;
    rc = av_profile_measure(&g, vs, &po, &p, &err);
  }
  if (!rc && !flag) rc = write_full(&o, &g, &d, &p, argc, argv, &err);
  av_profile_free(&p);
  av_variants_destroy(vs);
  return rc ? av_cli_fail(&err) : 0;
}
