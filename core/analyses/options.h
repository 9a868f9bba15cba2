// options.h — the knobs of every analysis, as plain values. No LibTorch: the experiment spec
// (core/experiment/spec.h), the CLI and the app's panel bind to these.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/pretrain_shape.h"  // the copying model
#include "core/train/options.h"

namespace statescope {

// Per-position loss and state norms far past T (evaluate.h).
struct EvalOptions {
  int64_t T = 32;          // training context of the model (for the windowed reference)
  int64_t length = 512;    // positions scored per sequence (default in specs: 64T)
  int64_t sequences = 32;  // sequences averaged
  int64_t segment = 512;   // tokens per forward; the state is carried between segments
  int64_t batch = 8;       // sequences per forward
  bool windowed = true;    // also score with the state reset (the excess reference)
  // In an experiment, a run other than the baseline is measured against the one yardstick (the
  // loaded model's state-reset loss, computed once for every run); true: it also scores its own
  // state-reset reference (`windowed`), about twice the full pass's cost again.
  bool own_reference = false;
  bool norms = true;       // SSM state norms per position
};

// Effective Remembrance (effrem.h).
// EffRem's default context lengths for a model trained at T: T, 2T, 4T, ..., 64T (32..2048 at T = 32).
inline std::vector<int64_t> default_effrem_contexts(int64_t T) {
  std::vector<int64_t> Ts;
  for (int k = 0; k <= 6; ++k) Ts.push_back(T << k);
  return Ts;
}

struct EffRemOptions {
  // Context lengths; a spec without "T" leaves them to the run: default_effrem_contexts(run's T).
  std::vector<int64_t> Ts = default_effrem_contexts(32);
  int64_t points = 16;      // grid size (t = 0 is always included)
  bool log_grid = true;     // log-spaced t (else linear)
  int64_t sequences = 16;
  int64_t max_batch_tokens = 16384;  // sequences per forward are limited to this many tokens
};

// State distributions below and far past T (state_stats.h).
struct StateStatsOptions {
  int64_t T = 32;
  std::vector<int64_t> positions;  // empty: T/2, T-1, 2T, 8T, 32T, 64T-1 (those < length)
  std::vector<int64_t> layers;     // empty: all
  int64_t length = 0;              // positions scanned (default 64T)
  int64_t sequences = 16;
  int64_t bins = 101;
  double range = 0;                // histogram range [-range, range]; 0: the largest |entry| seen
  int64_t segment = 512;
};

// The unexplored-states detector (unexplored.h): an envelope of the states met in training per
// (layer, head), then the fraction of evaluation states outside it at each position.
struct UnexploredOptions {
  int64_t T = 32;               // the training window
  int64_t length = 0;           // evaluation positions per sequence (default 64T)
  int64_t sequences = 32;       // evaluation sequences (the evaluation's own, so excess can be compared)
  int64_t stride = 0;           // a state is scored after every stride-th position (default T/2)
  int64_t train_steps = 200;    // training batches replayed under the run's policy to sample its states
  int64_t train_batch = 16;     //   ... rows per batch
  int64_t samples = 2048;       // training states kept per layer (reservoir), 1/5 of them held out
  int64_t components = 8;       // principal components of the envelope model
  double quantile = 0.99;       // held-out training states inside the envelope (calibration)
  int64_t bootstrap = 200;      // resamples of sequences for the rank correlation's interval
};

// The shape of the fresh model the copying analysis trains: 2 layers, d_model 64, d_state 32,
// headdim 16, byte vocabulary, chunks of 64.
// The copying analysis's fresh model: PretrainShape's defaults (Mamba-2, d_model 64, 2 layers, d_state
// 32, headdim 16, chunks of 64; byte-level, tied embeddings), any architecture by its "arch".
inline PretrainShape default_copy_model() { return PretrainShape{}; }

// Synthetic copying (copying.h).
struct CopyOptions {
  int64_t L = 10;                 // longest training string
  int64_t alphabet = 10;          // letters 'a' .. 'a' + alphabet - 1 (2..26)
  int64_t T = 0;                  // training window (0: 2L + 3, the longest example)
  int64_t train_docs = 4000;      // distinct training examples
  std::vector<int64_t> eval_lengths;  // empty: L/2, L, 3L/2, 2L, 3L, 4L
  int64_t eval_samples = 100;
  int64_t pretrain_steps = 0;     // > 0: first train this many steps with zero states, then the
                                  // policy's steps on top (the paper's post-training setting)
  uint64_t seed = 0;
  PretrainShape model = default_copy_model();  // the fresh model's shape (any architecture)
};

// Fine-tuning on a task's own examples before it is measured (passkey, bAbI): each policy run
// fine-tunes a copy of its model with its own initial-state policy; the baseline run is measured as
// loaded. One example per window (TBTT: streams of kTaskExamplesPerStream), loss on the answer unless
// train.loss_mask is off.
struct TaskFinetune {
  TrainOptions train;    // steps, T (the window), batch, lr, warmup, loss_mask
  int64_t examples = 0;  // distinct training examples
  // The CLI verbs' and the spec's defaults: 300 steps, batch 16, lr 1e-3, warmup 10, the given
  // window and example count (passkey: 128 and 2000, bAbI: 256 and 4000).
  static TaskFinetune defaults(int64_t T, int64_t examples) {
    TaskFinetune o;
    o.train.steps = 300;
    o.train.T = T;
    o.train.batch = 16;
    o.train.lr = 1e-3;
    o.train.warmup = 10;
    o.examples = examples;
    return o;
  }
};

// The passkey grid (passkey.h) as a spec asks for it.
struct PasskeyOptions {
  std::vector<int64_t> lengths;  // empty: 4T .. 64T
  std::vector<double> depths{0.0, 0.25, 0.5, 0.75, 1.0};
  int64_t samples = 10;
  std::optional<TaskFinetune> finetune;  // absent: every run measured as it is (zero-shot)
  static TaskFinetune default_finetune() { return TaskFinetune::defaults(128, 2000); }
};

// bAbI-style questions (babi.h) as a spec asks for them.
struct BabiOptions {
  std::vector<int64_t> lengths{256, 512, 1024, 2048};
  int64_t samples = 50, facts = 4;
  std::optional<TaskFinetune> finetune;  // absent: zero-shot
  static TaskFinetune default_finetune() { return TaskFinetune::defaults(256, 4000); }
};

// Copying (copying.h) as a spec asks for it: the task and the fresh model's training.
struct CopyingOptions {
  CopyOptions options;
  TrainOptions train = default_train();
  static TrainOptions default_train() {  // 600 steps, batch 32, lr 3e-3, warmup 30
    TrainOptions t;
    t.steps = 600;
    t.batch = 32;
    t.lr = 3e-3;
    t.warmup = 30;
    return t;
  }
};

}  // namespace statescope
