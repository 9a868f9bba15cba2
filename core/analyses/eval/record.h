// record.h — the evaluation's record: the run's ppl/ and state_norm/ groups (experiment_store.h
// lists their datasets), its `inspect` lines and report section. No LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

namespace statescope {

// ppl/{position, nll, nll_stderr, nll_per_sequence, windowed_nll, windowed_nll_per_sequence, excess,
// excess_stderr}; state_norm/{position, layer, head, norm [layer, position], norm_per_head [layer,
// head, position]}, attribute head_axis (what a 'head' counts).
void write_eval(ExperimentFile& file, const std::string& run, const EvalResult& r);
EvalResult read_eval(const H5File& f, const std::string& run);
std::string report_eval(const std::vector<RunRecord>& runs, const ReportContext& ctx);
const AnalysisRecord& eval_record();

}  // namespace statescope
