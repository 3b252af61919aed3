/* Attention variants for bf16, head dim 64 (see kernels/attn_tu.cuh). */
#define AV_TU_NAME bf16
#define AV_TU_T __nv_bfloat16
#define AV_TU_DTYPE 1
#define AV_TU_D 64
#define AV_TU_LIST AV_KERN_LIST_D64
#include "kernels/attn_tu.cuh"
