/* Checks the wgmma path of the m64 attention tiles (kernels/attn_wgmma.cuh) in isolation: one
 * warpgroup computes S = Q K^T (K-major B) and O = fp16(S) V (MN-major B, transposed) from K
 * and V tiles written in the 128-byte swizzled layout, with Q and P as register A fragments, and the
 * host compares both with a double-precision product of the same fp16 inputs. Prints the
 * largest relative error of each and "ok"/"FAIL". Build with the descriptor strides of the
 * kernels, or with -DAV_WG_SWAP to try LBO and SBO exchanged (what a layout mistake would
 * need); the attention kernels' own tests (tests/gpu_kernels.c) cover the loader and softmax.
 * On the GPU machine:
 *   nvcc -O3 -std=c++17 -arch=sm_90a -I. bench/wgmma_probe.cu -o wgmma_probe && ./wgmma_probe */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef AV_WG_SWAP
#define AV_WG_K_LBO(N) 16
#define AV_WG_K_SBO(N) 1024
#define AV_WG_V_LBO(N) 1024
#define AV_WG_V_SBO(N) ((N) * 128)
#endif
#include "kernels/attn_wgmma.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

constexpr int M = 64, N = 64, D = 128;

__global__ void probe(const __half *q, const __half *k, const __half *v, float *s_out,
                      float *o_out) {
#if AV_HAVE_WGMMA
  __shared__ __align__(1024) __half ks[N * D], vs[N * D];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < N * D; i += 128) {
    ks[av::wg_off(i / D, i % D, N)] = k[i];
    vs[av::wg_off(i / D, i % D, N)] = v[i];
  }
  av::fence_proxy_async();
  __syncthreads();
  /* A fragments of the warp's 16 rows (mma.sync m16n8k16 layout) */
  const int r0 = warp * 16 + lane / 4, c0 = (lane % 4) * 2;
  uint32_t qf[D / 16][4];
  for (int kk = 0; kk < D / 16; ++kk)
    for (int e = 0; e < 4; ++e) {
      const int r = r0 + (e & 1) * 8, c = kk * 16 + c0 + (e >> 1) * 8;
      __half2 h = __halves2half2(q[r * D + c], q[r * D + c + 1]);
      qf[kk][e] = *reinterpret_cast<uint32_t *>(&h);
    }
  float s[N / 8][4], o[D / 8][4];
  av::wg_qk<__half, N, D>(s, qf, ks);
  for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  av::wg_pv<__half, N, D>(o, s, vs);
  for (int j = 0; j < N / 8; ++j)
    for (int e = 0; e < 4; ++e) s_out[(r0 + (e >> 1) * 8) * N + j * 8 + c0 + (e & 1)] = s[j][e];
  for (int j = 0; j < D / 8; ++j)
    for (int e = 0; e < 4; ++e) o_out[(r0 + (e >> 1) * 8) * D + j * 8 + c0 + (e & 1)] = o[j][e];
#endif
}

static double max_rel(const std::vector<float> &got, const std::vector<double> &ref) {
  double scale = 0, err = 0;
  for (size_t i = 0; i < ref.size(); ++i) scale = std::fmax(scale, std::fabs(ref[i]));
  for (size_t i = 0; i < ref.size(); ++i) err = std::fmax(err, std::fabs(got[i] - ref[i]));
  return err / (scale > 0 ? scale : 1);
}

int main() {
  std::vector<__half> q(M * D), k(N * D), v(N * D);
  std::vector<float> qf(M * D), kf(N * D), vf(N * D);
  srand(7);
  auto fill = [](std::vector<__half> &h, std::vector<float> &f, float amp) {
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = __float2half(amp * (2.f * rand() / RAND_MAX - 1.f));
      f[i] = __half2float(h[i]);
    }
  };
  fill(q, qf, 0.25f);
  fill(k, kf, 0.25f);
  fill(v, vf, 1.f);
  __half *dq, *dk, *dv;
  float *ds, *dout;
  CK(cudaMalloc(&dq, M * D * 2));
  CK(cudaMalloc(&dk, N * D * 2));
  CK(cudaMalloc(&dv, N * D * 2));
  CK(cudaMalloc(&ds, M * N * 4));
  CK(cudaMalloc(&dout, M * D * 4));
  CK(cudaMemcpy(dq, q.data(), M * D * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, k.data(), N * D * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, v.data(), N * D * 2, cudaMemcpyHostToDevice));
  probe<<<1, 128>>>(dq, dk, dv, ds, dout);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> s(M * N), o(M * D);
  CK(cudaMemcpy(s.data(), ds, M * N * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(o.data(), dout, M * D * 4, cudaMemcpyDeviceToHost));
  std::vector<double> sr(M * N, 0.0), orf(M * D, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int c = 0; c < D; ++c) sr[i * N + j] += (double)qf[i * D + c] * kf[j * D + c];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const double p = __half2float(__float2half(s[i * N + j]));  /* the GPU's own P */
      for (int c = 0; c < D; ++c) orf[i * D + c] += p * vf[j * D + c];
    }
  const double es = max_rel(s, sr), eo = max_rel(o, orf);
  std::printf("wgmma_probe%s: QK^T max rel err %.2e %s; PV max rel err %.2e %s\n",
#ifdef AV_WG_SWAP
              " (LBO/SBO swapped)",
#else
              "",
#endif
              es, es < 1e-3 ? "ok" : "FAIL", eo, eo < 1e-3 ? "ok" : "FAIL");
  return es < 1e-3 && eo < 1e-3 ? 0 : 1;
}
