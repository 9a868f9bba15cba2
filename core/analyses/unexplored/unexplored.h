// unexplored.h — the unexplored-states detector: does a model, read far past its training context,
// reach SSM states it never met in training? (the paper's "unexplored states hypothesis", measured).
//
// 1. The states met in training: training windows of T tokens replayed under the run's initial-state
//    policy with the run's final weights (zero: every window from zero; noise: from its draws;
//    fitted: calibrated as the trainer does; state passing: each batch from the previous batch's
//    final states; TBTT: consecutive segments of each document), `train_steps` batches of
//    `train_batch` rows. From each row the state it started from and the states after T/4, T/2,
//    3T/4 and T tokens; a reservoir keeps `samples` of them per layer.
// 2. The envelope, per (layer, head), of the flattened head state x (P N values): PCA on 80% of the
//    samples; score(x) = T^2/k + Q/E[Q] with T^2 = sum_i z_i^2 / lambda_i over the top k components
//    (Hotelling) and Q the squared residual off them (both about 1 on training states); the
//    threshold is the `quantile` of the scores of 10% held out; the last 10% check it (their
//    outside fraction is reported, about 1 - quantile when the model fits).
// 3. Evaluation: the evaluation's own sequences (eval_sequences), forward in segments cut after every
//    stride-th position; the state after each cut is scored. Only counts are kept: memory does not
//    grow with the length.
// 4. With the evaluation's per-sequence losses, the Spearman rank correlation between the outside
//    fraction and the excess loss over positions >= T, with a 95% interval from resampling sequences;
//    the excess against the experiment's one yardstick when the evaluation has it (fixed_seq).
// 5. With `common` (zero_state_envelopes of the loaded model): the same states scored against that
//    one envelope too, so runs compare (a run's own envelope moves with its policy: state passing's
//    is built from passed states, so staying inside it is nearly guaranteed).
#pragma once
#include <functional>
#include <random>
#include <string>

#include "core/analyses/options.h"  // UnexploredOptions
#include "core/base/results.h"
#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/train/options.h"  // PolicySpec

namespace statescope {

// The envelope of one layer's heads, fitted to states [M, H, D] (float; D = headdim x d_state).
class StateEnvelope {
 public:
  StateEnvelope(const torch::Tensor& states, int64_t components, double quantile);
  // states [b, H, D] -> scores [b, H] (float64); outside = score > threshold().
  torch::Tensor score(const torch::Tensor& states) const;
  const torch::Tensor& threshold() const { return threshold_; }       // [H]
  const torch::Tensor& heldout_outside() const { return checked_; }    // [H], the last 10%
  int64_t components() const { return k_; }

  // Data parallel: the envelope of states [M, H, D] with every parameter 0, for the ranks that do
  // not fit it; summing parameters() over the ranks then gives each rank the one rank's fit.
  static StateEnvelope unfitted(int64_t M, int64_t H, int64_t D, int64_t components);
  std::vector<torch::Tensor> parameters() const { return {mean_, basis_, lambda_, q_mean_, threshold_, checked_}; }

 private:
  StateEnvelope() = default;
  torch::Tensor mean_, basis_, lambda_, q_mean_, threshold_, checked_;  // [H, D], [H, D, k], [H, k], [H], [H], [H]
  int64_t k_ = 0;
};

// A uniform sample (reservoir) of up to `capacity` SSM states per layer, offered a batch at a time:
// each row of a ModelState is one item (all its layers). Held on the CPU as [M, H, D] float32.
class StateReservoir {
 public:
  StateReservoir(int64_t n_layer, int64_t nheads, int64_t state_size, int64_t capacity, uint64_t seed);
  void offer(const ModelState& s);             // ssm [B, H, P, N] per layer
  // Data parallel: `mine` ([b, H, P, N] per layer) is this rank's share, rows rank*b .. rank*b+b-1, of
  // a batch of world*b rows every rank offers at once. Each rank draws the whole batch's slots as one
  // process does and holds only its own rows (a slot another rank's row took is zeroed here), so
  // gather() then leaves one process's sample on every rank. In one process: offer().
  void offer_share(const ModelState& mine);
  void gather();                               // one all-reduce per layer; a no-op in one process
  std::vector<torch::Tensor> states() const;   // per layer [min(seen, capacity), H, D]
  int64_t seen() const { return seen_; }

 private:
  std::vector<torch::Tensor> keep_;
  int64_t capacity_, H_, D_, seen_ = 0;
  std::mt19937_64 rng_;
};

// Kept states per layer within 1 GiB of float32: `samples`, fewer for large models.
int64_t reservoir_capacity(const StateLayout& c, int64_t samples);

// Per layer [M, H, D] float32: the states met in training under `policy` (step 1 above).
std::vector<torch::Tensor> training_states(RecurrentLM& model, const std::vector<Document>& train, const PolicySpec& policy,
                                           const UnexploredOptions& o, uint64_t seed,
                                           const std::function<bool(int64_t, int64_t)>& progress = {});

// Envelopes per layer fitted to `samples` (per layer [M, H, D]; step 2 above); data parallel: each
// layer fitted by one rank and shared.
std::vector<StateEnvelope> fit_envelopes(const std::vector<torch::Tensor>& samples, const UnexploredOptions& o);

// The common yardstick: the envelopes of `model`'s states met in zero-state training windows (what
// the loaded model's baseline run fits as its own), for scoring every run's states against one
// envelope. o.T, o.train_steps, o.train_batch, o.samples, o.components, o.quantile as the detector's.
std::vector<StateEnvelope> zero_state_envelopes(RecurrentLM& model, const std::vector<Document>& train,
                                                const UnexploredOptions& o, uint64_t seed);

// The whole detector. `eval` (may be null): the run's evaluation of the same sequences, for the
// rank correlation with the excess. `recorded` (may be null): states the trainer actually started
// from and ended at during this run's post-training (with each step's weights, StateReservoir fed by
// train()'s states_seen); they join the replayed ones in the envelope. progress(done, total) over
// both phases; false cancels (throws).
UnexploredResult unexplored_states(RecurrentLM& model, const std::vector<Document>& train,
                                   const std::vector<Document>& validation, const PolicySpec& policy,
                                   const UnexploredOptions& o, uint64_t seed, const EvalResult* eval,
                                   const std::function<bool(int64_t, int64_t)>& progress = {},
                                   const std::vector<torch::Tensor>* recorded = nullptr,
                                   const std::vector<StateEnvelope>* common = nullptr);

// Spearman rank correlation of x and y (average ranks for ties); NaN for fewer than 3 points.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace statescope
