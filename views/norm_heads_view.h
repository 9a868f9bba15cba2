// norm_heads_view.h — the "State norm" tab: the per-position norm curves of every checked run
// (NormCurvesView) beside a colour map of one run's state norm per (layer, head) over log-spaced positions,
// as growth relative to position T-1 or absolute, to see which heads' states grow past T.
#pragma once
#include <QWidget>

#include "views/heatmap_view.h"
#include "views/line_views.h"
#include "views/runs_view.h"

namespace statescope::views {

class NormHeadsView : public HeatmapWidget, public RunsView {
 public:
  explicit NormHeadsView(QWidget* parent = nullptr);
  QComboBox* mode_box() const { return mode_; }

 private:
  void show_runs() override;
  void draw();
  QComboBox* mode_;  // relative to T-1 | absolute
};

class StateNormView : public QWidget, public RunsView {
 public:
  explicit StateNormView(QWidget* parent = nullptr);
  NormCurvesView* curves() const { return curves_; }
  NormHeadsView* heads() const { return heads_; }

 private:
  void show_runs() override;
  NormCurvesView* curves_;
  NormHeadsView* heads_;
};

}  // namespace statescope::views
