// result.h — decay timescales: how long each layer's state groups remember, from the per-token
// decay factor exp(dt_t A) the model applies to its state. Memory length m_t = -1 / (dt_t A): the
// tokens over which the state decays by 1/e. Within T and far past it, so a model whose memory
// changes with position (or one engineered to remember, like the embedded demo model with A frozen)
// shows it. No LibTorch, no Qt.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct DecayResult {
  int64_t T = 0, length = 0, sequences = 0, n_layer = 0, groups = 0;
  std::string group_name = "head";   // what a group is (state_layout.h): head, or Mamba-1's channel group
  std::vector<double> bin_edges;     // [bins + 1] log10 of the memory length in tokens
  std::vector<double> near, far;     // [n_layer, groups, bins] fraction of tokens in each bin: positions
                                     // [0, T) and [max(T, length/2), length)
  std::vector<double> median_near, median_far;  // [n_layer, groups] median memory length (tokens),
                                                // interpolated in the histogram
};

}  // namespace statescope
