/* Internals of the kernels library: the per-translation-unit variant tables that
 * kernels/runtime.cu gathers, and the error recording behind AV_CUDA_CHECK. */
#ifndef AV_KERN_INTERNAL_H
#define AV_KERN_INTERNAL_H

#include <cuda_runtime.h>

#include "kernels/kernels.h"

typedef struct av_kern_entry {
  av_kern_variant_t v;  /* first member: av_kern_find's result casts back to the entry */
  const void *fn;
} av_kern_entry_t;

enum { AV_KIND_PARTIAL = 0, AV_KIND_PERSISTENT = 1, AV_KIND_DECODE = 2, AV_KIND_MERGE = 3 };

/* Records "call at file:line: reason" as the last error; returns the code. */
int av__kern_fail(cudaError_t e, const char *what, const char *file, int line);

#define AV_CUDA_CHECK(call)                                          \
  do {                                                               \
    cudaError_t av_e_ = (call);                                      \
    if (av_e_ != cudaSuccess)                                        \
      return av__kern_fail(av_e_, #call, __FILE__, __LINE__);        \
  } while (0)
/* After every kernel launch: launch-configuration errors surface here. */
#define AV_CUDA_CHECK_LAUNCH(what) AV_CUDA_CHECK(cudaGetLastError())

#define AV_KERN_TABLE(TN, D) av_kern_tab_##TN##_d##D
#define AV_KERN_COUNT(TN, D) av_kern_cnt_##TN##_d##D

#define AV_KERN_DECLARE_TABLE(TN, D)                          \
  extern "C" const av_kern_entry_t AV_KERN_TABLE(TN, D)[];    \
  extern "C" const int AV_KERN_COUNT(TN, D);

AV_KERN_DECLARE_TABLE(fp16, 128)
AV_KERN_DECLARE_TABLE(bf16, 128)
AV_KERN_DECLARE_TABLE(fp16, 64)
AV_KERN_DECLARE_TABLE(bf16, 64)
extern "C" const av_kern_entry_t av_kern_tab_merge[];
extern "C" const int av_kern_cnt_merge;
/* The merge that also writes each row's lse (kernels/merge.cu), for a dtype and head dim;
 * NULL for a head dim without one. Not in the variant table: same launch shape as the
 * table's merge of that dtype and head dim. */
extern "C" const void *av_kern_merge_lse_fn(int dtype, int head_dim);

#endif
