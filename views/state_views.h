// state_views.h — state distributions (histogram of SSM state entries at a chosen layer, head and
// position for every checked run, each with its fitted Gaussian from T-1 dashed) and the state
// change per token ||S_t - S_{t-1}||; and the copying / bAbI tables with their accuracy plot.
#pragma once
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace statescope::views {

class StatesView : public QWidget, public RunsView {
 public:
  explicit StatesView(QWidget* parent = nullptr);
  PlotWidget* histogram() const { return hist_; }
  PlotWidget* change() const { return delta_; }
  QComboBox* position_box() const { return pos_; }

 private:
  void show_runs() override;
  void draw();
  PlotWidget *hist_, *delta_;
  QComboBox *layer_, *head_, *pos_;
  QLabel* head_label_ = nullptr;  // "head", or "channel group" for Mamba-1 runs
};

class TablesView : public QWidget, public RunsView {
 public:
  explicit TablesView(QWidget* parent = nullptr);
  QTableWidget* copying_table() const { return copy_; }
  QTableWidget* babi_table() const { return babi_; }
  PlotWidget* plot() const { return plot_; }

 private:
  void show_runs() override;
  QTableWidget *copy_, *babi_;
  PlotWidget* plot_;
};

}  // namespace statescope::views
