// gla/model.cpp — the GLA mixer's forward (fla/layers/gla.py), the model and its initialisation.
#include "core/model/gla/model.h"
#include "core/model/gla/arch.h"

#include <torch/torch.h>

#include <cmath>

#include "core/base/error.h"
#include "core/model/gla/gla_scan.h"
#include "core/model/intervention.h"
#include "core/model/dense.h"

namespace statescope {
namespace {
namespace F = torch::nn::functional;
using Shape = std::vector<int64_t>;
// The chunked scan materialises a [b, C, C, H, K] decay per chunk, so its cost grows with C: chunks of
// 16 halve the scan's training time against 64 on the CPU (bench/bench_fla_scan.cpp, bench/RESULTS.md).
constexpr int64_t kDefaultChunk = 16;
}  // namespace

GLAMixerImpl::GLAMixerImpl(const GLAConfig& c) : cfg(c) {
  const int64_t D = c.d_model, K = c.key_dim(), V = c.value_dim(), Kg = c.key_dim_per_group(), Vg = c.value_dim_per_group();
  auto linear = [&](const char* name, int64_t out, int64_t in, bool bias = false) {
    return register_module(name, ParamHolder(Shape{out, in}, bias, out));
  };
  q_proj = linear("q_proj", K, D);
  k_proj = linear("k_proj", Kg, D);
  v_proj = linear("v_proj", Vg, D);
  if (c.use_output_gate) g_proj = linear("g_proj", V, D);
  if (c.use_short_conv) {
    q_conv = register_module("q_conv1d", ParamHolder(Shape{K, 1, c.conv_size}, false));
    k_conv = register_module("k_conv1d", ParamHolder(Shape{Kg, 1, c.conv_size}, false));
    v_conv = register_module("v_conv1d", ParamHolder(Shape{Vg, 1, c.conv_size}, false));
  }
  auto gk = register_module("gk_proj", std::make_shared<torch::nn::Module>());  // fla's nn.Sequential
  gk_down = gk->register_module("0", ParamHolder(Shape{GLAConfig::kGateLowRank, D}, false));
  gk_up = gk->register_module("1", ParamHolder(Shape{Kg, GLAConfig::kGateLowRank}, true, Kg));
  o_proj = linear("o_proj", D, V);
  // fla names the norm after whether it is fused with the swish gate; the numbers are the same.
  if (c.elementwise_affine)
    out_norm = register_module(c.fuse_norm && c.use_output_gate ? "g_norm_swish_gate" : "g_norm",
                               ParamHolder(Shape{c.head_v_dim()}, false));
}

torch::Tensor GLAMixerImpl::forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                                    LayerState& fin, torch::Tensor* norms, torch::Tensor* delta_norm,
                                    torch::Tensor* log_decay) {
  const auto& c = cfg;
  const int64_t b = u.size(0), L = u.size(1), H = c.num_heads, dk = c.head_k_dim(), dv = c.head_v_dim();
  const int64_t K = c.key_dim(), Kg = c.key_dim_per_group(), Vg = c.value_dim_per_group(), G = c.kv_groups();

  // 1. Projections, then (use_short_conv) the causal depthwise convolutions with SiLU on q, k and v,
  // run as one convolution over their concatenated channels from the initial conv state.
  auto q = dense(u, q_proj->weight);  // [b, L, K]
  auto k = dense(u, k_proj->weight);  // [b, L, Kg]
  auto v = dense(u, v_proj->weight);  // [b, L, Vg]
  if (c.use_short_conv) {
    auto y = short_conv_silu(torch::cat({q, k, v}, -1), torch::cat({q_conv->weight, k_conv->weight, v_conv->weight}, 0),
                             init ? init->conv : torch::Tensor(), fin.conv);  // [b, L, K+Kg+Vg]; conv [b, C, W-1]
    q = y.narrow(-1, 0, K), k = y.narrow(-1, K, Kg), v = y.narrow(-1, K + Kg, Vg);
  }

  // 2. Heads (a key/value head serves num_kv_groups consecutive query heads), the log gate
  // logsigmoid(gk) / 16 (floored at clamp_min), q scaled by head_k_dim^-1/2; all in >= fp32.
  const auto sdt = at_least_f32(u.scalar_type());
  auto heads = [&](const torch::Tensor& t, int64_t d) {  // [b, L, (H/G) d] -> [b, L, H, d]
    auto r = t.reshape({b, L, t.size(-1) / d, d});
    return (r.size(2) < H ? r.repeat_interleave(G, 2) : r).to(sdt);
  };
  auto gk = dense(dense(u, gk_down->weight), gk_up->weight, gk_up->bias);  // [b, L, Kg]
  auto g = F::logsigmoid(heads(gk, dk)) / GLAConfig::kGateLogitNormalizer;       // [b, L, H, dk]
  if (c.has_clamp_min) g = g.clamp_min(c.clamp_min);
  auto qh = heads(q, dk) * (1.0 / std::sqrt(static_cast<double>(dk)));           // [b, L, H, dk]
  auto kh = heads(k, dk), vh = heads(v, dv);                                       // [b, L, H, dk|dv]

  // A training-free intervention on this layer: a_scale multiplies the log gate (as it multiplies
  // Mamba's A); clip bounds each head's state norm after every token (the sequential recurrence).
  const LayerIntervention* iv = opt.intervention ? opt.intervention->layer(opt.layer) : nullptr;
  if (iv && (iv->dt_factor.defined() || iv->dt_threshold.defined()))
    throw Error("intervention '" + opt.intervention->label + "': GLA has no dt (its decay is the data-dependent gate); "
                "dt_scale and longmamba apply to Mamba-1 and Mamba-2 only");
  if (iv && iv->a_factor != 1.0) g = g * iv->a_factor;
  if (log_decay) *log_decay = g.detach().mean(-1);  // [b, L, H]

  // 3. The recurrence S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T, o_t = S_t^T q_t.
  torch::Tensor h0 = (init && init->ssm.defined()) ? init->ssm.to(sdt) : torch::Tensor();
  const bool clip = Intervention::clips(iv), want = norms != nullptr;
  auto s = (opt.scan == ScanImpl::Sequential || clip)
               ? gla_scan_sequential(qh, kh, vh, g, h0, want, clip ? iv->max_norm : torch::Tensor())
               : gla_scan_chunked(qh, kh, vh, g, h0, opt.chunk_size > 0 ? opt.chunk_size : kDefaultChunk, want);
  fin.ssm = s.final_state;                      // [b, H, dk, dv]
  if (want) *norms = s.norms;                   // [b, L, H]
  if (want && delta_norm) *delta_norm = s.delta_norms;  // [b, L]

  // 4. RMSNorm per head, the swish output gate, the out-projection.
  auto o = rms_norm(s.o, out_norm ? out_norm->weight : torch::Tensor(), c.norm_eps);  // [b, L, H, dv]
  o = o.reshape({b, L, H * dv}).to(u.scalar_type());
  if (c.use_output_gate) o = o * F::silu(dense(u, g_proj->weight));               // [b, L, V]
  return dense(o, o_proj->weight);                                                 // [b, L, d_model]
}

GLALMImpl::GLALMImpl(const GLAConfig& c)
    : ResidualLMOf(c, "GLA config", {".bias"}) {
  build(fla_shape(c.vocab_size, c.d_model, c.n_layer, c.tie_embeddings, c.norm_eps, c.mlp_size()), [&](int64_t) {
    mixers_.push_back(GLAMixer(c));
    return mixers_.back().ptr();
  });
  reset_parameters(/*seed=*/0);
}

void GLALMImpl::reset_parameters(uint64_t seed, double a_min, double a_max) {
  if (a_min != 1.0 || a_max != 16.0)
    throw Error("the A range (--a-min/--a-max, " + std::to_string(a_min) + " to " + std::to_string(a_max) +
                ") is a Mamba-2 option; GLA has no A (its decay is a data-dependent gate)");
  const double std = config().initializer_range;
  reset_layers(seed, std, [&](GLAMixerImpl& m, at::Generator& gen) {
    for (auto* p : {&m.q_proj, &m.k_proj, &m.v_proj, &m.g_proj, &m.o_proj, &m.gk_down, &m.gk_up, &m.q_conv,
                    &m.k_conv, &m.v_conv})
      if (*p) init_normal((*p)->weight, std, gen);
    m.gk_up->bias.zero_();
    if (m.out_norm) m.out_norm->weight.fill_(1.0);
  });
}

RecurrentLM Arch<GLAConfig>::make(const GLAConfig& c) { return GLALM(c); }

}  // namespace statescope
