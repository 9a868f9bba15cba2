// fused_infer.cpp — conv1d and single-token step kernels behind tensor functions (see fused_infer.h).
#include "core/model/mamba2/fused_infer.h"

#include <c10/core/DeviceGuard.h>
#include <torch/torch.h>

#include "core/twins/conv1d_ref.h"
#include "core/base/error.h"
#include "core/model/mamba2/fused_scan.h"
#include "core/twins/ssm_step_ref.h"

namespace statescope {

torch::Tensor fused_conv1d_silu(const torch::Tensor& xBC, const torch::Tensor& w, const torch::Tensor& bias,
                                const torch::Tensor& state0, torch::Tensor& state1) {
  require_kernels_for(xBC, "fused conv1d");
  const c10::DeviceGuard on(xBC.device());  // raw launches go to the current device: make it the input's
  const int64_t b = xBC.size(0), L = xBC.size(1), C = xBC.size(2), K = w.size(-1);
  if (L < 1 || w.numel() != C * K) throw Error("fused conv1d: need L >= 1 and a [C, 1, K] weight");
  auto x = contiguous_f32(xBC), wk = contiguous_f32(w.reshape({C, K}));  // [b, L, C], [C, K]
  auto bs = bias.defined() ? contiguous_f32(bias) : torch::Tensor();      // [C]
  auto s0 = state0.defined() ? contiguous_f32(state0) : torch::Tensor();  // [b, C, K-1]
  auto y = torch::empty({b, L, C}, x.options());                        // [b, L, C]
  state1 = torch::empty({b, C, K - 1}, x.options());                    // [b, C, K-1]
  kernels::Conv1dArgs a;
  a.x = x.data_ptr<float>(); a.w = wk.data_ptr<float>(); a.bias = bs.defined() ? bs.data_ptr<float>() : nullptr;
  a.state0 = s0.defined() ? s0.data_ptr<float>() : nullptr; a.y = y.data_ptr<float>(); a.state1 = state1.data_ptr<float>();
  a.b = b; a.L = L; a.C = C; a.K = K; a.silu = true;
  if (x.is_cuda()) {
#if STATESCOPE_HAVE_KERNELS
    if (auto err = kernels::conv1d_fwd_cuda(a, nullptr); !err.empty()) throw Error("fused conv1d: " + err);
    count_fused_launch(FusedKernel::Conv1d);
#endif
  } else {
    conv1d_fwd_ref(a);
  }
  return y;
}

ScanResult fused_step(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C, const torch::Tensor& D, const torch::Tensor& h0, bool want_norms) {
  check_scan_shapes(x, dt, A, B, C, h0);
  require_kernels_for(x, "fused step");
  const c10::DeviceGuard on(x.device());
  if (x.size(1) != 1) throw Error("fused step: one token at a time, got L = " + std::to_string(x.size(1)));
  const int64_t b = x.size(0), H = x.size(2), P = x.size(3), G = B.size(2), N = B.size(3);
  auto xs = contiguous_f32(x.reshape({b, H, P})), dts = contiguous_f32(dt.reshape({b, H}));
  auto As = contiguous_f32(A), Ds = contiguous_f32(D);
  auto Bs = contiguous_f32(B.reshape({b, G, N})), Cs = contiguous_f32(C.reshape({b, G, N}));
  ScanResult r;
  r.final_state = h0.defined() ? contiguous_f32(h0).clone() : torch::zeros({b, H, P, N}, xs.options());  // updated in place
  r.y = torch::empty({b, 1, H, P}, xs.options());
  if (want_norms) r.state_norm = torch::empty({b, 1, H}, xs.options()), r.delta_norm = torch::empty({b, 1, H}, xs.options());
  kernels::SsmStepArgs a;
  a.h = r.final_state.data_ptr<float>(); a.x = xs.data_ptr<float>(); a.dt = dts.data_ptr<float>();
  a.A = As.data_ptr<float>(); a.B = Bs.data_ptr<float>(); a.C = Cs.data_ptr<float>(); a.D = Ds.data_ptr<float>();
  a.y = r.y.data_ptr<float>(); a.norm = want_norms ? r.state_norm.data_ptr<float>() : nullptr;
  a.delta = want_norms ? r.delta_norm.data_ptr<float>() : nullptr;
  a.b = b; a.H = H; a.P = P; a.G = G; a.N = N;
  if (xs.is_cuda()) {
#if STATESCOPE_HAVE_KERNELS
    if (auto err = kernels::ssm_step_cuda(a, nullptr); !err.empty()) throw Error("fused step: " + err);
    count_fused_launch(FusedKernel::Step);
#endif
  } else {
    ssm_step_ref(a);
  }
  return r;
}

}  // namespace statescope
