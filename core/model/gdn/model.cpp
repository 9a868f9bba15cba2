// gdn/model.cpp — the Gated DeltaNet mixer's forward (fla/layers/gated_deltanet.py), the model and
// its initialisation.
#include "core/model/gdn/model.h"
#include "core/model/gdn/arch.h"

#include <torch/torch.h>

#include <cmath>

#include "core/base/error.h"
#include "core/model/gdn/delta_scan.h"
#include "core/model/intervention.h"
#include "core/model/dense.h"

namespace statescope {
namespace {
namespace F = torch::nn::functional;
using Shape = std::vector<int64_t>;

// x / sqrt(sum(x^2) + eps) over the last dim: fla's l2norm (eps inside the root, not F.normalize).
torch::Tensor l2norm(const torch::Tensor& x) {
  return x * torch::rsqrt(x.square().sum(-1, true) + GatedDeltaNetConfig::kL2NormEps);
}
}  // namespace

GatedDeltaNetMixerImpl::GatedDeltaNetMixerImpl(const GatedDeltaNetConfig& c) : cfg(c) {
  const int64_t D = c.d_model, K = c.key_dim(), V = c.value_dim(), HV = c.v_heads();
  auto linear = [&](const char* name, int64_t out, int64_t in) {
    return register_module(name, ParamHolder(Shape{out, in}, false));
  };
  A_log = register_parameter("A_log", torch::zeros({HV}));
  dt_bias = register_parameter("dt_bias", torch::zeros({HV}));
  q_proj = linear("q_proj", K, D);
  k_proj = linear("k_proj", K, D);
  v_proj = linear("v_proj", V, D);
  a_proj = linear("a_proj", HV, D);
  b_proj = linear("b_proj", HV, D);
  if (c.use_short_conv) {
    q_conv = register_module("q_conv1d", ParamHolder(Shape{K, 1, c.conv_size}, false));
    k_conv = register_module("k_conv1d", ParamHolder(Shape{K, 1, c.conv_size}, false));
    v_conv = register_module("v_conv1d", ParamHolder(Shape{V, 1, c.conv_size}, false));
  }
  if (c.use_gate) g_proj = linear("g_proj", V, D);
  o_norm = register_module("o_norm", ParamHolder(Shape{c.head_v_dim()}, false));
  o_proj = linear("o_proj", D, V);
}

torch::Tensor GatedDeltaNetMixerImpl::forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                                              LayerState& fin, torch::Tensor* norms, torch::Tensor* delta_norm,
                                              torch::Tensor* log_decay) {
  const auto& c = cfg;
  const int64_t b = u.size(0), L = u.size(1), H = c.num_heads, HV = c.v_heads(), dk = c.head_dim, dv = c.head_v_dim();
  const int64_t K = c.key_dim(), V = c.value_dim();

  // 1. Projections, then the causal depthwise convolutions with SiLU on q, k and v (one convolution
  // over their concatenated channels from the initial conv state), or SiLU alone without them.
  auto q = dense(u, q_proj->weight);  // [b, L, K]
  auto k = dense(u, k_proj->weight);  // [b, L, K]
  auto v = dense(u, v_proj->weight);  // [b, L, V]
  if (c.use_short_conv) {
    auto y = short_conv_silu(torch::cat({q, k, v}, -1), torch::cat({q_conv->weight, k_conv->weight, v_conv->weight}, 0),
                             init ? init->conv : torch::Tensor(), fin.conv);  // [b, L, 2K+V]; conv [b, C, W-1]
    q = y.narrow(-1, 0, K), k = y.narrow(-1, K, K), v = y.narrow(-1, 2 * K, V);
  } else {
    q = F::silu(q), k = F::silu(k), v = F::silu(v);
  }

  // 2. Heads (value head hv reads q/k head hv / (HV/H)), q and k L2-normalised per head, q scaled by
  // head_dim^-1/2; beta = sigmoid(b) (x2 with allow_neg_eigval); the log decay
  // g = -exp(A_log) softplus(a + dt_bias) per value head. All in >= fp32.
  const auto sdt = at_least_f32(u.scalar_type());
  auto qk_heads = [&](const torch::Tensor& t) {  // [b, L, K] -> [b, L, HV, dk]
    auto r = l2norm(t.reshape({b, L, H, dk}).to(sdt));
    return HV > H ? r.repeat_interleave(HV / H, 2) : r;
  };
  auto qh = qk_heads(q) * (1.0 / std::sqrt(static_cast<double>(dk)));  // [b, L, HV, dk]
  auto kh = qk_heads(k);                                               // [b, L, HV, dk]
  auto vh = v.reshape({b, L, HV, dv}).to(sdt);                         // [b, L, HV, dv]
  auto beta = torch::sigmoid(dense(u, b_proj->weight).to(sdt));    // [b, L, HV]
  if (c.allow_neg_eigval) beta = beta * 2.0;
  auto dt = F::softplus(dense(u, a_proj->weight).to(sdt) + dt_bias.to(sdt));  // [b, L, HV] (Mamba's dt)

  // A training-free intervention on this layer: dt_scale multiplies the softplus term (GDN's dt),
  // a_scale multiplies A; clip bounds each head's state norm after every token (the sequential form).
  const LayerIntervention* iv = opt.intervention ? opt.intervention->layer(opt.layer) : nullptr;
  if (iv && iv->dt_threshold.defined())
    throw Error("intervention '" + opt.intervention->label + "': longmamba is written for Mamba-1 and Mamba-2 (this model is Gated DeltaNet)");
  if (iv && iv->dt_factor.defined()) dt = intervene_dt(*iv, opt.intervention->dt_from, opt.position, dt);
  auto A = -torch::exp(A_log.to(sdt));
  if (iv && iv->a_factor != 1.0) A = A * iv->a_factor;
  auto g = dt * A;                                                       // [b, L, HV] log decay <= 0
  if (log_decay) *log_decay = g.detach();

  // 3. The delta rule S_t = exp(g_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T, o_t = S_t^T q_t.
  torch::Tensor h0 = (init && init->ssm.defined()) ? init->ssm.to(sdt) : torch::Tensor();
  const bool clip = Intervention::clips(iv), want = norms != nullptr;
  auto s = (opt.scan == ScanImpl::Sequential || clip)
               ? delta_scan_sequential(qh, kh, vh, g, beta, h0, want, clip ? iv->max_norm : torch::Tensor())
               : delta_scan_chunked(qh, kh, vh, g, beta, h0, opt.chunk_size > 0 ? opt.chunk_size : 64, want);
  fin.ssm = s.final_state;                              // [b, HV, dk, dv]
  if (want) *norms = s.norms;                           // [b, L, HV]
  if (want && delta_norm) *delta_norm = s.delta_norms;  // [b, L]

  // 4. RMSNorm per head (one weight for all heads) times the output gate, the out-projection.
  auto o = rms_norm(s.o, o_norm->weight, c.norm_eps);  // [b, L, HV, dv]
  if (c.use_gate) {
    auto gate = dense(u, g_proj->weight).reshape({b, L, HV, dv}).to(sdt);
    o = o * (c.sigmoid_gate ? torch::sigmoid(gate) : F::silu(gate));
  }
  return dense(o.reshape({b, L, V}).to(u.scalar_type()), o_proj->weight);  // [b, L, d_model]
}

GatedDeltaNetLMImpl::GatedDeltaNetLMImpl(const GatedDeltaNetConfig& c)
    : ResidualLMOf(c, "Gated DeltaNet config", {"A_log", "dt_bias", ".bias"}) {
  build(fla_shape(c.vocab_size, c.d_model, c.n_layer, c.tie_embeddings, c.norm_eps, c.mlp_size()), [&](int64_t) {
    mixers_.push_back(GatedDeltaNetMixer(c));
    return mixers_.back().ptr();
  });
  reset_parameters(/*seed=*/0);
}

void GatedDeltaNetLMImpl::reset_parameters(uint64_t seed, double a_min, double a_max) {
  if (!(a_min > 0) || !(a_max >= a_min))
    throw Error("the A range must satisfy 0 < a_min <= a_max, got " + std::to_string(a_min) + " to " + std::to_string(a_max));
  const double std = config().initializer_range;
  reset_layers(seed, std, [&](GatedDeltaNetMixerImpl& m, at::Generator& gen) {
    for (auto* p : {&m.q_proj, &m.k_proj, &m.v_proj, &m.a_proj, &m.b_proj, &m.g_proj, &m.o_proj, &m.q_conv, &m.k_conv,
                    &m.v_conv})
      if (*p) init_normal((*p)->weight, std, gen);
    m.o_norm->weight.fill_(1.0);
    const int64_t HV = m.cfg.v_heads();
    auto a = torch::empty({HV}, torch::kFloat64).uniform_(a_min, a_max, gen);
    m.A_log.copy_(torch::log(a));
    m.dt_bias.copy_(init_dt_bias(HV, 1e-3, 0.1, 1e-4, gen));  // fla's layer init: dt in [1e-3, 0.1], floor 1e-4
  });
}

RecurrentLM Arch<GatedDeltaNetConfig>::make(const GatedDeltaNetConfig& c) { return GatedDeltaNetLM(c); }

}  // namespace statescope
