/* Device identification (executor/device_id.h). The spec files hold what the simulator
 * needs, not how to recognise a card, so the identity rules of the known specs live here:
 * which words the driver's name contains and which it must not (an "H100 PCIe" has the
 * H100-SXM's architecture but not its SMs or memory), memory size (A100 40 GB vs 80 GB) and
 * memory clock (A100 80 GB SXM vs PCIe) where the runtime reports it. A spec without rules
 * (one a user added) is recognised by the first word of its name and its hard facts. */
#include "executor/device_id.h"

#include "core/json_util.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef AV_HAVE_CUDA
#include "kernels/kernels.h"
#endif

#define SRC "device"
#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct id_rule {
  const char *spec;
  const char *require[3];   /* words the device name must contain (case-insensitive) */
  const char *forbid[4];    /* words it must not contain */
  double mem_gib_min, mem_gib_max;  /* 0 = not checked */
  double mem_clock_MHz;     /* 0 = not checked; else within 3 % */
} id_rule_t;

/* Memory sizes: datasheets (the driver reports slightly less than the marketed size).
 * Memory clocks: `nvidia-smi -q` / cudaDevAttrMemoryClockRate of the SKUs (A100 40 GB PCIe
 * 1215 MHz, 80 GB SXM4 1593 MHz vs 1512 MHz on the 80 GB PCIe; RTX 4090 10501 MHz). */
static const id_rule_t k_rules[] = {
    {"A100-40GB-PCIe", {"A100"}, {"SXM", "80GB"}, 30, 48, 1215},
    {"A100-80GB-SXM", {"A100"}, {"PCIE", "40GB"}, 70, 90, 1593},
    {"H100-SXM", {"H100"}, {"PCIE", "NVL"}, 70, 100, 0},
    {"H200-SXM", {"H200"}, {"NVL"}, 120, 160, 0},
    {"RTX-4090", {"4090"}, {"LAPTOP", "D"}, 20, 28, 10501},
};

static const id_rule_t *find_rule(const char *spec) {
  for (size_t i = 0; i < sizeof k_rules / sizeof k_rules[0]; i++)
    if (strcmp(k_rules[i].spec, spec) == 0) return &k_rules[i];
  return NULL;
}

/* Case-insensitive search for a whole word of `name` (words split at spaces and '-'), so
 * "4090 D" is caught by the word "D" but "NVIDIA" is not. */
static int has_word(const char *name, const char *word) {
  size_t wl = strlen(word);
  for (const char *p = name; *p;) {
    while (*p == ' ' || *p == '-') p++;
    const char *e = p;
    while (*e && *e != ' ' && *e != '-') e++;
    if ((size_t)(e - p) == wl) {
      size_t i = 0;
      while (i < wl && toupper((unsigned char)p[i]) == toupper((unsigned char)word[i])) i++;
      if (i == wl) return 1;
    }
    p = e;
  }
  return 0;
}

/* A word inside a word ("A100" in "A100-SXM4-80GB" after splitting is whole, but "SXM" in
 * "SXM4" is not): form factors and sizes are matched as prefixes of a word. */
static int has_prefix_word(const char *name, const char *word) {
  size_t wl = strlen(word);
  for (const char *p = name; *p;) {
    while (*p == ' ' || *p == '-') p++;
    const char *e = p;
    while (*e && *e != ' ' && *e != '-') e++;
    if ((size_t)(e - p) >= wl) {
      size_t i = 0;
      while (i < wl && toupper((unsigned char)p[i]) == toupper((unsigned char)word[i])) i++;
      if (i == wl) return 1;
    }
    p = e;
  }
  return 0;
}

/* Writes the reason a match failed (why may be NULL) and returns 0. */
static int set_why(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int set_why(char *why, size_t n, const char *fmt, ...) {
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return 0;
}

/* The identity rules of g's name (or the generic rule) against d. */
static int rule_matches(const av_device_desc_t *d, const av_gpu_t *g, char *why, size_t n) {
  const id_rule_t *r = find_rule(g->name);
  if (!r) {
    char first[64];
    snprintf(first, sizeof first, "%s", g->name);
    first[strcspn(first, "-_")] = '\0';
    if (!has_prefix_word(d->name, first))
      return set_why(why, n, "the device name does not contain '%s'", first);
    return 1;
  }
  for (int i = 0; i < 3 && r->require[i]; i++)
    if (!has_prefix_word(d->name, r->require[i]))
      return set_why(why, n, "the device name does not contain '%s'", r->require[i]);
  for (int i = 0; i < 4 && r->forbid[i]; i++)
    if (strlen(r->forbid[i]) == 1 ? has_word(d->name, r->forbid[i])
                                  : has_prefix_word(d->name, r->forbid[i]))
      return set_why(why, n, "the device name contains '%s'", r->forbid[i]);
  double gib = d->total_bytes / GIB;
  if (r->mem_gib_min > 0 && d->total_bytes > 0 && (gib < r->mem_gib_min || gib > r->mem_gib_max))
    return set_why(why, n, "its memory is %.0f GiB, expected %.0f GiB or so", gib,
                   0.5 * (r->mem_gib_min + r->mem_gib_max));
  if (r->mem_clock_MHz > 0 && d->mem_clock_MHz > 0 &&
      fabs(d->mem_clock_MHz / r->mem_clock_MHz - 1) > 0.03)
    return set_why(why, n, "its memory clock is %.0f MHz, expected %.0f MHz", d->mem_clock_MHz,
                   r->mem_clock_MHz);
  return 1;
}

int av_device_matches(const av_device_desc_t *d, const av_gpu_t *g, int *hard, char *why,
                      size_t why_size) {
  if (hard) *hard = 1;
  if (d->sm_arch != g->sm_arch)
    return set_why(why, why_size, "its architecture is sm_%d, the spec's sm_%d", d->sm_arch,
                   g->sm_arch);
  if (d->sm_count != g->sm_count)
    return set_why(why, why_size, "it has %d SMs, the spec %d", d->sm_count, g->sm_count);
  if (d->l2_bytes > 0 && g->l2_bytes > 0 && fabs(d->l2_bytes - g->l2_bytes) > 0.5)
    return set_why(why, why_size, "its L2 is %.0f bytes, the spec's %.0f", d->l2_bytes,
                   g->l2_bytes);
  if (hard) *hard = 0;
  return rule_matches(d, g, why, why_size);
}

char *av_device_format(const av_device_desc_t *d, char *buf, size_t size) {
  int k = snprintf(buf, size, "%s (%d SMs, sm_%d", d->name, d->sm_count, d->sm_arch);
  if (k > 0 && (size_t)k < size && d->l2_bytes > 0)
    k += snprintf(buf + k, size - (size_t)k, ", %.0f MiB L2", d->l2_bytes / (1024.0 * 1024.0));
  if (k > 0 && (size_t)k < size && d->total_bytes > 0)
    k += snprintf(buf + k, size - (size_t)k, ", %.0f GiB", d->total_bytes / GIB);
  if (k > 0 && (size_t)k < size && d->mem_clock_MHz > 0)
    k += snprintf(buf + k, size - (size_t)k, ", memory clock %.0f MHz", d->mem_clock_MHz);
  if (k > 0 && (size_t)k < size) snprintf(buf + k, size - (size_t)k, ")");
  return buf;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* The spec the user named: refused only when a hard fact differs. */
static int pick_named(const av_device_desc_t *d, const char *spec_name, const char *dir,
                      av_gpu_t *out, char *note, size_t note_size, av_error_t *err) {
  char why[256], dev[400];
  int hard = 0;
  int rc = av_gpu_load(spec_name, dir, out, err);
  if (rc) return rc;
  if (av_device_matches(d, out, &hard, why, sizeof why)) return AV_OK;
  av_device_format(d, dev, sizeof dev);
  if (hard)
    return av_error_set(err, AV_ERR_MISMATCH, SRC, "--gpu-spec",
                        "spec '%s' does not describe this device %s: %s; the simulator would "
                        "model another machine",
                        spec_name, dev, why);
  if (note && note_size)
    snprintf(note, note_size, "using spec '%s' as asked by --gpu-spec although %s", spec_name,
             why);
  return AV_OK;
}

int av_device_pick_spec(const av_device_desc_t *d, const char *spec_name, const char *dir,
                        av_gpu_t *out, char *note, size_t note_size, av_error_t *err) {
  if (note && note_size) note[0] = '\0';
  if (spec_name) return pick_named(d, spec_name, dir, out, note, note_size, err);
  char **names = NULL;
  int n = 0, found = 0, rc = av_gpu_list(dir, &names, &n, err);
  if (rc) return rc;
  char matched[512] = "", list[1024] = "", dev[400];
  for (int i = 0; i < n && !rc; i++) {
    av_gpu_t g;
    rc = av_gpu_load(names[i], dir, &g, err);
    if (rc || !av_device_matches(d, &g, NULL, NULL, 0)) continue;
    if (!found++) *out = g;
    size_t used = strlen(matched);
    snprintf(matched + used, sizeof matched - used, "%s%s", used ? ", " : "", g.name);
  }
  if (!rc && n) av_names_join(list, sizeof list, (const char *const *)names, (size_t)n);
  free_names(names, n);
  if (rc) return rc;
  av_device_format(d, dev, sizeof dev);
  if (found == 0)
    return av_error_set(err, AV_ERR_MISMATCH, SRC, NULL,
                        "device %s matches no GPU spec in gpus/ (%s); add a spec for it "
                        "or name one with --gpu-spec NAME",
                        dev, n ? list : "none found");
  if (found > 1)
    return av_error_set(err, AV_ERR_MISMATCH, SRC, NULL,
                        "device %s matches several GPU specs (%s); choose one with --gpu-spec "
                        "NAME",
                        dev, matched);
  return AV_OK;
}

int av_device_query(av_device_desc_t *out, av_error_t *err) {
  memset(out, 0, sizeof *out);
#ifdef AV_HAVE_CUDA
  int n = 0;
  if (av_kern_device_count(&n) != 0 || n == 0)
    return av_error_set(err, AV_ERR_NODEVICE, SRC, NULL, "no CUDA device%s%s",
                        n == 0 ? "" : ": ", n == 0 ? "" : av_kern_last_error());
  av_kern_device_t info;
  if (av_kern_device_info(0, &info) != 0)
    return av_error_set(err, AV_ERR_CUDA, SRC, NULL, "%s", av_kern_last_error());
  snprintf(out->name, sizeof out->name, "%s", info.name);
  out->sm_count = info.sm_count;
  out->sm_arch = info.sm_arch;
  out->l2_bytes = info.l2_bytes;
  out->total_bytes = (double)info.total_bytes;
  out->mem_clock_MHz = info.mem_clock_khz / 1000.0;
  return AV_OK;
#else
  return av_error_set(err, AV_ERR_NODEVICE, SRC, NULL,
                      "no CUDA device: anvil was built without CUDA (rebuild with nvcc "
                      "available, AV_CUDA=ON)");
#endif
}
