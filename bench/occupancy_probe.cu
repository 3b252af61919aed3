// Occupancy probe: records cudaOccupancyMaxActiveBlocksPerMultiprocessor over a grid of
// (threads per CTA, registers per thread, shared memory per CTA) on the current GPU, as JSON
// on stdout, so that core/occupancy.c can be checked against the runtime row by row
// (tests/test_occupancy.c, tests/data/occupancy_h200.json).
//
// Standalone on purpose (not part of the anvil build):
//   nvcc -O2 -arch=sm_90 -o /tmp/probe bench/occupancy_probe.cu && /tmp/probe > out.json
//
// Register counts are forced per kernel with __maxnreg__ (CUDA 12.4+) on a body that keeps
// R live floats through a loop, so the compiler uses (about) R registers; the probe records
// what cudaFuncGetAttributes reports, not what was asked for. Shared memory is dynamic (the
// kernels declare none statically), raised past 48 KiB with cudaFuncSetAttribute.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
              cudaGetErrorString(e_));                                                \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

// N values stay live across the loop: each update reads a neighbour, so none can be
// rematerialised or dropped.
template <int N>
__device__ __forceinline__ void pressure(const float *in, float *out, int iters) {
  extern __shared__ float dyn[];
  float v[N];
#pragma unroll
  for (int i = 0; i < N; i++) v[i] = in[threadIdx.x + i * blockDim.x];
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = v[i] * v[(i + 1) % N] + 1.0f;
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N; i++) s += v[i];
  if (iters < 0) dyn[threadIdx.x] = s;  // touches shared memory without costing registers
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

#define PROBE_KERNEL(R)                                                                \
  __global__ void __maxnreg__(R) probe_r##R(const float *in, float *out, int iters) { \
    pressure<R>(in, out, iters);                                                       \
  }

PROBE_KERNEL(24)
PROBE_KERNEL(37)
PROBE_KERNEL(32)
PROBE_KERNEL(40)
PROBE_KERNEL(48)
PROBE_KERNEL(56)
PROBE_KERNEL(64)
PROBE_KERNEL(65)
PROBE_KERNEL(72)
PROBE_KERNEL(80)
PROBE_KERNEL(96)
PROBE_KERNEL(104)
PROBE_KERNEL(128)
PROBE_KERNEL(129)
PROBE_KERNEL(150)
PROBE_KERNEL(168)
PROBE_KERNEL(200)
PROBE_KERNEL(232)
PROBE_KERNEL(255)

typedef void (*probe_fn)(const float *, float *, int);
static const probe_fn kernels[] = {probe_r24,  probe_r32,  probe_r37,  probe_r40,
                                   probe_r48,  probe_r56,  probe_r64,  probe_r65,
                                   probe_r72,  probe_r80,  probe_r96,  probe_r104,
                                   probe_r128, probe_r129, probe_r150, probe_r168,
                                   probe_r200, probe_r232, probe_r255};
static const int threads_list[] = {32, 64, 96, 128, 160, 192, 256, 288, 384, 512, 640, 768, 1024};
static const int smem_list[] = {0, 1024, 8192, 24576, 49152, 102400, 163840, 232448};

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

int main() {
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, dev));
  int driver = 0, runtime = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  printf("{\n  \"device\": \"%s\",\n  \"cc\": %d,\n  \"driver\": %d,\n  \"runtime\": %d,\n",
         p.name, p.major * 10 + p.minor, driver, runtime);
  printf("  \"props\": {\"multiProcessorCount\": %d, \"maxThreadsPerMultiProcessor\": %d, "
         "\"maxBlocksPerMultiProcessor\": %d, \"maxThreadsPerBlock\": %d, "
         "\"regsPerMultiprocessor\": %d, \"regsPerBlock\": %d, "
         "\"sharedMemPerMultiprocessor\": %zu, \"sharedMemPerBlockOptin\": %zu, "
         "\"sharedMemPerBlock\": %zu, \"reservedSharedMemPerBlock\": %zu, "
         "\"l2CacheSize\": %d},\n",
         p.multiProcessorCount, p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor,
         p.maxThreadsPerBlock, p.regsPerMultiprocessor, p.regsPerBlock,
         p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin, p.sharedMemPerBlock,
         p.reservedSharedMemPerBlock, p.l2CacheSize);
  printf("  \"rows\": [\n");
  int first = 1, rows = 0;
  for (int k = 0; k < COUNT(kernels); k++) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, kernels[k]));
    for (int s = 0; s < COUNT(smem_list); s++) {
      int dyn = smem_list[s];
      // What a launcher does: allow the dynamic size it is about to use (opt-in past 48 KiB).
      cudaError_t e = cudaFuncSetAttribute(kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           dyn);
      for (int t = 0; t < COUNT(threads_list); t++) {
        int threads = threads_list[t], ctas = 0;
        cudaError_t o = e;
        if (e == cudaSuccess)
          o = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernels[k], threads, dyn);
        if (o != cudaSuccess) {
          ctas = 0;
          cudaGetLastError();  // clear the sticky-free error state
        }
        printf("%s    {\"threads\": %d, \"regs\": %d, \"smem\": %zu, \"ctas_per_sm\": %d, "
               "\"kernel_max_threads\": %d, \"local_bytes\": %zu%s%s%s}",
               first ? "" : ",\n", threads, a.numRegs, a.sharedSizeBytes + (size_t)dyn, ctas,
               a.maxThreadsPerBlock, a.localSizeBytes, o == cudaSuccess ? "" : ", \"error\": \"",
               o == cudaSuccess ? "" : cudaGetErrorName(o), o == cudaSuccess ? "" : "\"");
        first = 0;
        rows++;
      }
    }
  }
  printf("\n  ]\n}\n");
  fprintf(stderr, "occupancy_probe: %d rows\n", rows);
  return 0;
}
