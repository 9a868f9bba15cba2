// line_views.h — the line plots: training loss per step, per-position loss with a marker at T
// (log x), and the SSM state norm per position with layer and head selectors. Each overlays the
// checked runs.
#pragma once
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

class QComboBox;

namespace statescope::views {

class LossView : public PlotWidget, public RunsView {
 public:
  explicit LossView(QWidget* parent = nullptr);

 private:
  void show_runs() override;
};

class PositionLossView : public PlotWidget, public RunsView {
 public:
  explicit PositionLossView(QWidget* parent = nullptr);

 private:
  void show_runs() override;
  QComboBox* what_;  // loss | excess over the windowed reference
};

class NormCurvesView : public PlotWidget, public RunsView {
 public:
  explicit NormCurvesView(QWidget* parent = nullptr);
  QComboBox* layer_box() const { return layer_; }
  QComboBox* head_box() const { return head_; }

 private:
  void show_runs() override;
  void redraw();
  QComboBox *layer_, *head_;
};

}  // namespace statescope::views
