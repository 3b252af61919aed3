/* `anvil validate --devices LIST`: one `anvil validate --shard k/N` process per listed CUDA
 * device (pinned to it with CUDA_VISIBLE_DEVICES), each measuring every Nth batch into its own
 * directory DIR/shards/k; the command then merges their journals into one report
 * (pipeline/validate_journal.h av_vjournal_merge), the same report one process makes of the
 * same measurements. */
#ifndef AV_CLI_VALIDATE_DEVICES_H
#define AV_CLI_VALIDATE_DEVICES_H

#include "anvil/error.h"

#define AV_VDEVICES_MAX 64

typedef struct av_vdevices {
  int n;
  int id[AV_VDEVICES_MAX];  /* CUDA device indices as this process sees them; may repeat */
} av_vdevices_t;

/* "0,1,3": device indices, at least one, at most AV_VDEVICES_MAX. */
int av_vdevices_parse(const char *text, av_vdevices_t *out, anvil_error_t *err);

/* Runs shard k of d->n on device d->id[k] for every k, at once: `anvil validate` with `args`
 * (n_args options every shard takes: the experiment file and the measuring options) then
 * `--shard k/N --out DIR/shards/k`, its output in DIR/shards/k/validate.log. Waits for all;
 * a shard that fails is named with its device, status and log (ANVIL_ERR_IO). */
int av_vdevices_run(const av_vdevices_t *d, const char *dir, const char *const *args,
                    int n_args, anvil_error_t *err);

#endif
