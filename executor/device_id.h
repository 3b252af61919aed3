/* Which GPU is this? `profile`, `exec` and `validate` identify the CUDA device they run on
 * (name, SM count, architecture, L2, memory size, memory clock when known) and pick the
 * matching spec in gpus/, or stop with a message naming --gpu-spec: a profile or a spec
 * of one GPU is never applied to another silently (docs/validation.md). */
#ifndef AV_DEVICE_ID_H
#define AV_DEVICE_ID_H

#include <stddef.h>

#include "core/error.h"
#include "core/gpu.h"

typedef struct av_device_desc {
  char name[256];          /* as the driver reports it: "NVIDIA H200" */
  int sm_count, sm_arch;   /* sm_arch = compute capability x 10 */
  double l2_bytes;         /* 0 = unknown */
  double total_bytes;      /* device memory; 0 = unknown */
  double mem_clock_MHz;    /* 0 = unknown (the driver did not report it) */
} av_device_desc_t;

/* Describes CUDA device 0. AV_ERR_NODEVICE ("no CUDA device" / "built without CUDA") when
 * there is none. */
int av_device_query(av_device_desc_t *out, av_error_t *err);

/* Does device d look like spec g? Hard facts (SM count, architecture, L2 size when both
 * know it) must be equal; then the identity rules of the spec's name (device-name tokens,
 * memory size, memory clock: a 40 GB A100 is not the 80 GB one). Returns 1 or 0; on 0, `why`
 * (may be NULL) says the first difference. *hard (may be NULL) is set to 1 when a hard fact
 * differs (the simulator would model another machine). */
int av_device_matches(const av_device_desc_t *d, const av_gpu_t *g, int *hard, char *why,
                      size_t why_size);

/* Picks the spec for device d from `dir`/gpus (NULL = the built-in data directory).
 * spec_name NULL: the one spec that matches, else AV_ERR_MISMATCH naming the device, the
 * specs and --gpu-spec. spec_name given: that spec, refused when a hard fact differs and
 * accepted with *note filled (may be NULL; "" when none) when only the identity rules do. */
int av_device_pick_spec(const av_device_desc_t *d, const char *spec_name, const char *dir,
                        av_gpu_t *out, char *note, size_t note_size, av_error_t *err);

/* "NVIDIA H200 (132 SMs, sm_90, 60 MiB L2, 140 GiB)" into buf; returns buf. */
char *av_device_format(const av_device_desc_t *d, char *buf, size_t size);

#endif
