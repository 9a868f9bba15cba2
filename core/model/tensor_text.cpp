// tensor_text.cpp — shapes as text.
#include "core/model/tensor_text.h"

#include <sstream>

namespace statescope {

std::string shape_str(const std::vector<int64_t>& sizes) {
  std::ostringstream s;
  s << c10::IntArrayRef(sizes);
  return s.str();
}

std::string shape_str(const torch::Tensor& t) { return shape_str(t.sizes().vec()); }

}  // namespace statescope
