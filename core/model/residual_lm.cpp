// residual_lm.cpp — the shared backbone's modules and forward pass.
#include "core/model/residual_lm.h"

#include <torch/torch.h>


#include "core/base/error.h"
#include "core/model/intervention.h"
#include "core/model/dense.h"
#include "core/model/forward_pieces.h"

namespace statescope {
namespace {

namespace F = torch::nn::functional;

// One residual block's modules, named as the checkpoints name them.
class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const std::string& norm_name, ParamHolder n, const std::string& mixer_name, std::shared_ptr<torch::nn::Module> m) {
    register_module(norm_name, std::move(n));
    register_module(mixer_name, std::move(m));
  }
};

}  // namespace

ResidualLMImpl::ResidualLMImpl(ModelConfig c, const std::string& what) : mc_(std::move(c)) {
  validate(mc_, what);
  set_layout(statescope::state_layout(mc_));
}

void ResidualLMImpl::build(const Shape& s, const std::function<std::shared_ptr<torch::nn::Module>(int64_t)>& make_mixer) {
  shape_ = s;
  auto backbone = register_module(s.root, std::make_shared<torch::nn::Module>());
  embeddings_ = backbone->register_module("embeddings", ParamHolder(std::vector<int64_t>{s.vocab_size, s.d_model}, false));
  auto list = backbone->register_module("layers", torch::nn::ModuleList());
  auto holder = [](std::vector<int64_t> shape) { return ParamHolder(std::move(shape), false); };
  for (int64_t i = 0; i < s.n_layer; ++i) {
    block_norms_.push_back(holder({s.d_model}));
    auto block = std::make_shared<BlockImpl>(s.block_norm, block_norms_.back(), s.mixer, make_mixer(i));
    if (s.mlp_size > 0) {  // fla's GatedMLP: down(silu(gate(x)) * up(x))
      Mlp m{holder({s.d_model}), holder({s.mlp_size, s.d_model}), holder({s.mlp_size, s.d_model}),
            holder({s.d_model, s.mlp_size})};
      block->register_module("mlp_norm", m.norm);
      auto mlp = block->register_module("mlp", std::make_shared<torch::nn::Module>());
      mlp->register_module("gate_proj", m.gate);
      mlp->register_module("up_proj", m.up);
      mlp->register_module("down_proj", m.down);
      mlps_.push_back(m);
    }
    list->push_back(block);
  }
  norm_f_ = backbone->register_module(s.final_norm, ParamHolder(std::vector<int64_t>{s.d_model}, false));
  if (!s.tie_embeddings)
    lm_head_ = register_module("lm_head", ParamHolder(std::vector<int64_t>{s.vocab_size, s.d_model}, false));
}

void ResidualLMImpl::init_normal(torch::Tensor& t, double std, at::Generator& gen) {
  t.copy_(at::normal(0.0, std, t.sizes(), gen, torch::TensorOptions().dtype(t.scalar_type())));
}

void ResidualLMImpl::init_uniform(torch::Tensor& t, double lo, double hi, at::Generator& gen) {
  t.copy_(torch::empty(t.sizes(), t.options().device(torch::kCPU)).uniform_(lo, hi, gen));
}

void ResidualLMImpl::init_mamba_conv_and_biases(ParamHolder& in_proj, ParamHolder& out_proj, ParamHolder& conv1d,
                                                int64_t d_conv, at::Generator& gen) {
  for (auto* p : {&in_proj, &out_proj})
    if ((*p)->bias.defined()) (*p)->bias.zero_();
  const double bound = 1.0 / std::sqrt(static_cast<double>(d_conv));
  init_uniform(conv1d->weight, -bound, bound, gen);
  if (conv1d->bias.defined()) init_uniform(conv1d->bias, -bound, bound, gen);
}

torch::Tensor ResidualLMImpl::init_dt_bias(int64_t n, double dt_min, double dt_max, double floor, at::Generator& gen) {
  auto u = torch::empty({n}, torch::kFloat64).uniform_(0.0, 1.0, gen);
  auto dt = torch::exp(u * (std::log(dt_max) - std::log(dt_min)) + std::log(dt_min)).clamp_min(floor);
  return dt + torch::log(-torch::expm1(-dt));
}

std::vector<std::string> ResidualLMImpl::norms_and_names_ending(const std::vector<std::string>& endings) const {
  std::vector<std::string> out;
  for (const auto& p : named_parameters()) {
    const auto& k = p.key();
    bool hit = k.find("norm") != std::string::npos;
    for (const auto& e : endings) hit = hit || (k.size() >= e.size() && k.compare(k.size() - e.size(), e.size(), e) == 0);
    if (hit) out.push_back(k);
  }
  return out;
}

void ResidualLMImpl::reset_backbone(at::Generator& gen, double std) {
  init_normal(embeddings_->weight, std, gen);
  if (lm_head_) init_normal(lm_head_->weight, std, gen);
  norm_f_->weight.fill_(1.0);
  for (auto& n : block_norms_) n->weight.fill_(1.0);
  for (auto& m : mlps_) {
    m.norm->weight.fill_(1.0);
    for (auto* p : {&m.gate, &m.up, &m.down}) init_normal((*p)->weight, std, gen);
  }
}

ForwardOutput ResidualLMImpl::forward(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) {
  return forward_in_pieces(
      tokens, init, opt, [this](const torch::Tensor& t, const ModelState* s, const ForwardOptions& o) { return forward_span(t, s, o); },
      [](const ModelState&) { return ModelState(); });
}

ForwardOutput ResidualLMImpl::forward_span(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) {
  check_tokens(tokens, "forward");
  const int64_t b = tokens.size(0), NL = shape_.n_layer;
  if (init) check_state(*init, b, "forward initial state");
  ForwardOutput out;
  out.final_state.resize(NL);
  std::vector<torch::Tensor> norms(opt.state_norms ? NL : 0), deltas(norms.size()), decays(opt.log_decay ? NL : 0);

  const auto& emb = embeddings_->weight;
  ForwardPrecision precision(mixed_bf16, emb.device());
  auto h = F::embedding(tokens.to(emb.device(), torch::kInt64), emb);      // [b, L, d_model]
  if (shape_.residual_in_fp32) h = h.to(at_least_f32(h.scalar_type()));
  for (int64_t i = 0; i < NL; ++i) {
    auto u = rms_norm(h, block_norms_[i]->weight, shape_.norm_eps).to(emb.scalar_type());
    const LayerState* li = init ? &(*init)[i] : nullptr;
    if (opt.mixer_inputs) out.mixer_inputs.push_back(u.detach());
    ForwardOptions lo = opt;
    lo.layer = i;
    h = h + mix(i, u, li, lo, out.final_state[i], opt.state_norms ? &norms[i] : nullptr,
                opt.state_norms && opt.delta_norms ? &deltas[i] : nullptr, opt.log_decay ? &decays[i] : nullptr);
    if (!mlps_.empty()) {  // fla: h + down(silu(gate(x)) * up(x)), x = RMSNorm(h)
      const auto& m = mlps_[i];
      auto x = rms_norm(h, m.norm->weight, shape_.norm_eps).to(emb.scalar_type());  // [b, L, d_model]
      h = h + dense(F::silu(dense(x, m.gate->weight)) * dense(x, m.up->weight), m.down->weight);
    }
  }
  if (opt.logits_from > 0) h = h.narrow(1, opt.logits_from, h.size(1) - opt.logits_from);  // [b, L - from, d_model]
  auto hf = rms_norm(h, norm_f_->weight, shape_.norm_eps).to(emb.scalar_type());
  out.logits = precision.logits(dense(hf, output_weight()));             // [b, L, vocab]
  if (opt.state_norms) {
    out.norm_per_head = torch::stack(norms, 0);                             // [n_layer, b, L, groups]
    out.norm = out.norm_per_head.square().sum(-1).sqrt();                  // [n_layer, b, L]
    if (opt.delta_norms) out.delta_norm = torch::stack(deltas, 0);         // [n_layer, b, L]
  }
  if (opt.log_decay) out.log_decay = torch::stack(decays, 0);              // [n_layer, b, L, groups]
  return out;
}

}  // namespace statescope
