// mamba2/model.cpp — Mamba-2 forward (DESIGN.md §1), initialisation.
#include "core/model/mamba2/model.h"
#include "core/model/mamba2/arch.h"

#include <ATen/autocast_mode.h>

#include <optional>

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "core/base/error.h"
#include "core/model/mamba2/fused_infer.h"
#include "core/model/mamba2/cpu_mixer.h"
#include "core/model/mamba2/fused_scan.h"
#include "core/model/mamba2/ssd_scan.h"
#include "core/model/intervention.h"
#include "core/model/dense.h"

namespace statescope {
namespace {

namespace F = torch::nn::functional;

}  // namespace

Mamba2MixerImpl::Mamba2MixerImpl(const Mamba2Config& c) : cfg(c) {
  const int64_t H = c.nheads();
  in_proj = register_module("in_proj", ParamHolder(std::vector<int64_t>{c.in_proj_rows(), c.d_model},
                                                   c.proj_bias, c.in_proj_rows()));
  conv1d = register_module("conv1d", ParamHolder(std::vector<int64_t>{c.conv_dim(), 1, c.d_conv},
                                                 c.conv_bias, c.conv_dim()));
  dt_bias = register_parameter("dt_bias", torch::zeros({H}));
  A_log = register_parameter("A_log", torch::zeros({H}));
  D = register_parameter("D", torch::ones({H}));
  norm = register_module("norm", ParamHolder(std::vector<int64_t>{c.d_inner()}, false));
  out_proj = register_module("out_proj", ParamHolder(std::vector<int64_t>{c.d_model, c.d_inner()},
                                                     c.proj_bias, c.d_model));
}

namespace {

// The chunked-kernel path: fp32 state; CUDA kernels on a GPU (when built), the kernels' CPU twins on
// the CPU only when asked (tests), else ATen.
// On a GPU, asking for the kernels in a build without them is an error, never a quiet fall back to
// ATen (a run would be recorded as fused that never was).
bool fused_scan_usable(const torch::Tensor& x, torch::Dtype sdt, bool cpu_twins) {
  if (x.is_cuda()) require_kernels_for(x, "scan 'fused'");
  if (sdt != torch::kFloat32) return false;
  return x.is_cuda() || cpu_twins;
}

}  // namespace

torch::Tensor Mamba2MixerImpl::forward(const torch::Tensor& u, const LayerState* init,
                                       const ForwardOptions& opt, LayerState& fin,
                                       torch::Tensor* norm_per_head, torch::Tensor* delta_norm,
                                       torch::Tensor* log_decay) {
  const auto& c = cfg;
  const int64_t b = u.size(0), L = u.size(1);
  const int64_t H = c.nheads(), P = c.headdim, G = c.ngroups, N = c.d_state, Di = c.d_inner();
  const int64_t Cd = c.conv_dim();

  // 1. In-projection, split [z | xBC | dt].
  auto zxbcdt = dense(u, in_proj->weight, in_proj->bias);  // [b, L, in_proj_rows]
  auto z = zxbcdt.narrow(-1, 0, Di);                            // [b, L, d_inner]
  auto xBC = zxbcdt.narrow(-1, Di, Cd);                         // [b, L, conv_dim]
  auto dt_raw = zxbcdt.narrow(-1, Di + Cd, H);                  // [b, L, H]
  if (log_decay) {  // dt * A as step 4 computes it, whichever path runs the scan
    const auto st = at_least_f32(u.scalar_type());
    auto dt = F::softplus(dt_raw.detach().to(st) + dt_bias.detach().to(st));
    if (c.has_dt_limit()) dt = torch::clamp(dt, c.dt_limit_lo, c.dt_limit_hi);
    *log_decay = dt * -torch::exp(A_log.detach().to(st));        // [b, L, H]
  }

  // Inference kernels (conv1d with state, single-token step) for no-grad fp32 Fused forwards.
  const auto sdt = at_least_f32(u.scalar_type());
  // A training-free intervention on this layer (intervention.h): a changed dt or A runs ATen's scan
  // on the changed tensors (the loops and kernels read dt from the projection); clipping runs the
  // sequential recurrence, which can act after every token.
  const LayerIntervention* iv = opt.intervention ? opt.intervention->layer(opt.layer) : nullptr;
  const bool iv_inputs = Intervention::changes_inputs(iv), iv_clip = Intervention::clips(iv);
  const bool kernels_infer = opt.scan == ScanImpl::Fused && L > 0 && !torch::GradMode::is_enabled() &&
                             fused_scan_usable(u, sdt, opt.cpu_twins) && !iv_inputs && !iv_clip;
  // The CPU fast path (fp32): everything between the projections as one node of plain loops.
  const bool loops = opt.scan == ScanImpl::Fused && u.device().is_cpu() && !opt.cpu_twins && !iv_inputs && !iv_clip &&
                     zxbcdt.scalar_type() == torch::kFloat32 && conv1d->weight.scalar_type() == torch::kFloat32;
  if (loops) {
    CpuMixerDims md;
    md.H = H, md.P = P, md.G = G, md.N = N, md.norm_groups = c.norm_per_group ? G : 1, md.norm_eps = c.norm_eps;
    md.clamp_dt = c.has_dt_limit(), md.dt_lo = c.dt_limit_lo, md.dt_hi = c.dt_limit_hi;
    md.delta_norms = delta_norm != nullptr;
    auto conv0 = init && init->conv.defined() ? init->conv.to(torch::kFloat32) : torch::Tensor();
    auto h0 = init && init->ssm.defined() ? init->ssm.to(torch::kFloat32) : torch::Tensor();
    auto m = cpu_mixer_core(zxbcdt, conv1d->weight, conv1d->bias, dt_bias, A_log, D, norm->weight, conv0, h0, md,
                            norm_per_head != nullptr);
    fin.conv = m.conv;                                          // [b, conv_dim, K-1]
    fin.ssm = m.ssm;                                            // [b, H, P, N]
    if (norm_per_head) *norm_per_head = m.state_norm;           // [b, L, H]
    if (norm_per_head && delta_norm) *delta_norm = m.delta_norm.square().sum(-1).sqrt();  // [b, L]
    return dense(m.out, out_proj->weight, out_proj->bias);  // [b, L, d_model]
  }

  // 2. Causal depthwise conv from the initial conv state (zeros when none).
  torch::Tensor xbc;                                            // [b, L, conv_dim] after SiLU
  if (kernels_infer) {
    torch::Tensor conv1;
    xbc = fused_conv1d_silu(xBC, conv1d->weight, conv1d->bias, init ? init->conv : torch::Tensor(), conv1)
              .to(u.scalar_type());
    fin.conv = conv1.to(u.scalar_type());                       // [b, conv_dim, K-1]
  } else {
    xbc = conv_silu(xBC, init, fin.conv, u.scalar_type());
  }

  // 3-4. Split into x, B, C; dt and A.
  Mamba2ScanInputs in = split_scan_inputs(xbc, dt_raw, sdt);
  if (iv_inputs) {
    in.dt = intervene_dt(*iv, opt.intervention->dt_from, opt.position, in.dt);  // [b, L, H]
    in.A = in.A * iv->a_factor;                                                  // [H]
    if (log_decay) *log_decay = (in.dt * in.A).detach();                         // as the scan sees it
  }
  const auto &x = in.x, &Bm = in.B, &Cm = in.C, &dt = in.dt, &A = in.A;

  // 5. The scan.
  torch::Tensor h0 = (init && init->ssm.defined()) ? init->ssm.to(sdt) : torch::Tensor();
  const int64_t Q = opt.chunk_size > 0 ? opt.chunk_size : c.chunk_size;
  const bool norms = norm_per_head != nullptr;
  ScanResult s;
  const bool step = kernels_infer && L == 1;                    // decoding: the step kernel adds D x itself
  if (step)
    s = fused_step(x, dt, A, Bm, Cm, D, h0, norms);
  else if (opt.scan == ScanImpl::Fused && fused_scan_usable(x, sdt, opt.cpu_twins))
    s = fused_scan(x.to(sdt), dt, A, Bm.to(sdt), Cm.to(sdt), h0, Q, norms);
  else if (opt.scan == ScanImpl::Sequential || iv_clip)
    s = ssd_scan_sequential(x.to(sdt), dt, A, Bm.to(sdt), Cm.to(sdt), h0, norms, iv_clip ? iv->max_norm : torch::Tensor());
  else
    s = ssd_scan_chunked(x.to(sdt), dt, A, Bm.to(sdt), Cm.to(sdt), h0, Q, norms);
  fin.ssm = s.final_state;                                      // [b, H, P, N]
  if (norms) *norm_per_head = s.state_norm;                     // [b, L, H]
  if (norms && delta_norm) *delta_norm = s.delta_norm.square().sum(-1).sqrt();  // [b, L]
  auto y = step ? s.y : s.y + x.to(sdt) * D.to(sdt).view({1, 1, H, 1});  // [b, L, H, P]
  y = y.reshape({b, L, Di}).to(u.scalar_type());

  // 6. Gate, then RMSNorm (per group as mamba_ssm does, or over all of d_inner as HF does).
  const int64_t ng = c.norm_per_group ? G : 1;
  auto g = y * F::silu(z);                                      // [b, L, d_inner]
  auto gn = rms_norm(g.reshape({b, L, ng, Di / ng}), norm->weight.view({ng, Di / ng}), c.norm_eps).reshape({b, L, Di});
  return dense(gn, out_proj->weight, out_proj->bias);      // [b, L, d_model]
}

torch::Tensor Mamba2MixerImpl::conv_silu(const torch::Tensor& xBC, const LayerState* init, torch::Tensor& conv_final,
                                         torch::Dtype dtype) {
  const int64_t b = xBC.size(0), L = xBC.size(1), K = cfg.d_conv, Cd = cfg.conv_dim();
  auto conv0 = (init && init->conv.defined()) ? init->conv.to(dtype)
                                              : torch::zeros({b, Cd, K - 1}, xBC.options().dtype(dtype));
  auto conv_in = torch::cat({conv0, xBC.transpose(1, 2)}, 2);   // [b, conv_dim, K-1+L]
  conv_final = conv_in.narrow(2, L, K - 1);                     // [b, conv_dim, K-1] newest K-1 inputs
  auto conv_out = L == 0 ? torch::zeros({b, Cd, 0}, xBC.options().dtype(dtype))  // conv1d refuses an input shorter than K
                         : F::conv1d(conv_in, conv1d->weight,
                                     F::Conv1dFuncOptions().bias(conv1d->bias).groups(Cd));  // [b, conv_dim, L]
  return F::silu(conv_out).transpose(1, 2);                     // [b, L, conv_dim]
}

Mamba2ScanInputs Mamba2MixerImpl::split_scan_inputs(const torch::Tensor& xbc, const torch::Tensor& dt_raw,
                                                     torch::Dtype sdt) {
  const auto& c = cfg;
  const int64_t b = xbc.size(0), L = xbc.size(1), H = c.nheads(), P = c.headdim, G = c.ngroups, N = c.d_state,
                Di = c.d_inner();
  Mamba2ScanInputs in;
  // 3. Split; the SSM works in >= fp32.
  in.x = xbc.narrow(-1, 0, Di).reshape({b, L, H, P});           // [b, L, H, P]
  in.B = xbc.narrow(-1, Di, G * N).reshape({b, L, G, N});       // [b, L, G, N]
  in.C = xbc.narrow(-1, Di + G * N, G * N).reshape({b, L, G, N});
  // 4. dt = softplus(dt_raw + dt_bias), clamped to dt_limit after softplus when a limit is set
  // (clamp has zero gradient where it clamps). A = -exp(A_log).
  in.dt = F::softplus(dt_raw.to(sdt) + dt_bias.to(sdt));        // [b, L, H]
  if (c.has_dt_limit()) in.dt = torch::clamp(in.dt, c.dt_limit_lo, c.dt_limit_hi);
  in.A = -torch::exp(A_log.to(sdt));                            // [H]
  return in;
}

Mamba2ScanInputs Mamba2MixerImpl::scan_inputs(const torch::Tensor& u, const LayerState* init) {
  const int64_t Di = cfg.d_inner(), Cd = cfg.conv_dim(), H = cfg.nheads();
  auto zxbcdt = dense(u, in_proj->weight, in_proj->bias);   // [b, L, in_proj_rows]
  torch::Tensor conv_final;
  auto xbc = conv_silu(zxbcdt.narrow(-1, Di, Cd), init, conv_final, u.scalar_type());
  Mamba2ScanInputs in = split_scan_inputs(xbc, zxbcdt.narrow(-1, Di + Cd, H), at_least_f32(u.scalar_type()));
  const auto sdt = in.dt.scalar_type();
  in.x = in.x.to(sdt), in.B = in.B.to(sdt), in.C = in.C.to(sdt);
  return in;
}

Mamba2LMImpl::Mamba2LMImpl(const Mamba2Config& c)
    : ResidualLMOf(c, "Mamba2LM config", {"A_log", "dt_bias", ".D", ".bias"}) {
  build_layers(c, mixers_);
  reset_parameters(/*seed=*/0);
}

void Mamba2LMImpl::reset_parameters(uint64_t seed, double a_min, double a_max) {
  const auto& c = config();
  reset_layers(seed, 0.02, [&](Mamba2MixerImpl& m, at::Generator& gen) {
    m.norm->weight.fill_(1.0);
    init_normal(m.in_proj->weight, 0.02, gen);
    init_normal(m.out_proj->weight, 0.02 / std::sqrt(2.0 * c.n_layer), gen);
    init_mamba_conv_and_biases(m.in_proj, m.out_proj, m.conv1d, c.d_conv, gen);
    m.dt_bias.copy_(init_dt_bias(c.nheads(), c.dt_min, c.dt_max, c.dt_init_floor, gen));
    auto a = torch::empty({c.nheads()}, torch::kFloat64).uniform_(a_min, a_max, gen);
    m.A_log.copy_(torch::log(a));
    m.D.fill_(1.0);
  });
}

SelectiveScanTerms Mamba2LMImpl::scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) {
  const Mamba2ScanInputs in = mixer(layer)->scan_inputs(mixer_input, init);
  return {in.dt, in.A, in.B, in.C, /*per_channel_A=*/false, config().nheads() / config().ngroups};
}

RecurrentLM Arch<Mamba2Config>::make(const Mamba2Config& c) { return Mamba2LM(c); }

}  // namespace statescope
