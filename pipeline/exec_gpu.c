/* The experiment entry `anvil exec` plans for: the device's spec (pipeline/exec_gpu.h). */
#include "pipeline/exec_gpu.h"

#include <stdio.h>
#include <string.h>

int av_exec_gpu_index(const av_gpu_t *gpus, int n_gpus, const char *source, const char *spec,
                      const char *device, int *index, av_error_t *err) {
  if (!spec || !spec[0] || !index)
    return av_error_set(err, AV_ERR_INTERNAL, "exec", NULL, "no GPU spec to look up");
  for (int i = 0; i < n_gpus; ++i)
    if (strcmp(gpus[i].name, spec) == 0) {
      *index = i;
      return AV_OK;
    }
  char listed[512] = "";
  size_t used = 0;
  for (int i = 0; i < n_gpus && used < sizeof listed; ++i)
    used += (size_t)snprintf(listed + used, sizeof listed - used, "%s'%s'", i ? ", " : "",
                             gpus[i].name);
  if (!n_gpus) snprintf(listed, sizeof listed, "(none)");
  const char *key = n_gpus > 1 ? "gpus" : "gpu";
  if (device)
    return av_error_set(err, AV_ERR_MISMATCH, source, key,
                        "this device is %s, GPU spec '%s', but the experiment plans for %s "
                        "only; plans are run only on the GPU they were made for: add \"%s\" to "
                        "the experiment's gpu/gpus, or, when the device was taken for the "
                        "wrong GPU, name its spec with --gpu-spec NAME",
                        device, spec, listed, spec);
  return av_error_set(err, AV_ERR_MISMATCH, source, key,
                      "--gpu-spec '%s' is not a GPU of this experiment, which plans for %s "
                      "only; plans are run only on the GPU they were made for: add \"%s\" to "
                      "the experiment's gpu/gpus, or give --gpu-spec one of its GPUs",
                      spec, listed, spec);
}
