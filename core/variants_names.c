/* Names of kernel kinds as plan files and variant tables spell them. Kept apart from the
 * variant loader (core/variants.c) so plan I/O does not depend on it. */
#include <string.h>

#include "core/variants.h"

static const char *const kind_names[] = {
    [AV_KERNEL_PARTIAL] = "partial",
    [AV_KERNEL_PERSISTENT] = "persistent",
    [AV_KERNEL_DECODE] = "decode",
    [AV_KERNEL_MERGE] = "merge",
};

#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

const char *av_kernel_kind_name(av_kernel_kind_t k) {
  if ((int)k < 0 || (int)k >= N_KINDS) return "unknown";
  return kind_names[k];
}

/* AV_ERR_NAME when unknown; callers list the valid names ("partial, persistent, decode,
 * merge") in their message. */
int av_kernel_kind_from_name(const char *name, av_kernel_kind_t *out) {
  for (int k = 0; k < N_KINDS; k++)
    if (name && strcmp(name, kind_names[k]) == 0) {
      *out = (av_kernel_kind_t)k;
      return AV_OK;
    }
  return AV_ERR_NAME;
}
