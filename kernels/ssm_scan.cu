// ssm_scan.cu — the selective scan forward on the GPU, sequential and chunk-parallel (CUDA C++17, no LibTorch).
#include "kernels/scan_common.cuh"

namespace statescope::kernels {
namespace {

// grid (H, b), block 128 threads: the whole sequence of one (batch, head) in order.
__global__ void ssm_scan_seq_kernel(SsmScanArgs a) {
  extern __shared__ float smem[];
  const int64_t h = blockIdx.x, bi = blockIdx.y, at = (bi * a.H + h) * a.P * a.N;
  scan_range(a, bi, h, 0, a.L, a.h0 ? a.h0 + at : nullptr, a.h_final + at, true, smem);
}

// pass 3: grid (nc, H, b).
__global__ void chunk_output_kernel(SsmScanArgs a, Chunking k, const float* ws) {
  extern __shared__ float smem[];
  const int64_t c = blockIdx.x, h = blockIdx.y, bi = blockIdx.z;
  const int64_t t0 = c * k.Q, t1 = t0 + k.Q < a.L ? t0 + k.Q : a.L;
  scan_range(a, bi, h, t0, t1, ws + k.state_at(bi, h, c, a.H), nullptr, true, smem);
}

}  // namespace

std::string ssm_scan_fwd_cuda(const SsmScanArgs& a, void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || a.L < 0)
    return "ssm_scan_fwd_cuda: bad sizes (need b, H, P, N, G > 0, H % G == 0, L >= 0)";
  const size_t shmem = scan_shmem(a);
  if (auto e = allow_shmem(ssm_scan_seq_kernel, shmem, "cudaFuncSetAttribute(shared memory)"); !e.empty()) return e;
  dim3 grid(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  ssm_scan_seq_kernel<<<grid, kThreads, shmem, static_cast<cudaStream_t>(stream)>>>(a);
  return check(cudaGetLastError(), "ssm_scan_seq_kernel launch");
}

int64_t ssm_scan_chunked_workspace_floats(const SsmScanArgs& a, int64_t Q) {
  const int64_t nc = Q > 0 ? (a.L + Q - 1) / Q : 0;
  return a.b * a.H * nc * (a.P * a.N + 1);
}

std::string ssm_scan_chunked_fwd_cuda(const SsmScanArgs& a, int64_t Q, float* workspace, void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || a.L < 0 || Q <= 0 || !workspace)
    return "ssm_scan_chunked_fwd_cuda: bad sizes (need b, H, P, N, G, Q > 0, H % G == 0, L >= 0, a workspace)";
  const size_t shmem = scan_shmem(a);
  if (auto e = allow_shmem(chunk_local_kernel, shmem, "cudaFuncSetAttribute(shared memory, pass 1)"); !e.empty()) return e;
  if (auto e = allow_shmem(chunk_output_kernel, shmem, "cudaFuncSetAttribute(shared memory, pass 3)"); !e.empty()) return e;
  Chunking k{Q, (a.L + Q - 1) / Q, a.P * a.N};
  auto st = static_cast<cudaStream_t>(stream);
  if (k.nc == 0) {  // L == 0: the final state is the initial state
    chunk_chain_kernel<<<dim3(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b)), 256, 0, st>>>(a, k, workspace);
    return check(cudaGetLastError(), "chunk_chain_kernel launch");
  }
  dim3 grid(static_cast<unsigned>(k.nc), static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  chunk_local_kernel<<<grid, kThreads, shmem, st>>>(a, k, workspace);
  if (auto e = check(cudaGetLastError(), "chunk_local_kernel launch"); !e.empty()) return e;
  chunk_chain_kernel<<<dim3(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b)), 256, 0, st>>>(a, k, workspace);
  if (auto e = check(cudaGetLastError(), "chunk_chain_kernel launch"); !e.empty()) return e;
  chunk_output_kernel<<<grid, kThreads, shmem, st>>>(a, k, workspace);
  return check(cudaGetLastError(), "chunk_output_kernel launch");
}

bool cuda_device_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace statescope::kernels
