// mamba1/selective_scan.cpp — the sequential reference in ATen and the CPU loops' autograd node.
#include "core/model/mamba1/selective_scan.h"
#include "core/model/intervention.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <sstream>
#include <vector>

#include "core/base/error.h"
#include "core/model/mamba1/selective_loops.h"
#include "core/model/tensor_text.h"

namespace statescope {
namespace {

void expect(const torch::Tensor& t, std::vector<int64_t> shape, const char* name, const char* axes) {
  if (!t.defined() || t.sizes().vec() != shape)
    throw Error(std::string("selective scan: ") + name + " must be " + axes + " = " +
                shape_str(shape) + ", got " + (t.defined() ? shape_str(t) : "nothing"));
}

// sq [b, Di, L] (per channel) -> [b, L, groups]: sqrt of each group's sum.
torch::Tensor group_norms(const torch::Tensor& sq, int64_t groups) {
  const int64_t b = sq.size(0), Di = sq.size(1), L = sq.size(2);
  return sq.view({b, groups, Di / groups, L}).sum(2).sqrt().transpose(1, 2);
}

}  // namespace

void check_selective_shapes(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                            const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& D,
                            const torch::Tensor& h0, int64_t groups) {
  if (!x.defined() || x.dim() != 3) throw Error("selective scan: x must be [b, L, d_inner]");
  const int64_t b = x.size(0), L = x.size(1), Di = x.size(2);
  if (!A.defined() || A.dim() != 2) throw Error("selective scan: A must be [d_inner, d_state]");
  const int64_t N = A.size(1);
  expect(dt, {b, L, Di}, "dt", "[b, L, d_inner]");
  expect(A, {Di, N}, "A", "[d_inner, d_state]");
  expect(B, {b, L, N}, "B", "[b, L, d_state]");
  expect(C, {b, L, N}, "C", "[b, L, d_state]");
  expect(D, {Di}, "D", "[d_inner]");
  if (h0.defined()) expect(h0, {b, Di, N}, "h0", "[b, d_inner, d_state]");
  if (groups < 1 || Di % groups != 0)
    throw Error("selective scan: " + std::to_string(groups) + " groups do not divide d_inner = " + std::to_string(Di));
}

SelectiveScanResult selective_scan_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                                              const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& D,
                                              const torch::Tensor& h0, int64_t groups, bool want_norms,
                                              const torch::Tensor& max_norm) {
  check_selective_shapes(x, dt, A, B, C, D, h0, groups);
  if (max_norm.defined() && (max_norm.dim() != 1 || max_norm.size(0) != groups))
    throw Error("selective_scan: max_norm must be [groups = " + std::to_string(groups) + "]");
  const int64_t b = x.size(0), L = x.size(1), Di = x.size(2), N = A.size(1);
  auto h = h0.defined() ? h0 : torch::zeros({b, Di, N}, x.options());  // [b, Di, N]
  std::vector<torch::Tensor> ys, nm, dl;
  ys.reserve(L);
  for (int64_t t = 0; t < L; ++t) {
    auto dtt = dt.select(1, t).unsqueeze(-1);                             // [b, Di, 1]
    auto hn = torch::exp(dtt * A) * h + (dtt * x.select(1, t).unsqueeze(-1)) * B.select(1, t).unsqueeze(1);
    if (max_norm.defined()) hn = clip_state(hn, max_norm);                // a group's norm <= its bound
    ys.push_back((hn * C.select(1, t).unsqueeze(1)).sum(-1));           // [b, Di]
    if (want_norms) {
      torch::NoGradGuard ng;
      nm.push_back(hn.reshape({b, groups, -1}).square().sum(-1).sqrt());            // [b, groups]
      dl.push_back((hn - h).reshape({b, groups, -1}).square().sum(-1).sqrt());
    }
    h = hn;
  }
  SelectiveScanResult r;
  r.y = (L ? torch::stack(ys, 1) : torch::zeros({b, 0, Di}, x.options())) + x * D;  // [b, L, Di]
  r.final_state = h;
  if (want_norms) {
    auto none = torch::zeros({b, 0, groups}, x.options());
    r.state_norm = L ? torch::stack(nm, 1) : none;                        // [b, L, groups]
    r.delta_norm = L ? torch::stack(dl, 1) : none;
  }
  return r;
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Channel-major float32 copies: [b, L, Di] -> [b, Di, L].
torch::Tensor channel_major(const torch::Tensor& t) { return t.to(torch::kFloat32).transpose(1, 2).contiguous(); }

cpu::ChannelScan channel(const float* x, const float* dt, const float* B, const float* C, const float* A,
                         const float* D, int64_t bi, int64_t c, int64_t Di, int64_t L, int64_t N) {
  cpu::ChannelScan s;
  s.x = x + (bi * Di + c) * L;
  s.dt = dt + (bi * Di + c) * L;
  s.B = B + bi * L * N;
  s.C = C + bi * L * N;
  s.A = A + c * N;
  s.D = D[c];
  s.L = L, s.N = N;
  return s;
}

// Channels per backward task: each task sums its channels' dB and dC rows into its own [L, N] buffers.
constexpr int64_t kChannelsPerTask = 32;

class SelectiveScanFn : public torch::autograd::Function<SelectiveScanFn> {
 public:
  static variable_list forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor dt, torch::Tensor A, torch::Tensor B,
                               torch::Tensor C, torch::Tensor D, torch::Tensor h0, int64_t groups, bool norms) {
    if (h0.numel() == 0) h0 = torch::Tensor();  // an empty tensor stands for "no initial state"
    const int64_t b = x.size(0), L = x.size(1), Di = x.size(2), N = A.size(1);
    auto xc = channel_major(x), dtc = channel_major(dt);                  // [b, Di, L]
    auto Bc = B.to(torch::kFloat32).contiguous(), Cc = C.to(torch::kFloat32).contiguous();  // [b, L, N]
    auto Ac = A.to(torch::kFloat32).contiguous();                         // [Di, N]
    auto Dc = D.to(torch::kFloat32).contiguous();                         // [Di]
    auto hf = h0.defined() ? h0.to(torch::kFloat32).contiguous().clone() : torch::zeros({b, Di, N}, torch::kFloat32);
    auto yc = torch::empty({b, Di, L}, torch::kFloat32);                  // [b, Di, L]
    torch::Tensor sq, dsq;
    if (norms) sq = torch::empty({b, Di, L}, torch::kFloat32), dsq = torch::empty({b, Di, L}, torch::kFloat32);
    const float *xp = xc.data_ptr<float>(), *dtp = dtc.data_ptr<float>(), *Bp = Bc.data_ptr<float>(),
                *Cp = Cc.data_ptr<float>(), *Ap = Ac.data_ptr<float>(), *Dp = Dc.data_ptr<float>();
    float *hp = hf.data_ptr<float>(), *yp = yc.data_ptr<float>();
    float* sqp = norms ? sq.data_ptr<float>() : nullptr;
    float* dsqp = norms ? dsq.data_ptr<float>() : nullptr;
    at::parallel_for(0, b * Di, 8, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t bi = i / Di, c = i % Di;
        cpu::selective_forward(channel(xp, dtp, Bp, Cp, Ap, Dp, bi, c, Di, L, N), hp + i * N, yp + i * L,
                               norms ? sqp + i * L : nullptr, norms ? dsqp + i * L : nullptr);
      }
    });
    ctx->save_for_backward({x, dt, A, B, C, D, h0});
    ctx->saved_data["h0_defined"] = h0.defined();
    variable_list out{yc.transpose(1, 2).to(x.scalar_type()), hf.to(x.scalar_type())};
    if (norms) {
      out.push_back(group_norms(sq, groups));
      out.push_back(group_norms(dsq, groups));
      ctx->mark_non_differentiable({out[2], out[3]});
    }
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    auto x = saved[0], dt = saved[1], A = saved[2], B = saved[3], C = saved[4], D = saved[5], h0 = saved[6];
    const bool has_h0 = ctx->saved_data["h0_defined"].toBool();
    const int64_t b = x.size(0), L = x.size(1), Di = x.size(2), N = A.size(1);
    auto xc = channel_major(x), dtc = channel_major(dt);
    auto Bc = B.to(torch::kFloat32).contiguous(), Cc = C.to(torch::kFloat32).contiguous();
    auto Ac = A.to(torch::kFloat32).contiguous(), Dc = D.to(torch::kFloat32).contiguous();
    auto h0c = has_h0 ? h0.to(torch::kFloat32).contiguous() : torch::zeros({b, Di, N}, torch::kFloat32);
    auto dyc = grads[0].defined() ? channel_major(grads[0]) : torch::zeros({b, Di, L}, torch::kFloat32);
    torch::Tensor dhf = grads[1].defined() ? grads[1].to(torch::kFloat32).contiguous() : torch::Tensor();
    auto dx = torch::empty({b, Di, L}, torch::kFloat32), ddt = torch::empty({b, Di, L}, torch::kFloat32);
    auto dh0 = torch::empty({b, Di, N}, torch::kFloat32);
    const int64_t per_b = (Di + kChannelsPerTask - 1) / kChannelsPerTask, tasks = b * per_b;
    auto dB_part = torch::zeros({b, per_b, L, N}, torch::kFloat32), dC_part = torch::zeros({b, per_b, L, N}, torch::kFloat32);
    auto dA_part = torch::zeros({b, Di, N}, torch::kFloat64);
    auto dD_part = torch::zeros({b, Di}, torch::kFloat64);
    const float *xp = xc.data_ptr<float>(), *dtp = dtc.data_ptr<float>(), *Bp = Bc.data_ptr<float>(),
                *Cp = Cc.data_ptr<float>(), *Ap = Ac.data_ptr<float>(), *Dp = Dc.data_ptr<float>(),
                *h0p = h0c.data_ptr<float>(), *dyp = dyc.data_ptr<float>();
    const float* dhfp = dhf.defined() ? dhf.data_ptr<float>() : nullptr;
    float *dxp = dx.data_ptr<float>(), *ddtp = ddt.data_ptr<float>(), *dh0p = dh0.data_ptr<float>();
    float *dBp = dB_part.data_ptr<float>(), *dCp = dC_part.data_ptr<float>();
    double *dAp = dA_part.data_ptr<double>(), *dDp = dD_part.data_ptr<double>();
    at::parallel_for(0, tasks, 1, [&](int64_t lo, int64_t hi) {
      std::vector<float> hist(static_cast<size_t>((L + 2) * N));
      for (int64_t task = lo; task < hi; ++task) {
        const int64_t bi = task / per_b, c0 = (task % per_b) * kChannelsPerTask;
        for (int64_t c = c0; c < std::min(Di, c0 + kChannelsPerTask); ++c) {
          const int64_t i = bi * Di + c;
          cpu::selective_backward(channel(xp, dtp, Bp, Cp, Ap, Dp, bi, c, Di, L, N), h0p + i * N, dyp + i * L,
                                  dhfp ? dhfp + i * N : nullptr, hist.data(), dxp + i * L, ddtp + i * L, dh0p + i * N,
                                  dBp + task * L * N, dCp + task * L * N, dAp + i * N, dDp[i]);
        }
      }
    });
    auto st = x.scalar_type();
    return {dx.transpose(1, 2).to(st),
            ddt.transpose(1, 2).to(dt.scalar_type()),
            dA_part.sum(0).to(A.scalar_type()),
            dB_part.sum(1).to(B.scalar_type()),
            dC_part.sum(1).to(C.scalar_type()),
            dD_part.sum(0).to(D.scalar_type()),
            has_h0 ? dh0.to(h0.scalar_type()) : torch::Tensor(),  // the empty stand-in takes no gradient
            torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

SelectiveScanResult selective_scan_cpu(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                                       const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& D,
                                       const torch::Tensor& h0, int64_t groups, bool want_norms) {
  check_selective_shapes(x, dt, A, B, C, D, h0, groups);
  if (!x.device().is_cpu()) throw Error("selective scan: the CPU loops were asked for tensors on " + x.device().str());
  // autograd nodes take no undefined inputs: an empty tensor stands for "no initial state"
  auto out = SelectiveScanFn::apply(x, dt, A, B, C, D, h0.defined() ? h0 : torch::empty({0}, x.options()), groups,
                                    want_norms);
  SelectiveScanResult r;
  r.y = out[0];
  r.final_state = out[1];
  if (want_norms) r.state_norm = out[2], r.delta_norm = out[3];
  return r;
}

}  // namespace statescope
