// results.h — plain result structs shared by core/, the HDF5 store and views/ (no LibTorch, no Qt).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct StepInfo {
  int64_t step = 0, steps = 0;  // step counts from 1
  double loss = 0;              // mean nats per token of this batch
  double lr = 0, grad_norm = 0;
  double tokens_per_s = 0, elapsed_s = 0, eta_s = 0;
};

struct EvalResult {
  int64_t length = 0, sequences = 0, n_layer = 0, nheads = 0, T = 0;
  std::vector<double> nll;            // [length] mean over sequences
  std::vector<double> windowed_nll;   // [length] state reset every T/2, each token with T/2..T of context
  std::vector<float> nll_seq;         // [sequences, length] per sequence (standard errors of any aggregate)
  std::vector<float> windowed_seq;    // [sequences, length]
  // The experiment's one yardstick: the loaded model's state-reset loss on the same bytes, the same
  // for every run of the experiment (empty outside an experiment). [sequences, length]
  std::vector<float> fixed_seq;
  std::vector<double> norm;           // [n_layer, length] ||S_t||_F per layer
  std::vector<double> norm_per_head;  // [n_layer, nheads, length]
  // What one of the nheads columns is: "head" (Mamba-2) or "channel group" (Mamba-1; state_layout.h).
  std::string group_name = "head";
  // A hybrid's layers (all empty for a pure recurrent model): every layer's kind in order (blocks/kinds.h's
  // names), the model layer of each of the n_layer recurrent rows above and of each attention layer below.
  std::vector<std::string> layer_kinds;
  std::vector<int64_t> recurrent_layers, attention_layers;
  // Per attention layer, query head and position, mean over sequences (with the norms): the entropy of
  // the position's attention in bits and its mass on the sequence's first `first_tokens` positions.
  int64_t attention_heads = 0, first_tokens = 0;
  std::vector<double> attn_entropy, attn_first;  // [attention_layers, attention_heads, length]
  // The model layer of recurrent row r ("L<layer>" labels), r itself for a pure model.
  int64_t model_layer(int64_t r) const {
    return r < static_cast<int64_t>(recurrent_layers.size()) ? recurrent_layers[static_cast<size_t>(r)] : r;
  }
  // The kind of recurrent row r ("mamba2", "gated_deltanet"), empty for a pure model.
  std::string recurrent_kind(int64_t r) const {
    const int64_t l = model_layer(r);
    return l < static_cast<int64_t>(layer_kinds.size()) && r < static_cast<int64_t>(recurrent_layers.size())
               ? layer_kinds[static_cast<size_t>(l)] : std::string();
  }
};

}  // namespace statescope

namespace statescope {

// Effective Remembrance EffRem_T(t) = TV(p(.|x[0:T]), p(.|x[t:T])) on a grid of t, for several T.
struct EffRemResult {
  std::vector<int64_t> T;        // [nT] context lengths
  std::vector<int64_t> t;        // [nt] truncation points (common grid; entries with t >= T are NaN)
  std::vector<double> value;     // [nT, nt] mean TV over sequences
  std::vector<double> stderr_;   // [nT, nt] standard error over sequences
  int64_t sequences = 0;
  int64_t forward_tokens = 0;    // total tokens forwarded to make it (the cost)
};

// Distribution of SSM state entries at chosen positions, and the state change per token.
struct StateStatsResult {
  std::vector<int64_t> positions;   // [npos]
  std::vector<int64_t> layers;      // [nl] selected layers
  int64_t nheads = 0, length = 0, sequences = 0, T = 0, n_layer = 0;
  std::vector<double> bin_edges;    // [bins + 1], shared by every histogram
  std::vector<double> histogram;    // [nl, npos, nheads, bins] probability density
  std::vector<double> mean, std;    // [nl, npos, nheads] over sequences, headdim and d_state
  std::vector<double> fitted_mean, fitted_std;  // [nl, nheads] of states at position T-1 (what training saw)
  std::vector<double> delta_norm;   // [n_layer, length] mean ||S_t - S_{t-1}||_F over sequences
  std::string group_name = "head";  // what one of the nheads is: "head" or Mamba-1's "channel group"
};

}  // namespace statescope

namespace statescope {

// The unexplored-states detector: per (layer, head) an envelope of the states met in training (PCA
// of the flattened state, score = T^2/k + Q/E[Q], threshold = a quantile of held-out training
// scores), then, on evaluation sequences, the fraction of states outside it after each grid position.
struct UnexploredResult {
  int64_t T = 0, length = 0, sequences = 0, n_layer = 0, nheads = 0;
  int64_t components = 0, train_samples = 0, train_steps = 0, train_batch = 0;
  int64_t recorded_samples = 0;         // of train_samples: states recorded during post-training (the rest replayed)
  double quantile = 0;
  std::vector<int64_t> positions;       // [npos] the state after each of these positions is scored
  std::vector<double> outside;          // [npos, n_layer, nheads] fraction of sequences outside
  std::vector<double> outside_mean;     // [npos] mean over layers and heads
  std::vector<double> outside_seq;      // [sequences, npos] per sequence, mean over layers and heads
  std::vector<double> heldout_outside;  // [n_layer, nheads] held-out training states outside (~1 - quantile)
  std::vector<double> threshold;        // [n_layer, nheads] score threshold
  // How well the outside fraction predicts the excess loss (full context minus state-reset
  // reference, mean over the stride ending at each position), Spearman rank correlation over the
  // positions >= T, with a percentile interval from resampling sequences. NaN when not computed.
  double excess_rho = 0, excess_rho_lo = 0, excess_rho_hi = 0;
  std::vector<double> excess;           // [npos] that excess (NaN below T or when not computed)
  // What the excess is measured against: "fixed" (the experiment's one yardstick, the loaded
  // model's state-reset loss: EvalResult::fixed_seq) or "own" (the run's own state-reset reference).
  std::string excess_reference = "own";
  // The common yardstick: the same states scored against one envelope for every run, the loaded
  // model's states met in zero-state training windows (the baseline's own envelope). Empty when
  // not computed (files from before it, or the detector run alone).
  std::vector<double> common_outside;       // [npos, n_layer, nheads]
  std::vector<double> common_outside_mean;  // [npos]
  double common_rho = 0, common_rho_lo = 0, common_rho_hi = 0;  // Spearman with the excess, as above
};

}  // namespace statescope

namespace statescope {

// Synthetic copying: accuracy per evaluated string length.
struct CopyResult {
  std::vector<int64_t> lengths;        // [n] string lengths evaluated
  std::vector<double> exact;           // [n] fraction of samples copied without error (from a zero state)
  std::vector<double> token_accuracy;  // [n] fraction of correct tokens (from a zero state)
  std::vector<double> exact_passed;    // [n] the same, each prompt starting from a passed state:
  std::vector<double> token_accuracy_passed;  // the final state of a training-format example
  int64_t samples = 0, L = 0, alphabet = 0, T = 0;  // T: training window
  bool conv_passed = false;            // whether the passed state included the conv state
  // The same strings from foreign starting states (none is in any policy's training distribution):
  // "prose": the state after 4T tokens of held-out English prose; "noise": IID Gaussian per (layer,
  // head) with the mean and std of the passed states' entries (the scale of trained states);
  // "reversed": the state after a chain of another task's examples (BOS s SEP reverse(s) EOS).
  std::vector<std::string> foreign;              // [k] names, in that order (prose only when given text)
  std::vector<double> exact_foreign;             // [k, n]
  std::vector<double> token_accuracy_foreign;    // [k, n]
};

// bAbI-style single-supporting-fact questions in long prose: accuracy per context length.
struct BabiResult {
  std::vector<int64_t> lengths;        // [n] prompt lengths (tokens)
  std::vector<double> accuracy;        // [n] greedy answer equals the location word
  std::vector<double> choice_accuracy; // [n] the location with the highest likelihood is right
  std::vector<double> last_mentioned_accuracy;  // [n] baseline: the last fact's location is right
  std::vector<double> mean_distance;   // [n] mean tokens between the supporting fact and the question
  int64_t samples = 0, candidates = 0; // candidates: number of locations (chance = 1/candidates)
};

}  // namespace statescope

namespace statescope {

// Passkey retrieval: accuracy per (prompt length, key depth) cell.
struct PasskeyResult {
  std::vector<int64_t> lengths;        // [nl] prompt lengths (tokens)
  std::vector<double> depths;          // [nd] key depth, 0 = start, 1 = end
  std::vector<double> accuracy;        // [nl, nd] exact match of all 5 digits
  std::vector<double> digit_accuracy;  // [nl, nd] fraction of correct digits
  int64_t samples = 0;
};

}  // namespace statescope
