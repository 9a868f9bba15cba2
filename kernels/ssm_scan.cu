// ssm_scan.cu — sequential selective scan on the GPU (CUDA C++17, no LibTorch).
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "kernels/ssm_scan.h"

namespace statescope::kernels {
namespace {

// grid (H, b), block 128 threads; shared: state [P*N] then C_t [N], B_t [N], x_t [P], norm partials.
__global__ void ssm_scan_seq_kernel(SsmScanArgs a) {
  const int64_t h = blockIdx.x, bi = blockIdx.y, H = a.H, P = a.P, N = a.N, L = a.L;
  const int64_t g = h / (H / a.G);
  extern __shared__ float smem[];
  float* S = smem;             // [P, N]
  float* Bt = S + P * N;       // [N]
  float* Ct = Bt + N;          // [N]
  float* xt = Ct + N;          // [P]
  float* red = xt + P;         // [blockDim.x]
  const int tid = threadIdx.x, nt = blockDim.x;
  const float A = a.A[h];
  for (int64_t i = tid; i < P * N; i += nt)
    S[i] = a.h0 ? a.h0[((bi * H + h) * P) * N + i] : 0.0f;
  __syncthreads();
  for (int64_t t = 0; t < L; ++t) {
    const int64_t bl = bi * L + t;
    const float dt = a.dt[bl * H + h];
    const float decay = expf(dt * A);
    for (int64_t n = tid; n < N; n += nt) {
      Bt[n] = a.B[(bl * a.G + g) * N + n];
      Ct[n] = a.C[(bl * a.G + g) * N + n];
    }
    for (int64_t p = tid; p < P; p += nt) xt[p] = a.x[(bl * H + h) * P + p] * dt;
    __syncthreads();
    float sq = 0.0f;
    for (int64_t i = tid; i < P * N; i += nt) {
      const float v = decay * S[i] + xt[i / N] * Bt[i % N];
      S[i] = v;
      sq += v * v;
    }
    red[tid] = sq;
    __syncthreads();
    for (int64_t p = tid; p < P; p += nt) {
      float acc = 0.0f;
      for (int64_t n = 0; n < N; ++n) acc += S[p * N + n] * Ct[n];
      a.y[(bl * H + h) * P + p] = acc;
    }
    if (a.norm) {
      for (int s = nt / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
      }
      if (tid == 0) a.norm[bl * H + h] = sqrtf(red[0]);
    }
    __syncthreads();
  }
  for (int64_t i = tid; i < P * N; i += nt) a.h_final[((bi * H + h) * P) * N + i] = S[i];
}

std::string check(cudaError_t e, const char* what) {
  return e == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string ssm_scan_fwd_cuda(const SsmScanArgs& a, void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || a.L < 0)
    return "ssm_scan_fwd_cuda: bad sizes (need b, H, P, N, G > 0, H % G == 0, L >= 0)";
  constexpr int kThreads = 128;  // a power of two (tree reduction)
  const size_t shmem = sizeof(float) * static_cast<size_t>(a.P * a.N + 2 * a.N + a.P + kThreads);
  if (shmem > 48 * 1024) {
    if (auto e = check(cudaFuncSetAttribute(ssm_scan_seq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shmem)),
                       "cudaFuncSetAttribute(shared memory)");
        !e.empty())
      return e;
  }
  dim3 grid(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  ssm_scan_seq_kernel<<<grid, kThreads, shmem, static_cast<cudaStream_t>(stream)>>>(a);
  return check(cudaGetLastError(), "ssm_scan_seq_kernel launch");
}

bool cuda_device_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace statescope::kernels
