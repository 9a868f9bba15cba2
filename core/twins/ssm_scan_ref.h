// ssm_scan_ref.h — CPU twin of kernels/ssm_scan.cu: the same arguments (host pointers), the same
// loop order, plain C++. It is the reference the CUDA kernel is tested against; it is itself
// tested against the LibTorch scans in tests/test_kernels.cpp.
#pragma once
#include "kernels/ssm_scan.h"

namespace statescope {

void ssm_scan_fwd_ref(const kernels::SsmScanArgs& a);  // host pointers

// Twin of ssm_scan_chunked_fwd_cuda: the same three passes (local chunk states from zero, chaining
// with the chunk decay exp(sum dt A), rescan from each chunk's start state), float32 throughout.
void ssm_scan_chunked_ref(const kernels::SsmScanArgs& a, int64_t Q);

// Twin of ssm_scan_chunked_bwd_cuda: chunk start states, local adjoints, adjoint chaining, then a
// backward walk through each chunk's recomputed states. Writes every gradient in g (host pointers);
// sums over tokens, heads and state entries in float64.
void ssm_scan_bwd_ref(const kernels::SsmScanArgs& a, const kernels::SsmScanGrads& g, int64_t Q);

}  // namespace statescope
