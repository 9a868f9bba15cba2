// ssm_step.cu — one token of the selective SSM, state in place (CUDA C++17, no LibTorch).
#include <cuda_runtime.h>

#include <string>

#include "kernels/ssm_step.h"

namespace statescope::kernels {
namespace {

// grid (H, b), block kThreads: thread p owns row p of the state (P rows of N), strided when P > threads.
template <int kThreads>
__global__ void ssm_step_kernel(SsmStepArgs a) {
  const int64_t h = blockIdx.x, bi = blockIdx.y, H = a.H, P = a.P, N = a.N;
  const int64_t g = h / (H / a.G);
  __shared__ float red[kThreads], dred[kThreads];
  const float dt = a.dt[bi * H + h];
  const float decay = expf(dt * a.A[h]);
  const float* Bv = a.B + (bi * a.G + g) * N;
  const float* Cv = a.C + (bi * a.G + g) * N;
  float sq = 0.0f, dsq = 0.0f;
  for (int64_t p = threadIdx.x; p < P; p += kThreads) {
    float* row = a.h + ((bi * H + h) * P + p) * N;
    const float xv = a.x[(bi * H + h) * P + p];
    const float xdt = xv * dt;
    float acc = 0.0f;
    for (int64_t n = 0; n < N; ++n) {
      const float old = row[n], v = decay * old + xdt * Bv[n];
      row[n] = v;
      acc += v * Cv[n];
      sq += v * v;
      dsq += (v - old) * (v - old);
    }
    a.y[(bi * H + h) * P + p] = acc + (a.D ? a.D[h] * xv : 0.0f);
  }
  if (a.norm || a.delta) {
    red[threadIdx.x] = sq;
    dred[threadIdx.x] = dsq;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s], dred[threadIdx.x] += dred[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0 && a.norm) a.norm[bi * H + h] = sqrtf(red[0]);
    if (threadIdx.x == 0 && a.delta) a.delta[bi * H + h] = sqrtf(dred[0]);
  }
}

}  // namespace

std::string ssm_step_cuda(const SsmStepArgs& a, void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || !a.h || !a.x || !a.dt ||
      !a.A || !a.B || !a.C || !a.y)
    return "ssm_step_cuda: bad arguments (need b, H, P, N, G > 0, H % G == 0 and every required pointer)";
  constexpr int kThreads = 64;  // a power of two (tree reduction); P = 64 in every Mamba-2 checkpoint
  dim3 grid(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  ssm_step_kernel<kThreads><<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? std::string() : std::string("ssm_step_kernel launch: ") + cudaGetErrorString(e);
}

}  // namespace statescope::kernels
