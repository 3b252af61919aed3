/* Which of an experiment's GPUs does `anvil exec` plan for? The one whose spec was picked
 * for the device it runs on (executor/device_id.h), never gpus[0] by default: a plan made
 * for one GPU's occupancy and rates is not run and reported as if it were another's
 * (docs/validation.md). Pure, so the rule is tested without a GPU (tests/test_exec_gpu.c). */
#ifndef AV_CLI_EXEC_GPU_H
#define AV_CLI_EXEC_GPU_H

#include "core/error.h"
#include "core/gpu.h"

/* Sets *index to the entry of gpus[0..n_gpus) named `spec` (the spec picked for the device).
 * When the experiment does not list it: AV_ERR_MISMATCH with source `source` (the experiment
 * file), key `gpu` (`gpus` when it lists several), naming the device (`device`, the formatted
 * description; NULL when only --gpu-spec is known, before the device is queried), the specs
 * the experiment lists, and what to do. */
int av_exec_gpu_index(const av_gpu_t *gpus, int n_gpus, const char *source, const char *spec,
                      const char *device, int *index, av_error_t *err);

#endif
