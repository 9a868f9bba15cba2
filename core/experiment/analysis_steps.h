// analysis_steps.h — how an experiment run computes a registered analysis whose spec section its
// record checks (analysis_record.h: options; AnalysesSpec::more): one step per such analysis, found
// by key. The first seven analyses run from run_analyses' typed code (analyses.cpp). LibTorch
// inside only.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace statescope {

class RecurrentLM;
class ExperimentFile;
struct AnalysisContext;

struct AnalysisStep {
  std::string key;  // the analysis's key (analysis_record.h)
  void (*run)(RecurrentLM& model, const nlohmann::json& options, const AnalysisContext& ctx, ExperimentFile& file,
              const std::string& run);
};

const std::vector<AnalysisStep>& analysis_steps();
const AnalysisStep* find_analysis_step(const std::string& key);

}  // namespace statescope
