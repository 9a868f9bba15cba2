// blocks/hybrid_lm.h — what every hybrid family's model shares (issue 53): an embedding, a stack of
// layers threading a HybridState, a final norm and an output head (tied to the embedding where the
// family's checkpoint has no lm_head). Each family registers these under its checkpoint's names and
// defines its layers (nemotron_h/, qwen3_5/). Standalone for now; the next step makes it a RecurrentLM.
#pragma once
#include "core/model/blocks/hybrid_state.h"

namespace statescope {

class HybridLMImpl : public torch::nn::Module {
 public:
  // tokens [b, L] -> logits [b, L, vocab], from *state (null or empty: the empty state: zeros and no
  // keys); the state after the last token goes back to *state when given.
  virtual torch::Tensor forward(const torch::Tensor& tokens, HybridState* state) = 0;
  torch::Tensor forward(const torch::Tensor& tokens) { return forward(tokens, nullptr); }
  ParamHolder embed{nullptr}, final_norm{nullptr}, lm_head{nullptr};  // lm_head null: tied to embed

 protected:
  torch::Tensor embedded(const torch::Tensor& tokens) const {  // [b, L] -> [b, L, hidden]
    return embed->weight.index_select(0, tokens.reshape({-1})).view({tokens.size(0), tokens.size(1), -1});
  }
  torch::Tensor logits(const torch::Tensor& normed) const;  // [b, L, hidden] -> [b, L, vocab]
};

}  // namespace statescope
