// heatmap_view.h — colour maps: Effective Remembrance over (T, t) and the passkey accuracy grid
// over (length, depth), one selected run at a time, with a colour scale whose range is settable
// and can be logarithmic. The EffRem view also draws EffRem_T(t) curves for every checked run.
#pragma once
#include <functional>

#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

class QComboBox;
class QDoubleSpinBox;
class QCPColorMap;
class QCPColorScale;

namespace statescope::views {

class HeatmapWidget : public PlotWidget {
  Q_OBJECT
 public:
  explicit HeatmapWidget(const QString& title, QWidget* parent = nullptr);
  // values [ny, nx] row-major; x and y are cell centres (plotted on log axes when asked); y_names,
  // when given, label the rows instead of the y values (e.g. "L0 H3").
  void set_map(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& values,
               bool log_x, bool log_y, const QString& xlabel, const QString& ylabel, const QString& zlabel,
               const QStringList& y_names = {});
  void clear_map();
  QComboBox* run_box() const { return run_; }
  QCPColorMap* color_map() const { return map_; }
  void set_range(double lo, double hi);
  void set_log_colour(bool on);  // the "log colour" box
  // Whether the cells' values are drawn (small grids whose cells are wide enough for them).
  bool cell_values_shown() const;
  // The run selector lists the runs that have what the map shows; the selection survives a refill
  // (signals blocked: the caller draws).
  void fill_run_box(const Runs& runs, const std::function<bool(const RunData&)>& has);

 signals:
  void run_selected(const QString& name);

 protected:
  QComboBox* run_;

 private:
  void apply_range();
  void fit_cell_texts();  // the values in the cells only where each cell is wide enough for its text
  QCPColorMap* map_ = nullptr;
  QCPColorScale* scale_ = nullptr;
  QList<QCPItemText*> cell_texts_;
  int cells_x_ = 0;
  QDoubleSpinBox *lo_, *hi_;
  class QCheckBox* logz_;
};

}  // namespace statescope::views
