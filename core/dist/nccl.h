// nccl.h — private to dist/: the NCCL process group, in its own file (comm_nccl.cpp) because its
// header needs CUDA's and NCCL's. Present when STATESCOPE_HAVE_NCCL.
#pragma once
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace statescope::dist {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                                    std::chrono::milliseconds timeout);

}  // namespace statescope::dist
