// blocks/mlp.h — the hybrids' dense feed-forward blocks as transformers writes them (issue 53):
//   swiglu  down(silu(gate(x) * m_gate) * up(x)) * m_down   (Qwen3.5, Qwen3-Next, Falcon-H1 with its
//           mlp_multipliers [m_gate, m_down]; gate_proj, up_proj, down_proj)
//   relu2   down(relu(up(x))^2)                              (Nemotron-H; up_proj, down_proj)
//   fused   output_linear(silu(a) * b), [a | b] = input_linear(x)  (Granite 4.0-H's shared MLP)
// No biases (the families' MLPs have none; their parsers refuse mlp_bias).
#pragma once
#include "core/model/recurrent_lm.h"

namespace statescope {

struct MlpConfig {
  enum class Kind { SwiGLU, Relu2, FusedSwiGLU };
  Kind kind = Kind::SwiGLU;
  int64_t hidden = 0, inner = 0;
  double gate_multiplier = 1.0, down_multiplier = 1.0;  // SwiGLU only (Falcon-H1's mlp_multipliers)
};

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const MlpConfig& c);
  torch::Tensor forward(const torch::Tensor& x);  // [b, L, hidden] -> [b, L, hidden]
  MlpConfig cfg;
  ParamHolder gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};  // input_linear / output_linear: up, down
};
TORCH_MODULE(Mlp);

}  // namespace statescope
