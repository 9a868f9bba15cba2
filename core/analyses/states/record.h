// record.h — state statistics' record: the run's state_stats/ group, its `inspect` lines and report
// section. No LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// state_stats/{position, layer, head, bin_edges, histogram [layer, position, head, bin], mean, std
// [layer, position, head], fitted_mean, fitted_std [layer, head], delta_position, delta_norm
// [n_layer, position]}; attributes T, sequences.
void write_state_stats(ExperimentFile& file, const std::string& run, const StateStatsResult& r);
StateStatsResult read_state_stats(const H5File& f, const std::string& run);
std::string report_state_stats(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& state_stats_record();

}  // namespace statescope
