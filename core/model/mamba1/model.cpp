// mamba1/model.cpp — Mamba-1 forward (DESIGN.md §1b), initialisation.
#include "core/model/mamba1/model.h"
#include "core/model/mamba1/arch.h"

#include <torch/torch.h>

#include <cmath>
#include <optional>

#include "core/base/error.h"
#include "core/model/mamba1/selective_scan.h"
#include "core/model/intervention.h"
#include "core/model/dense.h"

namespace statescope {
namespace {
namespace F = torch::nn::functional;
}  // namespace

Mamba1MixerImpl::Mamba1MixerImpl(const Mamba1Config& c) : cfg(c) {
  const int64_t Di = c.d_inner(), R = c.rank(), N = c.d_state;
  in_proj = register_module("in_proj", ParamHolder(std::vector<int64_t>{2 * Di, c.d_model}, c.proj_bias, 2 * Di));
  conv1d = register_module("conv1d", ParamHolder(std::vector<int64_t>{Di, 1, c.d_conv}, c.conv_bias, Di));
  x_proj = register_module("x_proj", ParamHolder(std::vector<int64_t>{R + 2 * N, Di}, false));
  dt_proj = register_module("dt_proj", ParamHolder(std::vector<int64_t>{Di, R}, true, Di));
  A_log = register_parameter("A_log", torch::zeros({Di, N}));
  D = register_parameter("D", torch::ones({Di}));
  out_proj = register_module("out_proj", ParamHolder(std::vector<int64_t>{c.d_model, Di}, c.proj_bias, c.d_model));
}

torch::Tensor Mamba1MixerImpl::forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                                       LayerState& fin, torch::Tensor* norm_per_group, torch::Tensor* delta_norm,
                                       torch::Tensor* log_decay) {
  const int64_t b = u.size(0), L = u.size(1), Di = cfg.d_inner(), groups = channel_groups(Di);

  // 1-3. In-projection, conv, dt, B, C, A (scan_inputs).
  torch::Tensor z;
  Mamba1ScanInputs in = scan_inputs(u, init, &z, &fin.conv);
  // A training-free intervention on this layer (intervention.h): dt per channel, A, the clip.
  const LayerIntervention* iv = opt.intervention ? opt.intervention->layer(opt.layer) : nullptr;
  const bool iv_clip = Intervention::clips(iv);
  if (Intervention::changes_inputs(iv)) {
    in.dt = intervene_dt(*iv, opt.intervention->dt_from, opt.position, in.dt);  // [b, L, d_inner]
    in.A = in.A * iv->a_factor;                                                  // [d_inner, N]
  }
  const auto &xc = in.x, &Bm = in.B, &Cm = in.C, &dt = in.dt, &A = in.A;
  const auto sdt = dt.scalar_type();
  if (log_decay)  // dt_t * A averaged over d_state, then over the group's channels: [b, L, groups]
    *log_decay = (dt.detach() * A.detach().mean(1)).view({b, L, groups, Di / groups}).mean(-1);

  // 4. The scan: the CPU loops for the fast path in float32 on the CPU, else the recurrence in ATen.
  torch::Tensor h0 = (init && init->ssm.defined()) ? init->ssm.to(sdt) : torch::Tensor();
  const bool norms = norm_per_group != nullptr;
  // Clipping needs each group's norm after every token: the ATen recurrence.
  const bool loops = opt.scan == ScanImpl::Fused && u.device().is_cpu() && sdt == torch::kFloat32 && !iv_clip;
  auto s = loops ? selective_scan_cpu(xc, dt, A, Bm, Cm, D.to(sdt), h0, groups, norms)
                 : selective_scan_sequential(xc, dt, A, Bm, Cm, D.to(sdt), h0, groups, norms,
                                             iv_clip ? iv->max_norm : torch::Tensor());
  fin.ssm = s.final_state;                                        // [b, d_inner, N]
  if (norms) *norm_per_group = s.state_norm;                      // [b, L, groups]
  if (norms && delta_norm) *delta_norm = s.delta_norm.square().sum(-1).sqrt();  // [b, L]

  // 5. Gate, out-projection.
  auto y = s.y.to(u.scalar_type()) * F::silu(z);                  // [b, L, d_inner]
  return dense(y, out_proj->weight, out_proj->bias);         // [b, L, d_model]
}

Mamba1ScanInputs Mamba1MixerImpl::scan_inputs(const torch::Tensor& u, const LayerState* init, torch::Tensor* z,
                                               torch::Tensor* conv_final) {
  const auto& c = cfg;
  const int64_t b = u.size(0), L = u.size(1), Di = c.d_inner(), N = c.d_state, R = c.rank(), K = c.d_conv;

  // 1. In-projection, split [x | z].
  auto xz = dense(u, in_proj->weight, in_proj->bias);        // [b, L, 2 d_inner]
  auto x = xz.narrow(-1, 0, Di);                                  // [b, L, d_inner]
  if (z) *z = xz.narrow(-1, Di, Di);                              // [b, L, d_inner]

  // 2. Causal depthwise conv from the initial conv state (zeros when none), then SiLU.
  auto conv0 = (init && init->conv.defined()) ? init->conv.to(u.scalar_type()) : torch::zeros({b, Di, K - 1}, u.options());
  auto conv_in = torch::cat({conv0, x.transpose(1, 2)}, 2);      // [b, d_inner, K-1+L]
  if (conv_final) *conv_final = conv_in.narrow(2, L, K - 1);      // [b, d_inner, K-1] newest K-1 inputs
  auto conv_out = L == 0 ? torch::zeros({b, Di, 0}, u.options())
                         : F::conv1d(conv_in, conv1d->weight, F::Conv1dFuncOptions().bias(conv1d->bias).groups(Di));
  auto xc = F::silu(conv_out).transpose(1, 2);                    // [b, L, d_inner]

  // 3. Data-dependent dt, B, C; dt = softplus(dt_proj(dt_r) + bias) in >= fp32 (as transformers: the
  // bias is added in float32). A = -exp(A_log).
  const auto sdt = at_least_f32(u.scalar_type());
  auto xdbl = dense(xc, x_proj->weight);                      // [b, L, R + 2N]
  auto dt_r = xdbl.narrow(-1, 0, R);                              // [b, L, R]
  Mamba1ScanInputs in;
  in.x = xc.to(sdt);
  in.B = xdbl.narrow(-1, R, N).to(sdt);                           // [b, L, N]
  in.C = xdbl.narrow(-1, R + N, N).to(sdt);                       // [b, L, N]
  in.dt = F::softplus(dense(dt_r, dt_proj->weight).to(sdt) + dt_proj->bias.to(sdt));  // [b, L, d_inner]
  in.A = -torch::exp(A_log.to(sdt));                              // [d_inner, N]
  return in;
}

Mamba1LMImpl::Mamba1LMImpl(const Mamba1Config& c)
    : ResidualLMOf(c, "Mamba1LM config", {"A_log", ".D", ".bias"}) {  // mamba_ssm: A_log, D _no_weight_decay
  build_layers(c, mixers_);
  reset_parameters(/*seed=*/0);
}

void Mamba1LMImpl::reset_parameters(uint64_t seed, double a_min, double a_max) {
  if (a_min != 1.0 || a_max != 16.0)
    throw Error("the A range (--a-min/--a-max, " + std::to_string(a_min) + " to " + std::to_string(a_max) +
                ") is a Mamba-2 option; Mamba-1 initialises A as 1..d_state in every channel (S4D-real)");
  const auto& c = config();
  const int64_t Di = c.d_inner(), N = c.d_state;
  reset_layers(seed, 0.02, [&](Mamba1MixerImpl& m, at::Generator& gen) {
    init_normal(m.in_proj->weight, 0.02, gen);
    init_normal(m.x_proj->weight, 0.02, gen);
    init_normal(m.out_proj->weight, 0.02 / std::sqrt(2.0 * c.n_layer), gen);
    init_mamba_conv_and_biases(m.in_proj, m.out_proj, m.conv1d, c.d_conv, gen);
    const double dt_std = c.dt_scale / std::sqrt(static_cast<double>(c.rank()));
    init_uniform(m.dt_proj->weight, -dt_std, dt_std, gen);
    m.dt_proj->bias.copy_(init_dt_bias(Di, c.dt_min, c.dt_max, c.dt_init_floor, gen));
    m.A_log.copy_(torch::log(torch::arange(1, N + 1, torch::kFloat64)).expand({Di, N}));
    m.D.fill_(1.0);
  });
}

SelectiveScanTerms Mamba1LMImpl::scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) {
  const Mamba1ScanInputs in = mixer(layer)->scan_inputs(mixer_input, init);
  return {in.dt, in.A, in.B, in.C, /*per_channel_A=*/true, 1};
}

RecurrentLM Arch<Mamba1Config>::make(const Mamba1Config& c) { return Mamba1LM(c); }

}  // namespace statescope
