// result.h — decay timescales: how long each layer's state groups remember, from the per-token
// decay factor exp(dt_t A) the model applies to its state. Memory length m_t = -1 / (dt_t A): the
// tokens over which the state decays by 1/e. Within T and far past it, so a model whose memory
// changes with position (or one engineered to remember, like the embedded demo model with A frozen)
// shows it. No LibTorch, no Qt (the views use it as it is).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
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

// The middle of the finite values (mean of the two middle ones for an even count); NaN when none.
// What `inspect`, the report and the view call "the median over layers and groups".
inline double median_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The bins [first, last] holding any token, near or far, widened by one empty bin either side (the
// stretch of the memory-length axis worth drawing); the whole axis when no bin holds any.
inline std::pair<size_t, size_t> occupied_bins(const DecayResult& d) {
  const size_t nb = d.bin_edges.size() < 2 ? 0 : d.bin_edges.size() - 1;
  if (nb == 0) return {0, 0};
  size_t first = nb, last = 0;
  for (size_t i = 0; i < d.near.size() && i < d.far.size(); ++i)
    if (d.near[i] > 0 || d.far[i] > 0) first = std::min(first, i % nb), last = std::max(last, i % nb);
  if (first > last) return {0, nb - 1};
  return {first ? first - 1 : 0, std::min(nb - 1, last + 1)};
}

}  // namespace statescope
