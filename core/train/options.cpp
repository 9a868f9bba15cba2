// options.cpp — policy labels and checks (see options.h). No LibTorch.
#include "core/train/options.h"

#include <cmath>
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

void check_train_options(const TrainOptions& o) {
  // Named as the CLI flag and the spec field that set it (beta1 and beta2 have neither).
  auto bad = [](const std::string& knob, const std::string& rule, double v) {
    std::string flag = knob;
    for (char& c : flag)
      if (c == '_') c = '-';
    std::ostringstream s;
    s << "training option " << knob;
    if (knob != "beta1" && knob != "beta2")
      s << " (--" << flag << "; " << (knob == "T" ? "T" : "posttrain." + knob) << " in a spec)";
    s << " must be " << rule << ", got " << v;
    throw Error(s.str());
  };
  if (o.steps < 0 || o.steps > 1000000000) bad("steps", "in [0, 1e9]", static_cast<double>(o.steps));
  if (o.batch <= 0) bad("batch", "> 0", static_cast<double>(o.batch));
  if (o.T < 2) bad("T", ">= 2", static_cast<double>(o.T));
  // A stated limit before anything is sized by them: 2^24 tokens per step is ~500x the paper's
  // post-training batches (16 x 2048); a typo like batch 2e7 is refused here, not by the allocator.
  if (o.batch > kMaxTokensPerStep / o.T || o.T > kMaxTokensPerStep)
    bad("batch", "such that batch x T <= " + std::to_string(kMaxTokensPerStep) + " tokens per step (T = " +
                     std::to_string(o.T) + ")",
        static_cast<double>(o.batch));
  // Upper bounds: far beyond any useful value, low enough that the first step cannot overflow float32.
  if (!std::isfinite(o.lr) || !(o.lr > 0) || o.lr > 10) bad("lr", "in (0, 10]", o.lr);
  if (o.warmup < 0 || o.warmup > 1000000000) bad("warmup", "in [0, 1e9]", static_cast<double>(o.warmup));
  if (!(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1)) bad("min_lr_ratio", "in [0, 1]", o.min_lr_ratio);
  if (!std::isfinite(o.weight_decay) || o.weight_decay < 0 || o.weight_decay > 100)
    bad("weight_decay", "in [0, 100]", o.weight_decay);
  if (!std::isfinite(o.grad_clip) || o.grad_clip < 0 || o.grad_clip > 1e6)
    bad("grad_clip", "in [0, 1e6] (0: no clipping)", o.grad_clip);
  if (!(o.beta1 >= 0 && o.beta1 < 1)) bad("beta1", "in [0, 1)", o.beta1);
  if (!(o.beta2 >= 0 && o.beta2 < 1)) bad("beta2", "in [0, 1)", o.beta2);
}

void check_policy(const PolicySpec& spec) {
  if (spec.kind != "zero" && spec.kind != "random" && spec.kind != "fitted" && spec.kind != "passing" &&
      spec.kind != "tbtt")
    throw Error("unknown initial-state policy '" + spec.kind + "' (zero, random, fitted, passing, tbtt)");
  if (spec.kind == "random" && !(spec.sigma >= 0 && spec.sigma <= 1000))  // NaN and Inf fail too
    throw Error("random noise policy: sigma (--sigma; policies[].sigma in a spec) must be in [0, 1000], got " +
                std::to_string(spec.sigma));
  if (spec.kind == "fitted") {
    if (!(spec.ema >= 0 && spec.ema < 1)) throw Error("fitted noise policy: ema must be in [0, 1)");
    if (spec.fit_length < 0 || spec.fit_length > 1000000000)
      throw Error("fitted noise policy: fit_length " + std::to_string(spec.fit_length) +
                  " must be in [0, 1000000000] (0: the training windows' length)");
    if (spec.calibration_batches < (spec.fit_length > 0 ? 1 : 0))
      throw Error("fitted noise policy: calibration_batches " + std::to_string(spec.calibration_batches) +
                  " must be >= 1 when fit_length is set (the fit comes from calibration only)");
  }
}

}  // namespace statescope
