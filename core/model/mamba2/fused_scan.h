// fused_scan.h — the scan through the chunk-parallel kernels (kernels/ssm_scan.h) as one autograd
// node: forward = ssm_scan_chunked_fwd, backward = ssm_scan_chunked_bwd (chunk start states and
// adjoints, never all states). On a CUDA device it runs the CUDA kernels (when built with nvcc), on
// the CPU their twins in core/twins/ssm_scan_ref.h (plain loops: slow, exact; tests use them to check the
// wiring that the GPU then runs).
//
// Inputs as ssd_scan.h: x [b, L, H, P], dt [b, L, H], A [H], B/C [b, L, G, N], h0 [b, H, P, N] or
// undefined; all float32 on one device. Gradients flow to every input, h0 included. The state norms
// and delta norms ||S_t - S_{t-1}|| (when asked) are measurements and carry no gradient.
#pragma once
#include "core/model/mamba2/ssd_scan.h"

namespace statescope {

// Backward chunk length: chunks of at most this many tokens keep a tile of rows' states in shared
// memory (64 x 16 rows x 128 x 4 B = 528 KiB does not fit; 64 x 4 x 128 x 4 B = 132 KiB does).
constexpr int64_t kFusedBackwardChunk = 64;

// Throws statescope::Error for a CUDA tensor in a build without the kernels, or when a kernel fails.
ScanResult fused_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C, const torch::Tensor& h0, int64_t chunk, bool want_norms);

// True when this build has the CUDA kernels (nvcc at configure time).
bool fused_kernels_built();

// CUDA kernel launches that returned without error since the process started (the CPU twins are not
// counted). Tests read them before and after a forward, so a "fused" test can never pass by running
// ATen's scan instead.
struct FusedLaunchCounts {
  int64_t scan_forward = 0, scan_backward = 0, conv1d = 0, step = 0;
};
FusedLaunchCounts fused_launch_counts();
// Called by the fused ops after each successful CUDA launch.
enum class FusedKernel { ScanForward, ScanBackward, Conv1d, Step };
void count_fused_launch(FusedKernel k);

// Shared by the fused ops (here and fused_infer.cpp): throws Error naming `what` for a CUDA tensor in
// a build without the kernels; float32 and contiguous (copies only when needed).
void require_kernels_for(const torch::Tensor& x, const char* what);
torch::Tensor contiguous_f32(const torch::Tensor& t);

}  // namespace statescope
