// ssm_step_ref.h — CPU twin of kernels/ssm_step.cu: one token of the selective SSM, state in place.
// Tested against the sequential scan twin (one token, plus the D term) in tests/test_kernels.cpp.
#pragma once
#include "kernels/ssm_step.h"

namespace statescope {

void ssm_step_ref(const kernels::SsmStepArgs& a);  // host pointers

}  // namespace statescope
