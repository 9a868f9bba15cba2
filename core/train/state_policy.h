// state_policy.h — where each training sequence's initial state h_{-1} comes from.
//
// The paper's interventions (Buitrago Ruiz & Gu 2025) change only this: zero (the baseline and the
// control), random noise N(0, sigma^2), fitted noise (per layer and head Gaussian fitted to final
// states), state passing (previous batch's final states, detached) and TBTT (each row continues its
// document from the previous segment's final state). Whether the conv state travels is a knob.
//
// A hybrid (Nemotron-H, Qwen3.5): every policy sets its recurrent layers' states; its attention layers
// start empty under all five, state passing and TBTT included. The interventions are about the
// recurrent state a model never saw at T; an attention layer has no such state, only the keys of the
// positions it reads, and a passed cache would let it read past T in post-training (and grow by T
// every step), changing the thing measured rather than the starting point.
#pragma once
#include <memory>
#include <random>
#include <string>

#include "core/model/recurrent_lm.h"
#include "core/train/options.h"  // PolicySpec

namespace statescope {

struct PolicyStep {
  int64_t step = 0;
  torch::Tensor fresh;  // [B] bool, TBTT rows that started a new document (undefined otherwise)
  int64_t groups = 0;   // the state layout's groups, for fitted moments (0: the first state axis, Mamba-2's heads)
};

class InitialStatePolicy {
 public:
  virtual ~InitialStatePolicy() = default;
  virtual const PolicySpec& spec() const = 0;
  // TBTT needs consecutive segments of the same documents (StreamSampler).
  virtual bool wants_stream() const { return false; }
  // State passing and TBTT keep a state per batch row: under data parallelism each rank's policy
  // holds its own rows (initial() is asked for the rank's rows). Noise policies draw the whole
  // batch on every rank from the same generator and each rank keeps its rows, so the draws are
  // those of one process.
  virtual bool per_row() const { return false; }
  // Initial state for this step's batch; an empty ModelState means zeros. Tensors carry no grad.
  virtual ModelState initial(const RecurrentLM& model, int64_t batch, const PolicyStep& step) = 0;
  // The batch's final state (detached) after the forward pass.
  virtual void observe(const ModelState& final_state, const PolicyStep& step) {}
  // Fitted noise: statistics [n_layer, groups] (undefined for other policies).
  virtual torch::Tensor fitted_mean() const { return {}; }
  virtual torch::Tensor fitted_std() const { return {}; }
  // Whether observe() wants final states of calibration batches before step 1.
  virtual bool wants_calibration() const { return false; }
  // Everything needed to continue exactly after a checkpoint (tensors; undefined ones allowed).
  virtual std::vector<torch::Tensor> save_state() const { return {}; }
  virtual void load_state(const std::vector<torch::Tensor>& s) {}
};

// Throws Error for an unknown kind or a bad knob, naming it (check_policy).
std::unique_ptr<InitialStatePolicy> make_policy(const PolicySpec& spec, uint64_t seed);

// Per-(layer, group) mean and std of SSM states pooled over the batch and each group's entries
// (Mamba-2: per head, over headdim and d_state). groups 0: the first state axis. Returns {mean, std},
// each [n_layer, groups].
std::pair<torch::Tensor, torch::Tensor> ssm_state_moments(const ModelState& s, int64_t groups = 0);

}  // namespace statescope
