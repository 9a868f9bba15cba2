// ssm_step_ref.cpp — one selective-SSM token: a one-token run of the scan twin, plus D x.
#include "core/twins/ssm_step_ref.h"

#include "core/twins/ssm_scan_ref.h"

namespace statescope {

void ssm_step_ref(const kernels::SsmStepArgs& a) {
  // One token of the scan: with L = 1 the step's [b, H, P], [b, H], [b, G, N] layouts are the scan's
  // [b, 1, H, P], [b, 1, H], [b, 1, G, N]; the state is read and written in place.
  kernels::SsmScanArgs s;
  s.x = a.x; s.dt = a.dt; s.A = a.A; s.B = a.B; s.C = a.C; s.h0 = a.h; s.y = a.y; s.h_final = a.h; s.norm = a.norm; s.delta = a.delta;
  s.b = a.b; s.L = 1; s.H = a.H; s.P = a.P; s.G = a.G; s.N = a.N;
  ssm_scan_fwd_ref(s);
  if (a.D)
    for (int64_t i = 0; i < a.b * a.H * a.P; ++i) a.y[i] += a.D[(i / a.P) % a.H] * a.x[i];
}

}  // namespace statescope
