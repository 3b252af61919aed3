/* How fast the SMs can stream KV-sized tiles into shared memory by bulk async copies (the
 * TMA path of kernels/attn_tma.cuh), from L2 and from DRAM, as a function of the bytes each
 * SM keeps in flight (prefix16k's root, docs/kernels.md: is it bound by the L2's bandwidth or by the
 * latency of its two-stage ring?). One warp per CTA; lane 0 streams TILES tiles of TILE bytes
 * through an S-stage ring, each tile as TILE/4096 bulk copies completing on the stage's
 * mbarrier, and refills a stage as soon as its previous tile has landed (no math).
 *   L2:   every CTA reads the same 16 MiB buffer (L2-resident after the warm-up), from its
 *         own starting tile, as the root's row tiles all read one KV chunk;
 *   DRAM: every CTA reads its own region of a buffer several times the L2's size.
 * grid = SMs x CPS CTAs (CPS per SM by shared memory). Prints bytes per second over the
 * launch (median of 7) per (source, TILE, S, CPS). Build and run on the GPU machine:
 *   nvcc -O3 -std=c++17 -arch=sm_90a -I. bench/l2_probe.cu -o l2_probe && ./l2_probe */
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/attn.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

constexpr int TILES = 64;  /* per CTA: the root's 4096 tokens in tiles of 64 */

__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes,
                                          uint64_t *bar) {
#if AV_HAVE_TMA
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(av::smem_u32(dst)), "l"(src), "r"(bytes), "r"(av::smem_u32(bar))
      : "memory");
#endif
}

template <int TILE, int S>
__global__ void probe(const char *buf, long long n_tiles, int own_region, unsigned *sink) {
  extern __shared__ __align__(1024) char smem[];
  uint64_t *bars = reinterpret_cast<uint64_t *>(smem + S * TILE);
  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) av::mbar_init(bars + s, 1);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const long long first = own_region ? (long long)blockIdx.x * TILES
                                     : ((long long)blockIdx.x * 7919) % n_tiles;
  for (int t = 0; t < TILES + S; ++t) {
    const int s = t % S;
    if (t >= S) av::mbar_wait(bars + s, (unsigned)((t / S - 1) & 1));  /* tile t - S landed */
    if (t >= TILES) continue;
    av::mbar_expect_tx(bars + s, TILE);
    const char *src = buf + ((first + t) % n_tiles) * TILE;
    for (int c = 0; c < TILE; c += 4096) bulk_load(smem + s * TILE + c, src + c, 4096, bars + s);
  }
  sink[blockIdx.x] = *reinterpret_cast<const unsigned *>(smem);
}

template <int TILE, int S>
static int run(const char *src_name, const char *buf, long long buf_bytes, int own, int cps,
               int sms, unsigned *sink) {
  /* exactly CPS CTAs an SM: each asks for more than 1 / (CPS + 1) of the SM's 228 KiB (1 KiB
   * of which the system keeps per CTA) */
  const int sm_bytes = 228 * 1024;
  const int use = std::max(S * TILE + S * 8, sm_bytes / (cps + 1) - 1024 + 16);
  if (use > 227 * 1024 || cps * (use + 1024) > sm_bytes) return 0;
  auto k = probe<TILE, S>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, use));
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, 32, use));
  if (occ != cps) return 0;
  const int grid = sms * cps;
  const long long n_tiles = buf_bytes / TILE;
  if (own && (long long)grid * TILES > n_tiles) return 0;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int rep = 0; rep < 8; ++rep) {
    CK(cudaEventRecord(a));
    k<<<grid, 32, use>>>(buf, n_tiles, own, sink);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (rep > 0) ms.push_back(t);  /* the first run warms L2 */
  }
  std::sort(ms.begin(), ms.end());
  const double sec = ms[ms.size() / 2] * 1e-3;
  const double bytes = (double)grid * TILES * TILE;
  std::printf("%s,%d,%d,%d,%d,%.1f,%.2f\n", src_name, TILE, S, cps, S * TILE * cps / 1024,
              sec * 1e6, bytes / sec / 1e12);
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return 0;
}

template <int TILE>
static int sweep(const char *src_name, const char *buf, long long bytes, int own, int sms,
                 unsigned *sink) {
  for (int cps = 1; cps <= 3; ++cps) {
    if (run<TILE, 1>(src_name, buf, bytes, own, cps, sms, sink)) return 1;
    if (run<TILE, 2>(src_name, buf, bytes, own, cps, sms, sink)) return 1;
    if (run<TILE, 3>(src_name, buf, bytes, own, cps, sms, sink)) return 1;
    if (run<TILE, 4>(src_name, buf, bytes, own, cps, sms, sink)) return 1;
    if (run<TILE, 6>(src_name, buf, bytes, own, cps, sms, sink)) return 1;
  }
  return 0;
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long l2_bytes = 16ll << 20, dram_bytes = 2ll << 30;
  char *buf = nullptr;
  unsigned *sink = nullptr;
  CK(cudaMalloc(&buf, dram_bytes));
  CK(cudaMemset(buf, 1, dram_bytes));
  CK(cudaMalloc(&sink, 4096 * sizeof(unsigned)));
  std::printf("source,tile_bytes,stages,ctas_per_sm,kib_in_flight_per_sm,median_us,TB_per_s\n");
  if (sweep<32768>("L2", buf, l2_bytes, 0, sms, sink)) return 1;
  if (sweep<16384>("L2", buf, l2_bytes, 0, sms, sink)) return 1;
  if (sweep<32768>("DRAM", buf, dram_bytes, 1, sms, sink)) return 1;
  CK(cudaFree(buf));
  CK(cudaFree(sink));
  return 0;
}
