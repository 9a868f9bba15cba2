// options.cpp — policy labels and checks (see options.h). No LibTorch.
#include "core/train/options.h"

#include <sstream>

#include "core/base/error.h"

namespace statescope {

std::string PolicySpec::label() const {
  std::ostringstream s;
  s << kind;
  if (kind == "random") s << "(sigma=" << sigma << ")";
  if (kind == "fitted" && fit_length > 0) s << "(L=" << fit_length << ")";
  if (pass_conv >= 0) s << (pass_conv ? "+conv" : "-conv");
  return s.str();
}

void check_policy(const PolicySpec& spec) {
  if (spec.kind != "zero" && spec.kind != "random" && spec.kind != "fitted" && spec.kind != "passing" &&
      spec.kind != "tbtt")
    throw Error("unknown initial-state policy '" + spec.kind + "' (zero, random, fitted, passing, tbtt)");
  if (spec.kind == "random" && !(spec.sigma >= 0))
    throw Error("random noise policy: sigma must be >= 0, got " + std::to_string(spec.sigma));
  if (spec.kind == "fitted") {
    if (!(spec.ema >= 0 && spec.ema < 1)) throw Error("fitted noise policy: ema must be in [0, 1)");
    if (spec.fit_length < 0)
      throw Error("fitted noise policy: fit_length " + std::to_string(spec.fit_length) + " must be >= 0");
    if (spec.calibration_batches < (spec.fit_length > 0 ? 1 : 0))
      throw Error("fitted noise policy: calibration_batches " + std::to_string(spec.calibration_batches) +
                  " must be >= 1 when fit_length is set (the fit comes from calibration only)");
  }
}

}  // namespace statescope
