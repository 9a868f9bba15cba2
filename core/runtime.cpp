// runtime.cpp — thread and device settings.
#include "runtime.h"

#include <torch/torch.h>

#include <cstdlib>

#include "error.h"

namespace statescope {

int configure_threads(int requested) {
  int n = requested;
  if (n <= 0) {
    const char* env = std::getenv("STATESCOPE_THREADS");
    n = 1;
    if (env && *env) {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v <= 0 || v > 1024)
        throw Error(std::string("STATESCOPE_THREADS: expected a positive integer, got '") + env + "'");
      n = static_cast<int>(v);
    }
  }
  torch::set_num_threads(n);
  return n;
}

std::string runtime_summary() {
  return std::string("torch ") + TORCH_VERSION + ", CUDA " +
         (torch::cuda::is_available() ? std::to_string(torch::cuda::device_count()) + " device(s)"
                                      : std::string("not available")) +
         ", threads " + std::to_string(torch::get_num_threads());
}

}  // namespace statescope
