// tensor_text.h — a tensor's shape as messages print it: "[2, 45, 64]".
#pragma once
#include <torch/types.h>

#include <string>
#include <vector>

namespace statescope {

std::string shape_str(const torch::Tensor& t);
std::string shape_str(const std::vector<int64_t>& sizes);

}  // namespace statescope
