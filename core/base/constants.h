// constants.h — numbers and names several layers share, in one place. No LibTorch, no Qt.
#pragma once
#include <cstdint>

namespace statescope {

// Losses are computed in nats and shown in bits (per byte for byte-level models): x nats = x * this bits.
constexpr double kBitsPerNat = 1.4426950408889634;  // 1 / ln 2

// How far past the training context T an evaluation reads when a spec or flag does not say: 64T,
// the paper's horizon.
constexpr int64_t kHorizonInT = 64;
constexpr int64_t default_eval_length(int64_t T) { return kHorizonInT * T; }

// The initial-state policies (train/state_policy.h), in the order every list shows them.
inline constexpr const char* kPolicyKinds[] = {"zero", "random", "fitted", "passing", "tbtt"};

// The random streams a run's seed s gives its samplers, each its own so none shifts another:
// training windows, TBTT document streams, fitted noise's fit windows, the unexplored detector's kept
// training states and the states post-training met.
struct SeedStreams {
  static constexpr uint64_t windows(uint64_t s) { return s * 7919 + 1; }
  static constexpr uint64_t streams(uint64_t s) { return s * 7919 + 2; }
  static constexpr uint64_t fit_windows(uint64_t s) { return s * 7919 + 3; }
  static constexpr uint64_t kept_states(uint64_t s) { return s * 31 + 7; }
  static constexpr uint64_t met_states(uint64_t s) { return s * 37 + 11; }
  // A training-free run's calibration windows (clip, longmamba), by its place in the spec.
  static constexpr uint64_t intervention(uint64_t s, uint64_t index) { return s * 7919 + 100 + index; }
  // A post-training run's initial-state policy (noise draws), by its place in the spec.
  static constexpr uint64_t posttrain_policy(uint64_t s, uint64_t index) { return s + 1000 + index; }
  // Pretraining's policy (zero: it draws nothing; the CLI and a spec's pretrain section agree).
  static constexpr uint64_t pretrain_policy(uint64_t s) { return s + 17; }
  // The unexplored-states detector's envelope (its kept training states are kept_states of this).
  static constexpr uint64_t envelope(uint64_t s) { return s + 5; }
  // A task (passkey, bAbI): its fine-tuning examples, the fine-tuning policy, the measured prompts.
  static constexpr uint64_t task_examples(uint64_t s) { return s + 1; }
  static constexpr uint64_t task_policy(uint64_t s) { return s + 2; }
  static constexpr uint64_t task_prompts(uint64_t s) { return s + 3; }
  // Copying (analyses/copying): its training examples, the task policy, the measured prompts, the
  // zero-state pretraining policy and the second phase's data order; per length c, its examples;
  // the states it starts from (passed, prose, noise, reversed).
  static constexpr uint64_t copy_examples(uint64_t s) { return s + 1; }
  static constexpr uint64_t copy_policy(uint64_t s) { return s + 2; }
  static constexpr uint64_t copy_prompts(uint64_t s) { return s + 3; }
  static constexpr uint64_t copy_pretrain_policy(uint64_t s) { return s + 4; }
  static constexpr uint64_t copy_second_phase(uint64_t s) { return s + 5; }
  static constexpr uint64_t copy_length(uint64_t s, uint64_t c) { return s + 1000003 * c; }
  static constexpr uint64_t copy_passed_start(uint64_t s) { return s + 7; }
  static constexpr uint64_t copy_prose_start(uint64_t s) { return s + 11; }
  static constexpr uint64_t copy_noise_start(uint64_t s) { return s + 13; }
  static constexpr uint64_t copy_reversed_start(uint64_t s) { return s + 17; }
  // The detector's held-out split of the states it kept.
  static constexpr uint64_t heldout_split(uint64_t s) { return s * 131 + 5; }
};

}  // namespace statescope
