// record.h — Passkey retrieval's record: the run's passkey/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// passkey/{length, depth, accuracy [length, depth], digit_accuracy [length, depth]}; attribute samples.
void write_passkey(ExperimentFile& file, const std::string& run, const PasskeyResult& r);
PasskeyResult read_passkey(const H5File& f, const std::string& run);
std::string report_passkey(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& passkey_record();

}  // namespace statescope
