// scan_outputs.h — the ScanResult of a scan autograd node's outputs {y, final state, norms, delta
// norms} (cpu_scan.cpp and fused_scan.cpp return them in this order).
#pragma once
#include <vector>

#include "core/model/mamba2/ssd_scan.h"

namespace statescope {

inline ScanResult scan_result_of(const std::vector<torch::Tensor>& out, bool want_norms) {
  ScanResult r;
  r.y = out[0];            // [b, L, H, P]
  r.final_state = out[1];  // [b, H, P, N]
  if (want_norms) r.state_norm = out[2], r.delta_norm = out[3];  // [b, L, H] each
  return r;
}

}  // namespace statescope
