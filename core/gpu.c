/* GPU specifications: loads gpus/<name>.json, where every number is an object
 * {"value": X, "source": "..."} so that each figure the simulator uses says where it came
 * from (datasheet, CUDA Programming Guide, measured). A table of fields drives the loader:
 * every field is typed and range-checked, all but the measured-only ones are required, and
 * unknown keys are rejected. */
#include "core/gpu.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/data_dir.h"
#include "core/json_util.h"
#include "core/plan.h"

typedef struct gpu_field {
  const char *key;
  int is_int;
  size_t offset;
  double min, max;
  int optional;  /* measured figures a datasheet spec cannot give: absent = 0 */
} gpu_field_t;

#define GI(f, lo, hi) {#f, 1, offsetof(av_gpu_t, f), lo, hi, 0}
#define GD(f, lo, hi) {#f, 0, offsetof(av_gpu_t, f), lo, hi, 0}
#define GD_OPT(f, lo, hi) {#f, 0, offsetof(av_gpu_t, f), lo, hi, 1}

/* Ranges are sanity bounds (a typo such as a missing "000" is caught), not architecture
 * facts; cross-field consistency is checked after loading. */
static const gpu_field_t gpu_fields[] = {
    GI(sm_arch, 50, 150),
    GI(sm_count, 1, 1024),
    GI(max_threads_per_sm, 32, 4096),
    GI(max_warps_per_sm, 1, 128),
    GI(max_ctas_per_sm, 1, 64),
    GI(max_threads_per_cta, 32, 4096),
    GI(regs_per_sm, 1024, 1 << 20),
    GI(max_regs_per_thread, 16, 256),
    GI(max_regs_per_cta, 1024, 1 << 20),
    GI(reg_alloc_unit, 1, 4096),
    GI(warp_alloc_granularity, 1, 16),
    GI(smem_per_sm_bytes, 1024, 16 << 20),
    GI(smem_per_cta_max_bytes, 1024, 16 << 20),
    GI(smem_alloc_unit_bytes, 1, 65536),
    GI(smem_reserved_per_cta_bytes, 0, 65536),
    GD(hbm_bw_datasheet_GBps, 1.0, 1e6),
    GD(hbm_bw_measured_GBps, 0.0, 1e6),
    GD(l2_bytes, 0.0, 1e10),
    GD(l2_bw_GBps, 1.0, 1e7),
    GD(mem_latency_ns, 1.0, 1e5),
    GD(bytes_in_flight_per_sm, 1.0, 1e9),
    GD(clock_MHz, 1.0, 1e5),
    GD(fp16_tensor_tflops, 0.001, 1e6),
    GD(fp32_tflops, 0.001, 1e6),
    GD(launch_overhead_us, 0.0, 1e4),
    GD(cta_fixed_us, 0.0, 1e4),
    GD_OPT(join_overhead_us, 0.0, 1e4),
    GD_OPT(run_tail_us, 0.0, 1e4),
    GD_OPT(cta_dispatch_us, 0.0, 1e3),
    GD_OPT(stream_gap_us, 0.0, 1e4),
    GD_OPT(graph_stream_gap_us, 0.0, 1e4),
    GD_OPT(graph_join_overhead_us, 0.0, 1e4),
    GD_OPT(graph_run_tail_us, 0.0, 1e4),
    GD_OPT(pdl_join_overhead_us, 0.0, 1e4),
    GD_OPT(hbm_bw_read_GBps, 0.0, 1e6),
};
#define N_GPU_FIELDS (sizeof gpu_fields / sizeof gpu_fields[0])

double av_gpu_hbm_bw_GBps(const av_gpu_t *g) {
  return g->hbm_bw_measured_GBps > 0 ? g->hbm_bw_measured_GBps : 0.9 * g->hbm_bw_datasheet_GBps;
}

double av_gpu_floor_bw_GBps(const av_gpu_t *g) {
  return g->hbm_bw_read_GBps > 0 ? g->hbm_bw_read_GBps : av_gpu_hbm_bw_GBps(g);
}

void av_gpu_launch_costs(const av_gpu_t *g, int model, av_launch_costs_t *out) {
  const int graph = model == AV_LAUNCH_GRAPH, measured = graph && g->graph_run_tail_us > 0;
  out->issue_first_us = measured ? 0 : g->launch_overhead_us;
  out->issue_step_us = graph ? 0 : g->launch_overhead_us;
  out->stream_gap_us = measured ? g->graph_stream_gap_us : g->stream_gap_us;
  out->join_us = measured ? g->graph_join_overhead_us : g->join_overhead_us;
  if (model == AV_LAUNCH_PDL && g->pdl_join_overhead_us > 0) out->join_us = g->pdl_join_overhead_us;
  out->tail_us = measured ? g->graph_run_tail_us : g->run_tail_us;
}

/* ANVIL_DATA_DIR says where the data files (GPU specs, profiles) live, not what they hold:
 * the files read are recorded by path and hash in every results file's provenance, so the
 * variable is a location, not an input that changes a result unrecorded. */
const char *av_data_dir(void) {
  const char *env = getenv("ANVIL_DATA_DIR");
  if (env && env[0]) return env;
  const char *installed = av__data_dir_installed();
  return installed ? installed : av__data_dir_default();
}

/* One {"value": X, "source": "..."} entry. */
static int load_field(const av_jctx_t *c, const json_t *root, const gpu_field_t *f,
                      av_gpu_t *out) {
  static const char *const keys[] = {"value", "source", NULL};
  char where[256];
  av_jpath_key(where, sizeof where, "", f->key);
  json_t *entry = json_object_get(root, f->key);
  if (!entry && f->optional) return AV_OK;
  if (!entry)
    return av_error_set(c->err, AV_ERR_SCHEMA, c->source, where,
                        "missing required key '%s' (an object {\"value\": ..., \"source\": "
                        "\"...\"})",
                        f->key);
  int rc = av_json_expect_object(c, entry, where);
  if (!rc) rc = av_json_check_keys(c, entry, where, keys);
  const char *source;
  if (!rc) rc = av_json_get_string(c, entry, where, "source", 1, NULL, &source);
  if (!rc && !source[0]) {
    char sp[256];
    av_jpath_key(sp, sizeof sp, where, "source");
    rc = av_error_set(c->err, AV_ERR_SCHEMA, c->source, sp,
                      "expected a non-empty string saying where the value comes from");
  }
  if (rc) return rc;
  char *base = (char *)out + f->offset;
  if (f->is_int) {
    int64_t v;
    rc = av_json_get_int(c, entry, (av_json_field_t){where, "value", 1}, 0, (int64_t)f->min,
                         (int64_t)f->max, &v);
    if (!rc) *(int *)base = (int)v;
  } else {
    double v;
    rc = av_json_get_double(c, entry, (av_json_field_t){where, "value", 1}, 0, f->min, f->max, &v);
    if (!rc) *(double *)base = v;
  }
  return rc;
}

/* Relations between fields that the occupancy rules rely on. */
static int check_consistency(const av_jctx_t *c, const av_gpu_t *g) {
  if (g->max_warps_per_sm * 32 != g->max_threads_per_sm)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "max_warps_per_sm.value",
                        "%d warps x 32 != max_threads_per_sm %d", g->max_warps_per_sm,
                        g->max_threads_per_sm);
  if (g->smem_per_cta_max_bytes > g->smem_per_sm_bytes)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "smem_per_cta_max_bytes.value",
                        "%d bytes per CTA exceeds smem_per_sm_bytes %d",
                        g->smem_per_cta_max_bytes, g->smem_per_sm_bytes);
  if (g->max_threads_per_cta > g->max_threads_per_sm || g->max_threads_per_cta % 32)
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "max_threads_per_cta.value",
                        "%d must be a multiple of 32 and at most max_threads_per_sm %d",
                        g->max_threads_per_cta, g->max_threads_per_sm);
  if (g->regs_per_sm % (g->warp_alloc_granularity * g->reg_alloc_unit))
    return av_error_set(c->err, AV_ERR_MISMATCH, c->source, "regs_per_sm.value",
                        "%d registers do not split into %d sub-partitions of %d-register "
                        "units",
                        g->regs_per_sm, g->warp_alloc_granularity, g->reg_alloc_unit);
  return AV_OK;
}

static void file_stem(const char *path, char *out, size_t size) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t len = strlen(base);
  if (len > 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
  if (len >= size) len = size - 1;
  memcpy(out, base, len);
  out[len] = '\0';
}

int av_gpu_load_file(const char *path, av_gpu_t *out, av_error_t *err) {
  json_t *root;
  int rc = av_json_load_file(path, &root, err);
  if (rc) return rc;
  av_jctx_t c = {.source = path, .err = err};
  av_gpu_t g;
  memset(&g, 0, sizeof g);
  const char *allowed[N_GPU_FIELDS + 2];
  allowed[0] = "description";
  for (size_t i = 0; i < N_GPU_FIELDS; i++) allowed[i + 1] = gpu_fields[i].key;
  allowed[N_GPU_FIELDS + 1] = NULL;
  rc = av_json_expect_object(&c, root, "");
  if (!rc) rc = av_json_check_keys(&c, root, "", allowed);
  const char *desc = NULL;
  if (!rc) rc = av_json_get_string(&c, root, "", "description", 1, NULL, &desc);
  for (size_t i = 0; !rc && i < N_GPU_FIELDS; i++) rc = load_field(&c, root, &gpu_fields[i], &g);
  if (!rc) rc = check_consistency(&c, &g);
  if (!rc) {
    snprintf(g.description, sizeof g.description, "%s", desc);
    file_stem(path, g.name, sizeof g.name);
    snprintf(g.path, sizeof g.path, "%s", path);
    *out = g;
  }
  json_decref(root);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void gpu_list_free(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

int av_gpu_list(const char *dir, char ***names, int *n, av_error_t *err) {
  *names = NULL;
  *n = 0;
  char path[1024];
  snprintf(path, sizeof path, "%s/gpus", dir ? dir : av_data_dir());
  DIR *d = opendir(path);
  if (!d) return av_error_set(err, AV_ERR_IO, path, NULL, "cannot open the GPU spec directory");
  char **list = NULL;
  int count = 0, cap = 0, rc = AV_OK;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.') continue;
    if (count == cap) {
      cap = cap ? 2 * cap : 8;
      char **grown = realloc(list, (size_t)cap * sizeof *list);
      if (!grown) {
        rc = AV_ERR_NOMEM;
        break;
      }
      list = grown;
    }
    list[count] = strndup(e->d_name, len - 5);
    if (!list[count]) {
      rc = AV_ERR_NOMEM;
      break;
    }
    count++;
  }
  closedir(d);
  if (rc) {
    gpu_list_free(list, count);
    return av_error_set(err, rc, path, NULL, "out of memory listing GPU specs");
  }
  if (count) qsort(list, (size_t)count, sizeof *list, cmp_str);
  *names = list;
  *n = count;
  return AV_OK;
}

/* Names are file stems; anything that could walk out of the directory is rejected. */
static int valid_name(const char *name) {
  if (!name[0] || strlen(name) > 60) return 0;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '-' || *p == '_' || *p == '.'))
      return 0;
  return name[0] != '.';
}

int av_gpu_is_path(const char *name) {
  size_t n = strlen(name);
  return strchr(name, '/') != NULL || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

int av_gpu_load(const char *name, const char *dir, av_gpu_t *out, av_error_t *err) {
  if (av_gpu_is_path(name)) {
    FILE *f = fopen(name, "rb");
    if (!f)
      return av_error_set(err, AV_ERR_IO, NULL, NULL, "cannot open GPU spec file '%s': %s",
                          name, strerror(errno));
    fclose(f);
    return av_gpu_load_file(name, out, err);
  }
  char **names;
  int n;
  int rc = av_gpu_list(dir, &names, &n, err);
  if (rc) return rc;
  int found = 0;
  for (int i = 0; i < n && valid_name(name); i++)
    if (strcmp(names[i], name) == 0) found = 1;
  if (!found) {
    char list[1024] = "(no specs found)";
    if (n) av_names_join(list, sizeof list, (const char *const *)names, (size_t)n);
    rc = av_error_set(err, AV_ERR_NAME, NULL, NULL, "unknown GPU '%s'; expected one of: %s",
                      name, list);
    gpu_list_free(names, n);
    return rc;
  }
  gpu_list_free(names, n);
  char path[1200];
  snprintf(path, sizeof path, "%s/gpus/%s.json", dir ? dir : av_data_dir(), name);
  return av_gpu_load_file(path, out, err);
}
