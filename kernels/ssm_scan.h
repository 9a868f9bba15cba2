// ssm_scan.h — host entry for the CUDA sequential selective-scan kernel (plain C++, no LibTorch,
// no CUDA headers). Its CPU twin is core/twins/ssm_scan_ref.h; tests/test_kernels.cpp compares them.
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
  float* delta = nullptr;     // [b, L, H]      out: ||S_t - S_{t-1}||_F (S_{-1} = h0), or null to skip
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

// Gradients of the scan (the norm output is a measurement and has none). dy and dh_final are inputs
// (dh_final may be null: zero); the rest are outputs, overwritten. dh0 may be null when there is no
// initial state (a.h0 null) or its gradient is not wanted. All float32, device pointers.
struct SsmScanGrads {
  const float* dy = nullptr;        // [b, L, H, P]
  const float* dh_final = nullptr;  // [b, H, P, N] or null
  float* dx = nullptr;              // [b, L, H, P]
  float* ddt = nullptr;             // [b, L, H]
  float* dA = nullptr;              // [H]
  float* dB = nullptr;              // [b, L, G, N]
  float* dC = nullptr;              // [b, L, G, N]
  float* dh0 = nullptr;             // [b, H, P, N] or null
};

// Backward of the scan, chunk-parallel like the forward, never materialising all states. With R_t =
// dLoss/dS_t (the adjoint: R_t = dy_t C_t^T + a_{t+1} R_{t+1}, R_{L-1} = dy C^T + dh_final):
//   pass 0: the forward's passes 1 and 2 at chunk Q -> the state at the start of every chunk;
//   pass 1, per (chunk, row tile, head, batch): the chunk's local adjoint from zero, a_t0 R_t0;
//   pass 2, per (head, batch): chain adjoints from the last chunk back, In_{c-1} = decay_c In_c + local_c,
//           leaving the adjoint entering each chunk from its right, and dh0 = In_{-1};
//   pass 3, per (chunk, row tile, head, batch): recompute the chunk's states into shared memory
//           (Q + 1 states of `tile` rows), walk it backwards with the adjoint and accumulate
//           dC_t = sum_p dy_t[p] S_t[p,:], dB_t = sum_p R_t[p,:] dt x_t[p], dx_t = dt R_t B_t,
//           ddt_t = x_t . R_t B_t + a_t A sum(R_t * S_{t-1}), dA = sum_t a_t dt_t sum(R_t * S_{t-1}).
// dB, dC, ddt and dA gather over heads and row tiles with float atomics (summation order varies
// from run to run at the 1e-7 relative level). Workspace: ssm_scan_chunked_bwd_workspace_floats.
// Shared memory per block: ((Q + 2) tile N + 2 N + 4 tile + (tile + 1) 128) floats; the host entry
// picks the largest tile (a divisor of P, at most 16) that fits, and refuses when none does.
// CPU twin: ssm_scan_bwd_ref (same passes, same chunk size).
int64_t ssm_scan_chunked_bwd_workspace_floats(const SsmScanArgs& a, int64_t Q);
std::string ssm_scan_chunked_bwd_cuda(const SsmScanArgs& a, const SsmScanGrads& g, int64_t Q, float* workspace,
                                      void* stream);

// True when the CUDA runtime sees at least one device.
bool cuda_device_available();

}  // namespace statescope::kernels
