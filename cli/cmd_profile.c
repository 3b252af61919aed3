/* `anvil profile` (docs/validation.md): identifies the CUDA device, measures it with the
 * profiler (profiler/profile.h) and writes profiles/<gpu>.json (the `profile` cost model's
 * table), profiles/<gpu>.spec.json (the GPU spec with measured figures, used by `anvil
 * validate`) and profiles/<gpu>.details.json. Nothing is written unless every measurement
 * succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anvil/profile.h"
#include "cli/args.h"
#include "cli/commands.h"

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

static int parse_args(int argc, char **argv, popts_t *o, anvil_error_t *err) {
  av_cli_parser_t ps;
  av_cli_parser_init(&ps, argc, argv, k_opts);
  const char *v;
  int k;
  o->runs = 5;
  while ((k = av_cli_next_arg(&ps, &v, err)) != -1) {
    switch (k) {
      case -2: return err->code;
      case 0:
        return av_cli_error(err, ANVIL_ERR_USAGE, "profile", v,
                            "unexpected argument (usage: anvil profile [--out FILE])");
      case 'o': o->out = v; break;
      case 'g': o->gpu_spec = v; break;
      case OPT_QUICK: o->quick = 1; break;
      case OPT_GRAPH: o->graph_only = 1; break;
      case OPT_PDL: o->pdl_only = 1; break;
      case OPT_TILES: o->add_tiles = 1; break;
      case OPT_RUNS:
        if (av_cli_int_arg("profile", "--runs", v, 1, 101, &o->runs, err)) return err->code;
        break;
      case 'v': o->verbose = 1; break;
      case 'h': return -1;
    }
  }
  return ANVIL_OK;
}

typedef struct profile_print {
  int mode, differ;
  char out[1024];
  int variants;
} profile_print_t;

static void print_note(const char *text, void *user) {
  (void)user;
  fprintf(stderr, "anvil: note: %s\n", text);
}

static void print_summary(const anvil_profile_summary_t *s, void *user) {
  profile_print_t *pp = user;
  pp->mode = s->mode;
  pp->variants = s->variants;
  snprintf(pp->out, sizeof pp->out, "%s", s->out);
  if (s->mode == ANVIL_PROFILE_GRAPH)
    printf("%s on %s, as CUDA graphs: same-stream gap %.2f us, join %.2f us, run tail "
           "%.2f us\n", s->gpu, s->device, s->graph_gap_us, s->graph_join_us, s->graph_tail_us);
  if (s->mode == ANVIL_PROFILE_PDL)
    printf("%s on %s, the merge a programmatic dependent launch: join %.2f us\n", s->gpu,
           s->device, s->pdl_join_us);
  if (s->mode != ANVIL_PROFILE_FULL) return;
  printf("%s on %s\n", s->gpu, s->device);
  printf("  copy bandwidth   %8.0f GB/s (read + write)\n", s->copy_GBps);
  printf("  read stream      %8.0f GB/s (read only: the floor's bandwidth)\n", s->read_GBps);
  printf("  launch overhead  %8.2f us per launch (R^2 %.3f)\n", s->launch_us, s->launch_r2);
  printf("  lone CTA         %8.1f GB/s, fixed %.2f us (R^2 %.3f)\n", s->lone_GBps,
         s->cta_fixed_us, s->lone_r2);
  if (s->tensor_tflops > 0)
    printf("  mma rate         %8.1f TFLOP/s (one CTA per SM, x SMs)\n", s->tensor_tflops);
}

/* A whole profile: the variants whose occupancy differs from core/occupancy.c's; added
 * tiles: every variant with its largest cell. */
static int print_variant(const anvil_profile_variant_t *v, void *user) {
  profile_print_t *pp = user;
  if (pp->mode == ANVIL_PROFILE_TILES) {
    printf("%s m=%d n=%d d=%d %s: occupancy %d (predicted %d), C(%d, %lld) = %.2f us\n",
           v->kind, v->m_rows, v->n_tokens, v->head_dim, v->dtype, v->occupancy_measured,
           v->occupancy_predicted, v->n_q, (long long)v->kv_tokens, v->time_us);
    return 0;
  }
  if (v->occupancy_measured == v->occupancy_predicted) return 0;
  if (!pp->differ++) printf("  occupancy differs from core/occupancy.c:\n");
  printf("    %s m=%d n=%d d=%d %s: measured %d, predicted %d\n", v->kind, v->m_rows,
         v->n_tokens, v->head_dim, v->dtype, v->occupancy_measured, v->occupancy_predicted);
  return 0;
}

static void print_end(const profile_print_t *pp) {
  if (pp->mode == ANVIL_PROFILE_FULL) {
    if (!pp->differ)
      printf("  occupancy: all %d variants as core/occupancy.c predicts\n", pp->variants);
    printf("profile: %s (+ .spec.json, .details.json), %d variants\n", pp->out, pp->variants);
  } else if (pp->mode == ANVIL_PROFILE_TILES) {
    printf("profile: added %d variants to %s (.details.json)\n", pp->variants, pp->out);
  } else {
    printf("profile: added to %s (.spec.json, .details.json)\n", pp->out);
  }
}

static void command_line(int argc, char **argv, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "anvil");
  for (int i = 0; i < argc && used < n; i++)
    used += (size_t)snprintf(out + used, n - used, " %s", argv[i]);
}

int av_cmd_profile(int argc, char **argv) {
  anvil_error_t err;
  av_cli_error_clear(&err);
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
  if (rc) return av_cli_fail_public(&err);
  char command[512];
  command_line(argc, argv, command, sizeof command);
  anvil_profile_options_t po = {.out = o.out, .gpu_spec = o.gpu_spec, .command = command,
                                .quick = o.quick, .verbose = o.verbose, .runs = (int)o.runs,
                                .graph_only = o.graph_only, .pdl_only = o.pdl_only,
                                .add_tiles = o.add_tiles, .on_note = print_note,
                                .on_summary = print_summary};
  profile_print_t pp = {0};
  anvil_error_t e;
  if (anvil_profile(&po, print_variant, &pp, &e)) return av_cli_fail_public(&e);
  print_end(&pp);
  return 0;
}
