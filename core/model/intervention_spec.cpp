// intervention_spec.cpp — labels and knob checks of the training-free interventions. No LibTorch.
#include "core/model/intervention_spec.h"

#include <cmath>
#include <sstream>

#include "core/base/error.h"

namespace statescope {

std::string InterventionSpec::label() const {
  std::ostringstream s;
  auto factor_text = [&](std::ostringstream& o) {
    if (per == "model") o << "x" << factors[0];
    else o << "scaled per " << per;
  };
  if (kind == "dt_scale") {
    s << "dt ";
    factor_text(s);
    if (from_T) s << " past T";
    else if (from > 0) s << " from " << from;
  } else if (kind == "a_scale") {
    s << "A ";
    factor_text(s);
  } else if (kind == "clip") {
    s << "clip at " << margin << "x max norm within T";
  } else if (kind == "reset") {
    s << "reset every " << period;
  } else if (kind == "attention_window") {
    s << "attention window " << period;
  } else if (kind == "longmamba") {
    s << "LongMamba(global >= " << global_threshold << ")";
  } else {
    s << kind;
  }
  return s.str();
}

void check_intervention(const InterventionSpec& s) {
  auto bad = [&](const std::string& knob, const std::string& rule, double v) {
    std::ostringstream m;
    m << s.kind << " intervention: " << knob << " must be " << rule << ", got " << v;
    throw Error(m.str());
  };
  if (s.kind == "dt_scale" || s.kind == "a_scale") {
    if (s.per != "model" && s.per != "layer" && !(s.per == "head" && s.kind == "dt_scale"))
      throw Error(s.kind + " intervention: factors per '" + s.per + "' (model, layer" +
                  (s.kind == "dt_scale" ? ", head)" : "; A is rescaled per layer)"));
    if (s.factors.empty()) throw Error(s.kind + " intervention: factor is empty");
    for (double f : s.factors)
      if (!(std::isfinite(f) && f > 0 && f <= 1e6)) bad("factor", "in (0, 1e6]", f);
    if (s.per == "model" && s.factors.size() != 1)
      throw Error(s.kind + " intervention: one factor for the whole model, " + std::to_string(s.factors.size()) + " given");
    if (s.from < 0) bad("from", ">= 0 (or \"T\")", static_cast<double>(s.from));
  } else if (s.kind == "reset" || s.kind == "attention_window") {
    if (s.period < 1) bad("period", ">= 1", static_cast<double>(s.period));
  } else if (s.kind == "clip") {
    if (s.windows < 1 || s.windows > 100000) bad("windows", "in [1, 100000]", static_cast<double>(s.windows));
    if (!(std::isfinite(s.margin) && s.margin > 0 && s.margin <= 1e6)) bad("margin", "in (0, 1e6]", s.margin);
  } else if (s.kind == "longmamba") {
    if (s.windows < 1 || s.windows > 100000) bad("windows", "in [1, 100000]", static_cast<double>(s.windows));
    if (!(s.global_threshold > 0 && s.global_threshold < 1)) bad("global_threshold", "in (0, 1)", s.global_threshold);
    if (!(s.clamp_top >= 0 && s.clamp_top < 1)) bad("clamp_top", "in [0, 1)", s.clamp_top);
    // Calibration interpolates `length` values per channel (8 bytes each): bounded before it allocates.
    if (s.length < 0 || s.length > kMaxLongMambaLength)
      bad("length", "in [0, " + std::to_string(kMaxLongMambaLength) + "] (0: the evaluation's length)", static_cast<double>(s.length));
  } else {
    throw Error("unknown intervention '" + s.kind + "' (dt_scale, a_scale, clip, reset, attention_window, longmamba)");
  }
}

}  // namespace statescope
