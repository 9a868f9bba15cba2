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
  Q_OBJECT
 public:
  explicit LossView(QWidget* parent = nullptr);
  void set_runs(const Runs& runs) override;
};

class PositionLossView : public PlotWidget, public RunsView {
  Q_OBJECT
 public:
  explicit PositionLossView(QWidget* parent = nullptr);
  void set_runs(const Runs& runs) override;

 private:
  QComboBox* what_;  // loss | excess over the windowed reference
  Runs runs_;
};

class NormCurvesView : public PlotWidget, public RunsView {
  Q_OBJECT
 public:
  explicit NormCurvesView(QWidget* parent = nullptr);
  void set_runs(const Runs& runs) override;
  QComboBox* layer_box() const { return layer_; }
  QComboBox* head_box() const { return head_; }

 private:
  void redraw();
  QComboBox *layer_, *head_;
  Runs runs_;
};

}  // namespace statescope::views
