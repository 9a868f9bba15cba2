// record.h — Synthetic copying's record: the run's copying/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// copying/{length, exact, token_accuracy, exact_passed, token_accuracy_passed}; attributes L, alphabet, T, samples, conv_passed.
void write_copying(ExperimentFile& file, const std::string& run, const CopyResult& r);
CopyResult read_copying(const H5File& f, const std::string& run);
std::string report_copying(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& copying_record();

}  // namespace statescope
