// record.h — the evaluation's record: the run's ppl/ and state_norm/ groups (experiment_store.h
// lists their datasets), its `inspect` lines and report section. No LibTorch, no Qt.
#pragma once
#include "core/store/analysis_io.h"

namespace statescope {
// ppl/{position, nll, nll_stderr, nll_per_sequence, windowed_nll, windowed_nll_per_sequence, excess,
// excess_stderr}; state_norm/{position, layer, head, norm [layer, position], norm_per_head [layer,
// head, position], and a hybrid's model_layer [layer]}, attributes head_axis (what a 'head' counts) and a
// hybrid's layer_kinds; a hybrid's attention_stats/{position, layer (model layer), head, entropy and
// first_mass [layer, head, position]}, attributes first_tokens, T, layer_kinds.
STATESCOPE_ANALYSIS_RECORD(eval, EvalResult)
}  // namespace statescope
