// attention_view.h — the "Effective attention" tab: how far back each run's heads read, as the mean
// |M| per distance for every checked run (left, log distance), beside one run's and one head's
// matrix M[t, s] over positions (right; |M| on a log colour scale), so a run after state passing
// reads beside the run before it on the same bytes.
#pragma once
#include <QWidget>

#include "views/heatmap_view.h"
#include "views/runs_view.h"

class QComboBox;

namespace statescope::views {

class AttentionView : public QWidget, public RunsView {
  Q_OBJECT
 public:
  explicit AttentionView(QWidget* parent = nullptr);
  void set_runs(const Runs& runs) override;
  PlotWidget* curves() const { return curves_; }
  HeatmapWidget* matrix() const { return map_; }
  QComboBox* head_box() const { return head_; }
  // What the map's cell (t, s) says, in the map's read-out and the status bar: both positions with
  // the bytes around them (ids for a tokenizer beyond bytes) and |M| there. Called on mouse moves.
  QString describe_cell(int64_t t, int64_t s);

 private:
  void draw_curves();
  void draw_map();
  PlotWidget* curves_;
  HeatmapWidget* map_;
  QComboBox* head_;  // "mean over heads" or one head (the curves); the map shows one head
  Runs runs_;
};

}  // namespace statescope::views
