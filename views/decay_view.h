// decay_view.h — decay timescales (core/analyses/decay/result.h): per run, the memory-length
// distribution within T (solid) and far past it (dashed) on a log axis, for all groups pooled or
// one layer.
#pragma once
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

class QComboBox;

namespace statescope::views {

class DecayView : public PlotWidget, public RunsView {
 public:
  explicit DecayView(QWidget* parent = nullptr);

 private:
  void show_runs() override;
  QComboBox* layer_;  // "all layers" or one layer
};

}  // namespace statescope::views
