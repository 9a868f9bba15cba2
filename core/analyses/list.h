// list.h — every analysis a spec can ask for ("analyses": {key: {...}}), in the order runs compute
// them and the report, `inspect` and the app's panel show them. Adding an analysis is its folder,
// core/analyses/<key>/, and its line here, X(key, ResultType), with the include of its result.h
// (a plain struct, no LibTorch): RunResults gets the slot `key` of that type
// (core/store/run_results.h), and the folder defines
//   AnalysisRecord record_<key>();  (record.cpp: the descriptor, core/store/analysis_record.h)
//   void run_<key>(...);            (step.cpp: the experiment step, core/experiment/analysis_steps.h)
// and the build fails to link when either is missing. The evaluation every run has (eval) is not
// listed: it is no choice of the spec.
#pragma once
#include "core/analyses/attention/result.h"
#include "core/analyses/decay/result.h"
#include "core/base/results.h"  // the older analyses' results, shared with the layers below

#define STATESCOPE_ANALYSES(X)        \
  X(effrem, EffRemResult)             \
  X(passkey, PasskeyResult)           \
  X(copying, CopyResult)              \
  X(babi, BabiResult)                 \
  X(unexplored, UnexploredResult)     \
  X(decay, DecayResult)               \
  X(attention, AttentionResult)       \
  X(states, StateStatsResult)
