// trainer.h — one loop for pretraining and post-training: AdamW (no weight decay on A_log, dt_bias,
// D and norms), linear warmup then cosine decay, gradient clipping, deterministic seeds, an
// initial-state policy, and a progress callback that can cancel.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/mamba2_model.h"
#include "core/base/results.h"
#include "core/train/state_policy.h"

namespace statescope {

struct TrainOptions {
  int64_t steps = 500;
  int64_t batch = 16;
  int64_t T = 32;               // training context
  double lr = 1e-3;
  double min_lr_ratio = 0.1;    // cosine decays to lr * min_lr_ratio
  int64_t warmup = 0;           // linear warmup steps
  double weight_decay = 0.1;
  double beta1 = 0.9, beta2 = 0.95;
  double grad_clip = 1.0;       // <= 0: no clipping
  uint64_t seed = 0;
  bool freeze_A_log = false;    // keep A fixed (e.g. A = 1 via A_log = 0)
};


struct TrainResult {
  std::string status = "finished";  // finished | cancelled | failed
  std::string message;
  int64_t steps_done = 0;
  std::vector<StepInfo> history;   // steps run by this call (a resumed run starts after its checkpoint)
  int64_t resumed_from = 0;        // checkpoint step this call started from
};

// Periodic checkpoints (model, optimizer, data order, policy state) so a stopped run resumes
// exactly: training 2k steps straight and k + resume k give the same numbers.
struct CheckpointOptions {
  std::string dir;       // empty: no checkpoints
  int64_t every = 0;     // steps between checkpoints (0: only at the end or on cancel)
  bool resume = false;   // continue from dir if it holds a checkpoint
};

// Return false to cancel; the loop stops after the current step.
using ProgressFn = std::function<bool(const StepInfo&)>;

double learning_rate(const TrainOptions& o, int64_t step);  // step from 1

// Trains `model` in place on `docs`. A NaN/Inf loss stops with status "failed" naming the step.
TrainResult train(Mamba2LM& model, const std::vector<Document>& docs, InitialStatePolicy& policy,
                  const TrainOptions& opt, const ProgressFn& progress = {}, const CheckpointOptions& ckpt = {});

}  // namespace statescope
