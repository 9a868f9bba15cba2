// golden_util.h — reading the reference outputs in tests/golden/*/golden.h5 as tensors.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/store/h5file.h"

namespace statescope::test {

inline const std::string kGolden = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/";

// A dataset as a tensor: int64 when it is stored as integers, else float32.
inline torch::Tensor read(const H5File& f, const std::string& name) {
  std::vector<int64_t> d;
  if (f.is_integer(name)) {
    auto v = f.read_i64(name, &d);
    return torch::from_blob(v.data(), d, torch::kInt64).clone();
  }
  auto v = f.read_f32(name, &d);
  return torch::from_blob(v.data(), d, torch::kFloat32).clone();
}

}  // namespace statescope::test
