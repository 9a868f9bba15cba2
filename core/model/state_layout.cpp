// state_layout.cpp — shapes and names of a StateLayout.
#include "core/model/state_layout.h"

namespace statescope {
namespace {

std::string axes(const std::vector<StateAxis>& a) {
  std::string s = "(";
  for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i].name;
  return s + ")";
}

std::vector<int64_t> shape(int64_t batch, const std::vector<StateAxis>& a) {
  if (a.empty()) return {};
  std::vector<int64_t> s{batch};
  for (auto& x : a) s.push_back(x.size);
  return s;
}

}  // namespace

std::vector<int64_t> StateLayout::ssm_shape(int64_t batch) const { return shape(batch, ssm); }
std::vector<int64_t> StateLayout::conv_shape(int64_t batch) const { return shape(batch, conv); }
std::string StateLayout::ssm_axes() const { return axes(ssm); }
std::string StateLayout::conv_axes() const { return axes(conv); }

int64_t StateLayout::ssm_numel() const {
  int64_t n = 1;
  for (auto& x : ssm) n *= x.size;
  return n;
}

int64_t StateLayout::model_layer(int64_t r) const {
  if (layer_kinds.empty()) return r;
  int64_t seen = 0;
  for (size_t i = 0; i < layer_kinds.size(); ++i)
    if (layer_kinds[i] == "mamba2" || layer_kinds[i] == "gated_deltanet")
      if (seen++ == r) return static_cast<int64_t>(i);
  return r;
}

int64_t channel_groups(int64_t d_inner) {
  for (int64_t g = 1; g <= d_inner; ++g)
    if (d_inner % g == 0 && d_inner / g <= 64) return g;
  return d_inner;
}

}  // namespace statescope
