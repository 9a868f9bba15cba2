// step.h — effective attention as an experiment step (core/experiment/analysis_steps.h). LibTorch.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace statescope {

class RecurrentLM;
class ExperimentFile;
struct AnalysisContext;

// Runs the analysis on `model` with the spec section `opt` (options_attention's), writing run/attention.
void run_attention(RecurrentLM& model, const nlohmann::json& opt, const AnalysisContext& ctx, ExperimentFile& file,
                   const std::string& run);

}  // namespace statescope
