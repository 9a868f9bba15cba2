// arch.h — what an architecture registers, and what the rest of the program may ask of it.
//
// An architecture is one folder, core/model/<arch>/: its config (config.{h,cpp}: fields, config.json
// in both dialects, validation, the state layout), its model (model.{h,cpp}, LibTorch) and its
// registration, arch.h, which specialises Arch<Config> below with its names, the config.json
// dialects it answers to, its layout and description, its capabilities, its factory and its
// reading of `pretrain`'s fields (core/model/pretrain_shape.h). Registering
// it is one line in core/model/architectures.h (the ModelConfig variant). The primary template is
// declared, never defined: an alternative of ModelConfig without its arch.h fails to compile, and
// one whose model.cpp does not define Arch<Config>::make fails to link. Callers ask a capability,
// never the type (no dynamic_cast to an architecture's class outside its folder). No LibTorch.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace statescope {

// What an architecture's layers can do, for the analyses and interventions that need more than
// forward(): asked before a run starts, so a spec or a panel option it cannot take is refused (or
// disabled) up front rather than failing after the baseline was computed.
struct Capabilities {
  // Effective attention M[t, s] (analyses/attention): the scan is h_t = exp(dt_t A) h_{t-1} + dt_t
  // B_t x_t, y_t = C_t h_t, its terms readable per layer (RecurrentLMImpl::scan_terms).
  bool effective_attention = false;
  // A per-token step size dt the scan multiplies: dt_scale rescales it, LongMamba filters it.
  bool has_dt = false;
  // A learned decay rate (A, or GLA's gate) a_scale rescales.
  bool has_decay = true;
  // LongMamba's token filtering (calibrated on the scan's dt and A, as its code does for Mamba).
  bool longmamba = false;
  // Pretraining takes an A range (a_min, a_max) for its A initialisation.
  bool a_range = false;
  // A_log exists and may be frozen in training.
  bool freezable_A = false;

  // "" when a training-free intervention of `kind` applies to this architecture, else why not.
  std::string refuses_intervention(const std::string& kind, const std::string& title) const {
    if ((kind == "dt_scale") && !has_dt)
      return title + " has no dt (its decay is a data-dependent gate): dt_scale applies to architectures with a step size";
    if (kind == "longmamba" && !longmamba)
      return "LongMamba's token filtering is written for Mamba-1 and Mamba-2's selective scan; this model is " + title;
    if (kind == "a_scale" && !has_decay) return title + " has no decay rate for a_scale to rescale";
    return "";
  }
};

struct PretrainShape;  // core/model/pretrain_shape.h

// Specialised by each architecture in core/model/<arch>/arch.h (see above); never defined here.
template <class Config>
struct Arch;

// The description `statescope-cli info` prints: "name value" pairs.
using Description = std::vector<std::pair<std::string, std::string>>;

}  // namespace statescope
