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
};

}  // namespace statescope
