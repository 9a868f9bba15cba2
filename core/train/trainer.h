// trainer.h — one loop for pretraining and post-training: AdamW (no weight decay on A_log, dt_bias,
// D and norms), linear warmup then cosine decay, gradient clipping, deterministic seeds, an
// initial-state policy, and a progress callback that can cancel.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/base/results.h"
#include "core/train/options.h"  // TrainOptions, CheckpointOptions
#include "core/train/samplers.h"
#include "core/train/state_policy.h"

namespace statescope {

struct TrainResult {
  std::string status = "finished";  // finished | cancelled | failed
  std::string message;
  int64_t steps_done = 0;
  std::vector<StepInfo> history;   // steps run by this call (a resumed run starts after its checkpoint)
  int64_t resumed_from = 0;        // checkpoint step this call started from
};

// Return false to cancel; the loop stops after the current step.
using ProgressFn = std::function<bool(const StepInfo&)>;

double learning_rate(const TrainOptions& o, int64_t step);  // step from 1

// Fitted noise before step 1: observe() the final states of `calibration_batches` zero-state batches
// (windows of fit_length tokens from their own sampler seeded by `seed`, else of T from `windows`).
void calibrate_policy(RecurrentLM& model, const std::vector<Document>& docs, InitialStatePolicy& policy,
                      WindowSampler& windows, int64_t batch, int64_t T, uint64_t seed);

// Trains `model` in place on `docs`. A NaN/Inf loss stops with status "failed" naming the step.
// Called once per step with the states the batch started from (zeros when the policy gives none)
// and the final states it reached, both detached [B, H, P, N] / [B, conv_dim, K-1] per layer.
using StatesSeenFn = std::function<void(const ModelState& initial, const ModelState& final_state)>;

TrainResult train(RecurrentLM& model, const std::vector<Document>& docs, InitialStatePolicy& policy,
                  const TrainOptions& opt, const ProgressFn& progress = {}, const CheckpointOptions& ckpt = {},
                  const StatesSeenFn& states_seen = {});

}  // namespace statescope
