// run_data.h — everything the views draw for one run, as plain result structs (no LibTorch).
// The app fills it from an experiment file or live from a worker thread.
#pragma once
#include <QColor>
#include <QString>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/results.h"
#include "views/theme.h"  // run_color

namespace statescope::views {

struct RunData {
  QString name, intervention, status, file;  // file: the experiment file it came from
  QColor color;
  bool checked = true;                       // overlaid in the views
  std::vector<StepInfo> train;               // training loss per step (may grow live)
  std::optional<EvalResult> eval;
  std::optional<EffRemResult> effrem;
  std::optional<StateStatsResult> states;
  std::optional<PasskeyResult> passkey;
  std::optional<CopyResult> copying;
  std::optional<BabiResult> babi;
  std::optional<UnexploredResult> unexplored;
  std::string sweep_group;                               // a sweep's run: its group (name without the seed)
  std::vector<std::pair<std::string, double>> sweep_cell;  // ... and its swept values (empty: no sweep)
};

using Runs = std::vector<RunData>;

}  // namespace statescope::views
