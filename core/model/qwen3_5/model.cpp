// qwen3_5/model.cpp — the Qwen3.5 stack and its checkpoint names (model.h).
#include "core/model/qwen3_5/model.h"

#include <torch/torch.h>

#include <array>
#include <map>

#include "core/base/error.h"
#include "core/model/dense.h"

namespace statescope {

namespace {
// transformers' zero-centred RMSNorm: x / rms(x) * (1 + w).
torch::Tensor norm1p(const torch::Tensor& x, const ParamHolder& n, double eps) { return rms_norm(x, 1.0 + n->weight, eps); }
}  // namespace

Qwen35LMImpl::Qwen35LMImpl(const Qwen35Config& c)
    : HybridLMImpl(c, "Qwen3.5 config", c.layers), cfg(c), gdn(gdn_layers(c)) {
  const int64_t H = c.d_model;
  AttentionConfig ac;
  ac.hidden = H, ac.heads = c.heads, ac.kv_heads = c.kv_heads, ac.head_dim = c.head_dim, ac.bias = c.attention_bias;
  ac.output_gate = true, ac.qk_norm = true, ac.norm_eps = c.norm_eps, ac.rope_theta = c.rope_theta;
  ac.partial_rotary = c.partial_rotary;
  ac.validate("Qwen3.5 config");
  using Shape = std::vector<int64_t>;
  auto model = register_module("model", std::make_shared<torch::nn::Module>());
  embed = model->register_module("embed_tokens", ParamHolder(Shape{c.vocab_size, H}, false));
  auto layers = model->register_module("layers", std::make_shared<torch::nn::Module>());
  for (size_t i = 0; i < c.layers.size(); ++i) {
    auto layer = layers->register_module(std::to_string(i), std::make_shared<torch::nn::Module>());
    input_norms.push_back(layer->register_module("input_layernorm", ParamHolder(Shape{H}, false)));
    if (c.layers[i] == LayerKind::GatedDeltaNet)
      mixers.emplace_back(layer->register_module("linear_attn", GatedDeltaNetMixer(gdn)));
    else
      mixers.emplace_back(layer->register_module("self_attn", Attention(ac)));
    post_norms.push_back(layer->register_module("post_attention_layernorm", ParamHolder(Shape{H}, false)));
    mlps.push_back(layer->register_module("mlp", Mlp(MlpConfig{MlpConfig::Kind::SwiGLU, H, c.intermediate})));
  }
  final_norm = model->register_module("norm", ParamHolder(Shape{H}, false));
  if (!c.tie_embeddings) lm_head = register_module("lm_head", ParamHolder(Shape{c.vocab_size, H}, false));
}

// A layer: h + mixer(RMSNorm1(h)), then h + MLP(RMSNorm2(h)).
torch::Tensor Qwen35LMImpl::layer(int64_t i, const torch::Tensor& h0, LayerIO& io) {
  auto x = norm1p(h0, input_norms[i], cfg.norm_eps);  // [b, L, H]
  if (io.mixer_input) *io.mixer_input = x.detach();
  torch::Tensor h;
  if (auto* g = std::get_if<GatedDeltaNetMixer>(&mixers[i]))
    h = h0 + (*g)->forward(x, io.init, io.opt, *io.final, io.norms, io.deltas, io.decay);
  else
    h = h0 + std::get<Attention>(mixers[i])->forward(x, io.cache, io.window, io.probe);
  return h + mlps[i]->forward(norm1p(h, post_norms[i], cfg.norm_eps));
}

torch::Tensor Qwen35LMImpl::final_normed(const torch::Tensor& h) const { return norm1p(h, final_norm, cfg.norm_eps); }

StateDict Qwen35LMImpl::from_checkpoint(StateDict sd, const std::string& source) const { return qwen3_5_weights(sd, cfg, source); }
StateDict Qwen35LMImpl::to_checkpoint(StateDict sd) const { return qwen3_5_checkpoint(sd); }

RecurrentLM Arch<Qwen35Config>::make(const Qwen35Config& c) {
  Qwen35LM m(c);
  m->reset_parameters(0);
  return m;
}

StateDict qwen3_5_weights(const StateDict& disk, const Qwen35Config& c, const std::string& source) {
  const int64_t K = c.key_heads * c.key_head_dim, V = c.value_heads * c.value_head_dim;
  const std::string mm = "model.language_model.";
  StateDict out;
  for (const auto& [key0, t] : disk) {
    if (key0.rfind("model.visual.", 0) == 0 || key0.rfind("mtp.", 0) == 0) continue;  // the vision tower, MTP heads
    const std::string key = key0.rfind(mm, 0) == 0 ? "model." + key0.substr(mm.size()) : key0;
    const auto at = key.find(".linear_attn.");
    if (at == std::string::npos) {
      out[key] = t;
      continue;
    }
    const std::string layer = key.substr(0, at + 13), name = key.substr(at + 13);
    auto rows3 = [&](const char* q, const char* k, const char* v) {  // [q | k | v] rows of a fused tensor
      if (t.size(0) != 2 * K + V)
        throw Error(source + ": " + key0 + " has " + std::to_string(t.size(0)) + " rows, not 2 x " + std::to_string(K) +
                    " + " + std::to_string(V) + " (q | k | v)");
      out[layer + q] = t.narrow(0, 0, K), out[layer + k] = t.narrow(0, K, K), out[layer + v] = t.narrow(0, 2 * K, V);
    };
    if (name == "in_proj_qkv.weight") rows3("q_proj.weight", "k_proj.weight", "v_proj.weight");
    else if (name == "conv1d.weight") rows3("q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight");
    else if (name == "in_proj_z.weight") out[layer + "g_proj.weight"] = t;
    else if (name == "in_proj_a.weight") out[layer + "a_proj.weight"] = t;
    else if (name == "in_proj_b.weight") out[layer + "b_proj.weight"] = t;
    else if (name == "norm.weight") out[layer + "o_norm.weight"] = t;
    else if (name == "out_proj.weight") out[layer + "o_proj.weight"] = t;
    else out[key] = t;  // A_log, dt_bias
  }
  return out;
}

StateDict qwen3_5_checkpoint(const StateDict& mine) {
  StateDict out;
  std::map<std::string, std::array<torch::Tensor, 3>> qkv, conv;  // per layer prefix: q, k, v
  for (const auto& [key, t] : mine) {
    const auto at = key.find(".linear_attn.");
    if (at == std::string::npos) {
      out[key] = t;
      continue;
    }
    const std::string layer = key.substr(0, at + 13), name = key.substr(at + 13);
    const std::map<std::string, std::string> renamed{{"g_proj.weight", "in_proj_z.weight"}, {"a_proj.weight", "in_proj_a.weight"},
                                                     {"b_proj.weight", "in_proj_b.weight"}, {"o_norm.weight", "norm.weight"},
                                                     {"o_proj.weight", "out_proj.weight"}};
    const std::array<const char*, 3> proj{"q_proj.weight", "k_proj.weight", "v_proj.weight"};
    const std::array<const char*, 3> convs{"q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight"};
    bool done = false;
    for (int j = 0; j < 3; ++j) {
      if (name == proj[j]) qkv[layer][j] = t, done = true;
      if (name == convs[j]) conv[layer][j] = t, done = true;
    }
    if (done) continue;
    if (auto it = renamed.find(name); it != renamed.end()) out[layer + it->second] = t;
    else out[key] = t;  // A_log, dt_bias
  }
  for (auto& [layer, p] : qkv) out[layer + "in_proj_qkv.weight"] = torch::cat({p[0], p[1], p[2]}, 0);  // [2K + V, H]
  for (auto& [layer, p] : conv) out[layer + "conv1d.weight"] = torch::cat({p[0], p[1], p[2]}, 0);     // [2K + V, 1, k]
  return out;
}

}  // namespace statescope
