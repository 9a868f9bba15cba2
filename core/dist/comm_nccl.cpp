// comm_nccl.cpp — the NCCL backend for CUDA tensors (one GPU per rank, cuda:LOCAL_RANK). Built only
// where the CUDA LibTorch and nccl.h (the nvidia-nccl wheel's) are present; the Debian package
// (CPU LibTorch) has none. Compiled here; not yet run: no machine with several GPUs has been at hand.
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "core/dist/nccl.h"

namespace statescope::dist {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                                    std::chrono::milliseconds timeout) {
  auto o = c10d::ProcessGroupNCCL::Options::create();
  o->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, o);
}

}  // namespace statescope::dist
