// unexplored_view.h — the unexplored-states detector: above, the fraction of each run's states
// outside the envelope of its own training states per position (mean over layers and heads, or one
// layer), or outside one envelope for every run (the loaded model's zero-state training states:
// "envelope" in the toolbar); below, the run's excess loss (against the one yardstick) over the
// same strides, so the two read side by side. The legend gives each run's rank correlation of the
// two. A marker at T on both.
#pragma once
#include <QWidget>

#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

class QComboBox;

namespace statescope::views {

class UnexploredView : public QWidget, public RunsView {
 public:
  explicit UnexploredView(QWidget* parent = nullptr);
  PlotWidget* outside_plot() const { return outside_; }
  PlotWidget* excess_plot() const { return excess_; }
  QComboBox* envelope_box() const { return envelope_; }  // 0: each run's own envelope, 1: the common one

 private:
  void show_runs() override;
  void redraw();
  PlotWidget *outside_, *excess_;
  QComboBox *layer_, *envelope_;
};

}  // namespace statescope::views
