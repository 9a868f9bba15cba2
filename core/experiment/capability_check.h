// capability_check.h — a spec's interventions and analyses against what its model's architecture can
// do (core/model/arch.h: Capabilities), before anything runs: a GLA model with a dt_scale run or the
// attention analysis is refused at once, naming the run or analysis and why, instead of failing
// after the baseline was computed. No LibTorch.
#pragma once
#include <string>

#include "core/experiment/spec.h"
#include "core/model/model_config.h"

namespace statescope {

// "" when `config`'s architecture can compute the analysis `key` (core/analyses/list.h), else why
// not, naming the architecture (the app's panel disables the box with this reason).
std::string refuses_analysis(const ModelConfig& config, const std::string& key);
// The same for a training-free intervention of `kind` (Capabilities::refuses_intervention).
std::string refuses_intervention(const ModelConfig& config, const std::string& kind);

// Throws Error "<src>: ..." for the first intervention or analysis `config`'s architecture cannot take.
void check_capabilities(const ExperimentSpec& spec, const ModelConfig& config, const std::string& src);

}  // namespace statescope
