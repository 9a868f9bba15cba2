// ssm_scan.h — host entry for the CUDA sequential selective-scan kernel (plain C++, no LibTorch,
// no CUDA headers). Its CPU twin is core/ssm_scan_ref.h; tests/test_kernels.cpp compares them.
//
// This is the exact, simple GPU scan: one thread block per (batch, head), the state in shared
// memory, tokens in order. It computes the per-token state norm on the fly instead of storing
// states. The fast chunked kernel (issue 6) will be checked against it and against the CPU twin.
#pragma once
#include <cstdint>
#include <string>

namespace statescope::kernels {

// All pointers are device pointers to contiguous float32 arrays.
struct SsmScanArgs {
  const float* x = nullptr;   // [b, L, H, P]   input per head
  const float* dt = nullptr;  // [b, L, H]      step size after softplus and any clamp
  const float* A = nullptr;   // [H]            negative decay rate
  const float* B = nullptr;   // [b, L, G, N]   input projection, head h reads group h / (H/G)
  const float* C = nullptr;   // [b, L, G, N]   output projection
  const float* h0 = nullptr;  // [b, H, P, N]   initial state, or null for zeros
  float* y = nullptr;         // [b, L, H, P]   out: S_t C_t (no D term)
  float* h_final = nullptr;   // [b, H, P, N]   out: state after the last token
  float* norm = nullptr;      // [b, L, H]      out: ||S_t||_F, or null to skip
  int64_t b = 0, L = 0, H = 0, P = 0, G = 1, N = 0;
};

// Launches on `stream` (a cudaStream_t, or null for the default stream) and checks the launch.
// Returns "" on success, else a message naming the failing CUDA call. Needs P*N*4 bytes of shared
// memory per block (64 x 128 fits).
std::string ssm_scan_fwd_cuda(const SsmScanArgs& a, void* stream);

// Chunk-parallel variant (the same results): the sequence is cut into chunks of Q tokens.
//   pass 1, one block per (chunk, head, batch): scan the chunk from a zero state -> its local final
//           state and its total decay exp(sum dt A);
//   pass 2, per (head, batch): chain the chunks, start_{c+1} = decay_c start_c + local_c (start_0 = h0);
//   pass 3, one block per (chunk, head, batch): rescan the chunk from start_c, writing y and norms.
// Parallel over b*H*ceil(L/Q) blocks instead of b*H; reads the inputs twice. `workspace` is a device
// buffer of ssm_scan_chunked_workspace_floats(a, Q) floats. CPU twin: ssm_scan_chunked_ref.
int64_t ssm_scan_chunked_workspace_floats(const SsmScanArgs& a, int64_t Q);
std::string ssm_scan_chunked_fwd_cuda(const SsmScanArgs& a, int64_t Q, float* workspace, void* stream);

// True when the CUDA runtime sees at least one device.
bool cuda_device_available();

}  // namespace statescope::kernels
