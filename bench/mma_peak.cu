/* Tensor-core ceiling for the attention kernels: the rate of mma.sync m16n8k16
 * (fp16 in, fp32 accumulate; the instruction kernels/attn.cuh uses) when nothing else limits
 * it. Each warp keeps 8 independent accumulators busy for ITERS steps; grid = SMs x BLOCKS CTAs
 * of WARPS warps. Prints TFLOP/s per (warps per SM) so the rate at the attention kernels'
 * residency (8-12 warps per SM) can be read next to the peak.
 * Build and run on the GPU machine: nvcc -O3 -arch=sm_90 bench/mma_peak.cu -o mma_peak && ./mma_peak */
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

constexpr int ITERS = 4096;

__global__ void mma_loop(float *out, uint32_t seed) {
  uint32_t a[4] = {seed, seed ^ 1u, seed ^ 2u, seed ^ 3u};
  uint32_t b0 = seed * 3u, b1 = seed * 5u;
  float c[8][4] = {};
  for (int i = 0; i < ITERS; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  float s = 0.f;
  for (int j = 0; j < 8; ++j) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *out;
  CK(cudaMalloc(&out, sizeof(float) * sms * 64 * 1024));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::printf("warps_per_sm,tflops\n");
  const int cfg[][2] = {{1, 4}, {2, 4}, {3, 4}, {4, 4}, {2, 8}, {4, 8}, {8, 4}};
  for (auto &c : cfg) {
    const int blocks = c[0], warps = c[1];
    dim3 grid(sms * blocks), block(32 * warps);
    mma_loop<<<grid, block>>>(out, 1u);  // warm-up
    CK(cudaGetLastError());
    float best = 1e30f;
    for (int r = 0; r < 5; ++r) {
      CK(cudaEventRecord(e0));
      mma_loop<<<grid, block>>>(out, 7u + r);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (ms < best) best = ms;
    }
    const double flops = 2.0 * 16 * 8 * 16 * 8.0 * ITERS * (double)grid.x * warps;
    std::printf("%d,%.1f\n", blocks * warps, flops / (best * 1e-3) / 1e12);
  }
  return 0;
}
