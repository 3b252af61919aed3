/* How fast can a kernel that only reads stream HBM? The roofline floor divides a batch's
 * unique KV bytes by this rate (docs/kernels.md#the-floor), so it must be the best read
 * stream found, not the copy engine's read + write rate. Variants (each a grid of blocks per
 * SM x 256 threads over a 1 GiB buffer, far past the L2; median of 10 after 2 warm-ups):
 *   strided  every thread keeps U 16-byte loads in flight, U grid-strides apart;
 *   tiled    a block reads U x 256 consecutive 16-byte chunks per step (thread t: t + k*256),
 *            so a warp's U loads fall in one 16 KiB span;
 *   tiled_nc the same with ld.global.nc.L1::no_allocate (no L1 line kept).
 * Prints GB/s (bytes read / time) per (variant, U, blocks per SM). Build here, run on the GPU
 * machine:  nvcc -O3 -std=c++17 -arch=sm_90a bench/read_stream.cu -o read_stream && ./read_stream */
#include <algorithm>
#include <cstdio>
#include <vector>

#include <unistd.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

__device__ __forceinline__ uint4 ld_nc(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

template <int U> __global__ void strided(const uint4 *p, size_t n, unsigned *sink) {
  unsigned acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = p[i + k * stride];
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

template <int U, bool NC> __global__ void tiled(const uint4 *p, size_t n, unsigned *sink) {
  unsigned acc = 0;
  const size_t step = (size_t)gridDim.x * U * blockDim.x;
  for (size_t base = (size_t)blockIdx.x * U * blockDim.x; base + U * blockDim.x <= n;
       base += step) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const uint4 *q = p + base + threadIdx.x + k * blockDim.x;
      v[k] = NC ? ld_nc(q) : *q;
    }
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

typedef void (*kern_t)(const uint4 *, size_t, unsigned *);

static int measure(const char *name, int u, kern_t k, int blocks, const uint4 *buf, size_t n,
                   unsigned *sink) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = -2; r < 10; ++r) {
    CK(cudaEventRecord(a));
    k<<<blocks, 256>>>(buf, n, sink);
    CK(cudaGetLastError());
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    if (r >= 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-9s U=%d blocks=%5d  %7.0f GB/s\n", name, u, blocks,
              n * 16.0 / (ms[ms.size() / 2] * 1e-3) / 1e9);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return 0;
}

int main() {
  int dev = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const size_t bytes = (size_t)1 << 30, n = bytes / 16;
  uint4 *buf;
  unsigned *sink;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(buf, 1, bytes));
  for (int per_sm : {4, 8}) {
    const int g = sms * per_sm;
    if (measure("strided", 4, strided<4>, g, buf, n, sink)) return 1;
    if (measure("strided", 8, strided<8>, g, buf, n, sink)) return 1;
    if (measure("tiled", 4, tiled<4, false>, g, buf, n, sink)) return 1;
    if (measure("tiled", 8, tiled<8, false>, g, buf, n, sink)) return 1;
    if (measure("tiled_nc", 4, tiled<4, true>, g, buf, n, sink)) return 1;
    if (measure("tiled_nc", 8, tiled<8, true>, g, buf, n, sink)) return 1;
  }
  /* after 22 device-to-device copies of 1 GiB (what `anvil profile` measures just before) */
  uint4 *dst;
  CK(cudaMalloc(&dst, bytes));
  for (int r = 0; r < 22; ++r) CK(cudaMemcpy(dst, buf, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaFree(dst));
  for (int k = 0; k < 4; ++k)  /* does the rate come back by itself? */
    if (measure("tiled", 4, tiled<4, false>, sms * 8, buf, n, sink)) return 1;
  usleep(200000);
  if (measure("tiled", 4, tiled<4, false>, sms * 8, buf, n, sink)) return 1;
  /* a fresh buffer after the copies */
  uint4 *fresh;
  CK(cudaMalloc(&fresh, bytes));
  CK(cudaMemset(fresh, 1, bytes));
  if (measure("tiled", 4, tiled<4, false>, sms * 8, fresh, n, sink)) return 1;
  CK(cudaMemset(fresh, 0, bytes));
  if (measure("tiled", 4, tiled<4, false>, sms * 8, fresh, n, sink)) return 1;
  CK(cudaFree(fresh));
  cudaFree(buf);
  cudaFree(sink);
  return 0;
}
