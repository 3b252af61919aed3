/* Provenance records (pipeline/provenance.h). SHA-256 (FIPS 180-4) is computed here because
 * none of anvil's dependencies provides it; the hashes match `sha256sum FILE`. */
#include "pipeline/provenance.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/gpu.h"

typedef struct sha256 {
  uint32_t h[8];
  uint8_t block[64];
  size_t used;
  uint64_t bytes;
} sha256_t;

static const uint32_t k_round[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(sha256_t *s, const uint8_t *p) {
  uint32_t w[64], v[8];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
           (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  memcpy(v, s->h, sizeof v);
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = v[7] + (rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25)) +
                  ((v[4] & v[5]) ^ (~v[4] & v[6])) + k_round[i] + w[i];
    uint32_t t2 = (rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22)) +
                  ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
    memmove(v + 1, v, 7 * sizeof *v);
    v[4] += t1;
    v[0] = t1 + t2;
  }
  for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

static void sha256_put(sha256_t *s, const uint8_t *p, size_t n) {
  s->bytes += n;
  while (n) {
    size_t take = 64 - s->used < n ? 64 - s->used : n;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    n -= take;
    if (s->used == 64) {
      sha256_block(s, s->block);
      s->used = 0;
    }
  }
}

static void sha256_hex(sha256_t *s, char hex[65]) {
  uint64_t bits = s->bytes * 8;
  uint8_t pad[72] = {0x80};
  size_t npad = (s->used < 56 ? 56 : 120) - s->used;
  for (int i = 0; i < 8; i++) pad[npad + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
  sha256_put(s, pad, npad + 8);
  for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", s->h[i]);
}

int av_sha256_file(const char *path, char hex[65]) {
  hex[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  sha256_t s = {.h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
                      0x1f83d9ab, 0x5be0cd19}};
  uint8_t buf[16384];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_put(&s, buf, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) return -1;
  sha256_hex(&s, hex);
  return 0;
}

/* {"name": ..., "path": ..., "sha256": ... or null when unreadable}. */
static json_t *file_entry(const char *name, const char *path) {
  char hex[65];
  json_t *o = json_pack("{s:s, s:s}", "name", name, "path", path);
  json_object_set_new(o, "sha256", av_sha256_file(path, hex) ? json_null() : json_string(hex));
  return o;
}

json_t *av_provenance_json(const av_experiment_t *e) {
  char host[256] = "unknown", hex[65];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  json_t *specs = json_array();
  for (int g = 0; g < e->n_gpus; g++)
    json_array_append_new(specs, file_entry(e->gpus[g].name, e->gpus[g].path));
  json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "anvil_version", av_version(), "git_commit",
                          av_git_commit(), "host", host, "gpu_specs", specs);
  json_object_set_new(doc, "experiment_sha256",
                      av_sha256_file(e->path, hex) ? json_null() : json_string(hex));
  /* Inputs that change results besides the files: how the kernels copy KV. */
  json_object_set_new(doc, "kv_copy", json_string(av_kv_copy_name(e->kv_copy)));
  /* A cost model that reads measured figures (the profile) names its file per GPU; GPUs that
   * share one file (a "path" given) list it once. */
  if (e->cost_ops->data_file) {
    json_t *files = json_array();
    char prev[1200] = "";
    for (int g = 0; g < e->n_gpus; g++) {
      char file[1200];
      e->cost_ops->data_file(&e->cost_params, &e->gpus[g], file, sizeof file);
      if (g > 0 && strcmp(file, prev) == 0) continue;
      json_array_append_new(files, file_entry(e->gpus[g].name, file));
      snprintf(prev, sizeof prev, "%s", file);
    }
    json_object_set_new(doc, "profiles", files);
  }
  return doc;
}
