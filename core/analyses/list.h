// list.h — every analysis a spec can ask for ("analyses": {key: {...}}), in the order runs compute
// them and the report, `inspect` and the app's panel show them. Adding an analysis is its folder,
// core/analyses/<key>/, and its line here: the folder defines
//   AnalysisRecord record_<key>();  (record.cpp: the descriptor, core/store/analysis_record.h)
//   void run_<key>(...);            (step.cpp: the experiment step, core/experiment/analysis_steps.h)
// and the build fails to link when either is missing. The evaluation every run has (eval) is not
// listed: it is no choice of the spec.
#pragma once

#define STATESCOPE_ANALYSES(X) \
  X(effrem)                    \
  X(passkey)                   \
  X(copying)                   \
  X(babi)                      \
  X(unexplored)                \
  X(decay)                     \
  X(attention)                 \
  X(states)
