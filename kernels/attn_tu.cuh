/* Body of one attention translation unit: instantiates the variant list for one dtype and
 * head dim (AV_TU_NAME, AV_TU_T, AV_TU_DTYPE, AV_TU_D, AV_TU_LIST defined by the includer) and
 * publishes their table. One TU per (dtype, head dim) so the build compiles them in parallel. */
#include "kernels/attn.cuh"
#include "kernels/kern_internal.h"
#include "kernels/variant_list.h"

#define AV_TU_KIND_partial AV_KIND_PARTIAL
#define AV_TU_KIND_persistent AV_KIND_PERSISTENT
#define AV_TU_KIND_decode AV_KIND_DECODE
/* dynamic shared memory per kind: the persistent kernel adds its item ring (attn_stream.cuh) */
#define AV_TU_SMEM_partial(M, N, D) av::geom<M, N, D>::SMEM
#define AV_TU_SMEM_decode(M, N, D) av::geom<M, N, D>::SMEM
#define AV_TU_SMEM_persistent(M, N, D) av::geom<M, N, D>::SMEM_STREAM

#define AV_TU_DEF2(KIND, BODY, TN, M, N, D) AV_DEFINE_ATTN(KIND, BODY, TN, AV_TU_T, M, N, D)
#define AV_TU_DEF1(KIND, BODY, TN, M, N, D) AV_TU_DEF2(KIND, BODY, TN, M, N, D)
#define AV_TU_DEF(KIND, BODY, M, N) AV_TU_DEF1(KIND, BODY, AV_TU_NAME, M, N, AV_TU_D)
AV_TU_LIST(AV_TU_DEF)

#define AV_TU_ENT2(KIND, TN, M, N, D)                                                      \
  {{"av_k_" #KIND "_" #TN "_d" #D "_m" #M "_n" #N, AV_TU_KIND_##KIND, M, N,               \
    av::geom<M, N, D>::W, D, AV_TU_DTYPE, av::geom<M, N, D>::T, AV_TU_SMEM_##KIND(M, N, D)}, \
   (const void *)av_k_##KIND##_##TN##_d##D##_m##M##_n##N},
#define AV_TU_ENT1(KIND, TN, M, N, D) AV_TU_ENT2(KIND, TN, M, N, D)
#define AV_TU_ENT(KIND, BODY, M, N) AV_TU_ENT1(KIND, AV_TU_NAME, M, N, AV_TU_D)

#define AV_TU_TAB2(TN, D) AV_KERN_TABLE(TN, D)
#define AV_TU_TAB1(TN, D) AV_TU_TAB2(TN, D)
#define AV_TU_CNT2(TN, D) AV_KERN_COUNT(TN, D)
#define AV_TU_CNT1(TN, D) AV_TU_CNT2(TN, D)

extern "C" const av_kern_entry_t AV_TU_TAB1(AV_TU_NAME, AV_TU_D)[] = {AV_TU_LIST(AV_TU_ENT)};
extern "C" const int AV_TU_CNT1(AV_TU_NAME, AV_TU_D) =
    (int)(sizeof AV_TU_TAB1(AV_TU_NAME, AV_TU_D) / sizeof AV_TU_TAB1(AV_TU_NAME, AV_TU_D)[0]);
