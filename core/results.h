// results.h — plain result structs shared by core/, the HDF5 store and views/ (no LibTorch, no Qt).
#pragma once
#include <cstdint>
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
  std::vector<double> norm;           // [n_layer, length] ||S_t||_F per layer
  std::vector<double> norm_per_head;  // [n_layer, nheads, length]
};

}  // namespace statescope
