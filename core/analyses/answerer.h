// answerer.h — what the task scorers (passkey, bAbI, copying) ask of a model, behind one interface:
// greedy continuations and candidate log-likelihoods of token prompts. model_answerer runs any
// RecurrentLM; tests plug in oracles that read the answer out of the prompt, so the scoring itself is
// proven (a right oracle scores 1, a wrong one 0) apart from any model.
#pragma once
#include <memory>
#include <vector>

#include "core/model/recurrent_lm.h"

namespace statescope {

using TokenRows = std::vector<std::vector<int32_t>>;  // [b][len] ids; rows of one call have one length

class Answerer {
 public:
  virtual ~Answerer() = default;
  // prompts [b][L] -> [b][n]: n tokens decoded greedily after each prompt.
  virtual TokenRows greedy(const TokenRows& prompts, int64_t n) = 0;
  // prompts [b][L], candidates [c][len_c] -> [b][c]: log p(candidate | prompt), summed over its tokens.
  virtual std::vector<std::vector<double>> loglik(const TokenRows& prompts, const TokenRows& candidates) = 0;
};

// Greedy decoding of `n` tokens after `prompt` tokens: one forward over the prompt (from `init`, or
// zeros), then single-token steps from the carried state. prompt [b, L] -> [b, n].
torch::Tensor greedy_decode(RecurrentLM& model, const torch::Tensor& prompt, int64_t n, const ModelState* init = nullptr);

// The model, in eval mode, on its device; every prompt starts from `init` ([b] rows matching the
// calls' b; null: zero states). The answerer keeps a reference to the model and a copy of init.
// Prompts go through the model in groups of rows of at most max_elements prompt tokens x d_model
// (0: about 4M, a GiB or so of activations), so memory does not grow with the number of prompts.
std::unique_ptr<Answerer> model_answerer(RecurrentLM& model, const ModelState* init = nullptr, int64_t max_elements = 0);

}  // namespace statescope
