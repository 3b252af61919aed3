/* The math ceiling of the m64 wgmma attention tile (prefix16k's root, docs/kernels.md): the kernels'
 * own QK^T, online softmax and PV (kernels/attn.cuh: wg_qk, tile_softmax_pv) on one K/V tile
 * that stays in shared memory, so no copy, page lookup or wait for data limits them. Each CTA
 * is one warpgroup of 64 query rows looping ITERS times over its tile, with the real kernel's
 * barrier per tile; grid = SMs x CPS CTAs, __launch_bounds__ asking for CPS per SM.
 *   N      KV tokens per tile (64: the root's tile; 128: QK^T on n128 wgmmas);
 *   AHEAD  1: QK^T of the next tile issued before this tile's softmax (attn_item_wg's order);
 *   MODE   0: the kernels' softmax; 1: P = S packed with no softmax (the two GEMMs alone).
 * Prints TFLOP/s per configuration (4 * 64 * N * 128 FLOP per tile and warpgroup). What the
 * attention kernel gets on the same tile (prefix16k's root, alone) is in
 * docs/kernels.md#targets-and-limits.
 * Build and run on the GPU machine:
 *   nvcc -O3 -std=c++17 -arch=sm_90a -I. bench/tile_math.cu -o tile_math && ./tile_math */
#include <cstdio>
#include <cuda_fp16.h>

#include "kernels/attn.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

constexpr int D = 128, ITERS = 2048;

template <int N, int AHEAD, int MODE, int CPS>
__global__ void __launch_bounds__(128, CPS) tile_math(float *out, float scale) {
#if AV_HAVE_WGMMA
  using T = __half;
  constexpr int SN = N / 8;
  extern __shared__ __align__(1024) char smem[];
  T *ks = reinterpret_cast<T *>(smem), *vs = ks + N * D;
  const int tid = threadIdx.x, lane = tid & 31;
  for (int i = tid; i < 2 * N * D; i += 128)  /* small finite values, any layout will do */
    ks[i] = __float2half(((i * 2654435761u) >> 24) / 256.f - 0.5f);
  av::fence_proxy_async();
  __syncthreads();
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int k = 0; k < D / 16; ++k)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      qf[k][e] = av::dt<T>::pack(((tid + k + e) % 7) * 0.1f - 0.3f, ((tid * 3 + k) % 5) * 0.1f);
  av::acc_t<D> a;
  a.reset();
  float s[SN][4], s2[SN][4];
  av::wg_qk<T, N, D>(s, qf, ks);
  for (int it = 0; it < ITERS; ++it) {
    if (AHEAD) av::wg_qk_issue<T, N, D>(s2, qf, ks);
    if (MODE == 0)
      av::tile_softmax_pv<T, 64, N, D>(s, a, vs, N, 0, lane, scale);
    else
      av::wg_pv<T, N, D>(a.o, s, vs);
    if (AHEAD) {
      av::wg_fence_regs<SN>(s2);
#pragma unroll
      for (int j = 0; j < SN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = s2[j][e];
    } else {
      av::wg_qk<T, N, D>(s, qf, ks);
    }
    __syncthreads();
  }
  float r = a.sum[0] + a.sum[1];
#pragma unroll
  for (int j = 0; j < D / 8; ++j) r += a.o[j][0] + a.o[j][3];
  out[blockIdx.x * 128 + tid] = r;
#endif
}

template <int N, int AHEAD, int MODE, int CPS>
static int run(float *out, int sms) {
  auto k = tile_math<N, AHEAD, MODE, CPS>;
  const int smem = 2 * N * D * 2;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, k));
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, 128, smem));
  const int grid = sms * CPS;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CK(cudaEventRecord(e0));
    k<<<grid, 128, smem>>>(out, 0.088f);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep > 0 && ms < best) best = ms;
  }
  CK(cudaGetLastError());
  const double flop = 4.0 * 64 * N * D * ITERS * grid;
  std::printf("%d,%d,%s,%d,%d,%d,%d,%.1f,%.1f\n", N, AHEAD, MODE ? "gemm_only" : "softmax", CPS,
              occ, fa.numRegs, (int)fa.localSizeBytes, best * 1e3, flop / (best * 1e-3) / 1e12);
  return 0;
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  float *out;
  CK(cudaMalloc(&out, (size_t)p.multiProcessorCount * 4 * 128 * sizeof(float)));
  std::printf("# %s, %d SMs, %d iterations per CTA\n", p.name, p.multiProcessorCount, ITERS);
  std::printf("n,ahead,mode,ctas_per_sm,occupancy,regs,local_bytes,best_us,tflops\n");
  const int sm = p.multiProcessorCount;
  int rc = 0;
  rc |= run<64, 0, 0, 1>(out, sm) | run<64, 0, 0, 2>(out, sm) | run<64, 0, 0, 3>(out, sm);
  rc |= run<64, 1, 0, 1>(out, sm) | run<64, 1, 0, 2>(out, sm) | run<64, 1, 0, 3>(out, sm);
  rc |= run<64, 0, 1, 1>(out, sm) | run<64, 0, 1, 2>(out, sm) | run<64, 0, 1, 3>(out, sm);
  rc |= run<128, 0, 0, 1>(out, sm) | run<128, 0, 0, 2>(out, sm) | run<128, 0, 0, 3>(out, sm);
  rc |= run<128, 1, 0, 1>(out, sm) | run<128, 1, 0, 2>(out, sm);
  rc |= run<128, 0, 1, 1>(out, sm) | run<128, 0, 1, 2>(out, sm) | run<128, 0, 1, 3>(out, sm);
  CK(cudaFree(out));
  return rc;
}
