// conv1d_ref.h — CPU twin of kernels/conv1d.cu: same arguments (host pointers), plain loops. Tested
// against the model's ATen path (F::conv1d over [state | x]) in tests/test_kernels.cpp.
#pragma once
#include "kernels/conv1d.h"

namespace statescope {

void conv1d_fwd_ref(const kernels::Conv1dArgs& a);  // host pointers

}  // namespace statescope
