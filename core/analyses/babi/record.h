// record.h — bAbI-style questions's record: the run's babi/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// babi/{length, accuracy, choice_accuracy, last_mentioned_accuracy, mean_distance}; attributes samples, candidates.
void write_babi(ExperimentFile& file, const std::string& run, const BabiResult& r);
BabiResult read_babi(const H5File& f, const std::string& run);
std::string report_babi(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& babi_record();

}  // namespace statescope
