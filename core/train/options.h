// options.h — the knobs of training and of the initial-state policies, as plain values. No LibTorch:
// the experiment spec (core/experiment/spec.h), the CLI and the app's panel bind to these.
#pragma once
#include <cstdint>
#include <string>

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
  bool loss_mask = true;        // score only the targets the documents' loss_mask marks (task data:
                                // the answers); false: every target counts
};

// Throws Error naming the knob ("grad_clip must be a finite number >= 0 (0: no clipping), got nan")
// unless every one is in range: steps >= 0, batch > 0, T >= 2, lr finite > 0, warmup >= 0,
// min_lr_ratio in [0, 1], weight_decay and grad_clip finite >= 0, betas in [0, 1).
void check_train_options(const TrainOptions& o);
// The most tokens one training step or one evaluation forward may hold (batch x T, batch x segment).
constexpr int64_t kMaxTokensPerStep = int64_t{1} << 24;

// Periodic checkpoints (model, optimizer, data order, policy state) so a stopped run resumes
// exactly: training 2k steps straight and k + resume k give the same numbers.
struct CheckpointOptions {
  std::string dir;       // empty: no checkpoints
  int64_t every = 0;     // steps between checkpoints (0: only at the end or on cancel)
  bool resume = false;   // continue from dir if it holds a checkpoint
};

// Where each training sequence's initial state comes from (state_policy.h has the policies).
struct PolicySpec {
  std::string kind = "zero";  // zero | random | fitted | passing | tbtt
  double sigma = 1.0;         // random: std of the SSM state entries
  double ema = 0.99;          // fitted: EMA decay of the per-(layer, head) statistics
  int64_t calibration_batches = 4;  // fitted: zero-state batches measured before step 1
  // fitted: 0 = fit the final states of the training windows (T tokens), calibrated before step 1
  // and followed by EMA during training (the paper's); L > 0 = fit the final states of zero-state
  // windows of L tokens in calibration, then keep that fit fixed (training windows are shorter).
  int64_t fit_length = 0;
  int pass_conv = -1;         // -1: default (passed for passing/tbtt, zero for noise); 0/1: force
  bool conv_passed() const { return pass_conv < 0 ? (kind == "passing" || kind == "tbtt") : pass_conv == 1; }
  std::string label() const;  // e.g. "random(sigma=1)"
};

// Throws Error naming the kind or the knob when `spec` is not a policy make_policy can build.
void check_policy(const PolicySpec& spec);

}  // namespace statescope
