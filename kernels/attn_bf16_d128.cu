/* Attention variants for bf16, head dim 128 (see kernels/attn_tu.cuh). */
#define AV_TU_NAME bf16
#define AV_TU_T __nv_bfloat16
#define AV_TU_DTYPE 1
#define AV_TU_D 128
#define AV_TU_LIST AV_KERN_LIST_D128
#include "kernels/attn_tu.cuh"
