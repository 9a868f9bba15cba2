// record.h — Effective Remembrance's record: the run's effrem/ group, its `inspect` lines and report
// section. No LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// effrem/{T, t, value [T, t], stderr [T, t]}; attributes sequences, forward_tokens.
void write_effrem(ExperimentFile& file, const std::string& run, const EffRemResult& r);
EffRemResult read_effrem(const H5File& f, const std::string& run);
std::string report_effrem(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& effrem_record();

}  // namespace statescope
