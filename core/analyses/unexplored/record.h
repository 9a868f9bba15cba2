// record.h — the unexplored-states detector's record: the run's unexplored/ group, its `inspect`
// lines and report section. No LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// unexplored/{position, outside [position, layer, head], outside_mean, outside_seq [sequence,
// position], excess, heldout_outside, threshold [layer, head], excess_rho [3], quantile [1]}.
void write_unexplored(ExperimentFile& file, const std::string& run, const UnexploredResult& r);
UnexploredResult read_unexplored(const H5File& f, const std::string& run);
std::string report_unexplored(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& unexplored_record();

}  // namespace statescope
