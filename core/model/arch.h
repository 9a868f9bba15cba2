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
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/model/state_layout.h"

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
  // Attention layers beside the recurrent ones (a hybrid): attention_window restricts what they read.
  bool attention = false;

  // "" when a training-free intervention of `kind` applies to this architecture, else why not.
  std::string refuses_intervention(const std::string& kind, const std::string& title) const {
    if ((kind == "dt_scale") && !has_dt)
      return title + " has no dt (its decay is a data-dependent gate): dt_scale applies to architectures with a step size";
    if (kind == "longmamba" && !longmamba)
      return "LongMamba's token filtering is written for Mamba-1 and Mamba-2's selective scan; this model is " + title;
    if (kind == "a_scale" && !has_decay) return title + " has no decay rate for a_scale to rescale";
    if (kind == "attention_window" && !attention)
      return "attention_window restricts a hybrid's attention layers; " + title + " has none";
    return "";
  }
};

// The description `statescope-cli info` prints: "name value" pairs.
using Description = std::vector<std::pair<std::string, std::string>>;

struct PretrainShape;  // core/model/pretrain_shape.h
class RecurrentLM;     // core/model/recurrent_lm.h

// An architecture's names.
struct ArchNames {
  const char* key;              // results, specs, `forward`'s attributes, pretrain --arch
  const char* title;            // what people read
  const char* hf_model_type;    // Hugging Face config.json's model_type
  const char* mamba_ssm_layer;  // mamba_ssm's ssm_cfg.layer ("": not a mamba_ssm model)
  const char* hf_model_type_alt = "";  // a second model_type it answers to ("": none)
};

// What every architecture defines in its folder, declared once; inside its Arch<Config>:
//   from_pretrain (config.cpp): `pretrain`'s fields as this architecture's byte-level config (vocab
//     256, tied embeddings; validated by the caller); pretrain_flags: its own flags of the pretrain
//     command; layout (config.cpp): its state layout; describe (config.cpp): its own lines of
//     `info`'s description (describe(ModelConfig) puts the names, d_model and n_layer before them
//     and vocab_size after);
//   make (model.cpp): a fresh model (seed 0), CPU, float32.
// Beside them an Arch<Config> has `capabilities` (above), `names` and parse_hf (parse_mamba_ssm when
// mamba_ssm writes the architecture): the config.json dialects it answers to.
#define STATESCOPE_ARCH_FUNCTIONS(Config)                 \
  static Config from_pretrain(const PretrainShape& s);    \
  static std::string pretrain_flags(const PretrainShape& s); \
  static StateLayout layout(const Config& c);             \
  static Description describe(const Config& c);           \
  static RecurrentLM make(const Config& c)

// Specialised by each architecture in core/model/<arch>/arch.h (see above); never defined here.
template <class Config>
struct Arch;


}  // namespace statescope
