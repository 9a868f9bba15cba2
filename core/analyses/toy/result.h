// result.h — the toy analysis's result (issue 51's proof by addition; removed after the count).
#pragma once
#include <cstdint>
#include <vector>

namespace statescope {
struct ToyResult {
  std::vector<int64_t> position;  // [n]
  std::vector<double> entropy;    // [n] mean next-token entropy (nats) over the sequences
  int64_t sequences = 0;
};
}  // namespace statescope
