// qwen3_5/model.cpp — the Qwen3.5 stack and its checkpoint names (model.h).
#include "core/model/qwen3_5/model.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/dense.h"

namespace statescope {

namespace {
// transformers' zero-centred RMSNorm: x / rms(x) * (1 + w).
torch::Tensor norm1p(const torch::Tensor& x, const ParamHolder& n, double eps) { return rms_norm(x, 1.0 + n->weight, eps); }
}  // namespace

Qwen35LMImpl::Qwen35LMImpl(const Qwen35Config& c) : cfg(c) {
  c.validate("Qwen3.5 config");
  const int64_t H = c.hidden;
  gdn.d_model = H, gdn.num_heads = c.key_heads, gdn.num_v_heads = c.value_heads, gdn.head_dim = c.key_head_dim;
  gdn.expand_v = static_cast<double>(c.value_head_dim) / static_cast<double>(c.key_head_dim);
  gdn.use_short_conv = true, gdn.conv_size = c.conv_kernel, gdn.use_gate = true, gdn.sigmoid_gate = false;
  gdn.allow_neg_eigval = false, gdn.norm_eps = c.norm_eps;
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

torch::Tensor Qwen35LMImpl::forward(const torch::Tensor& tokens, HybridState* state) {
  auto h = embedded(tokens);  // [b, L, H]
  HybridState out;
  const bool from = state && !state->recurrent.empty(), keys = state && !state->attention.empty();
  size_t r = 0, a = 0;
  for (size_t i = 0; i < mixers.size(); ++i) {
    auto x = norm1p(h, input_norms[i], cfg.norm_eps);
    if (auto* g = std::get_if<GatedDeltaNetMixer>(&mixers[i])) {
      LayerState fin;
      ForwardOptions opt;
      opt.layer = static_cast<int64_t>(i);
      h = h + (*g)->forward(x, from ? &state->recurrent.at(r) : nullptr, opt, fin, nullptr, nullptr, nullptr);
      out.recurrent.push_back(std::move(fin));
      ++r;
    } else {
      KVCache cache = keys ? state->attention.at(a) : KVCache{};
      h = h + std::get<Attention>(mixers[i])->forward(x, &cache);
      out.attention.push_back(std::move(cache));
      ++a;
    }
    h = h + mlps[i]->forward(norm1p(h, post_norms[i], cfg.norm_eps));
  }
  if (state) *state = std::move(out);
  return logits(norm1p(h, final_norm, cfg.norm_eps));  // [b, L, vocab]
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

}  // namespace statescope
