// runs_table_view.h — the Runs table: the headline of an experiment on one tab. One row per run of
// every open file: loss within T, the excess per position bin past T (± its standard error) against
// the run's yardstick (the experiment's one yardstick where the file has it), the state-norm growth
// (far / at T-1) and the far loss's difference from its model's baseline (in its file; an experiment of
// several models has one baseline each); the seeds of one setting
// folded under a row of their mean ± 95% interval (Student t). Sortable by any column; selecting rows
// highlights those runs in every plot (the window's `selected` callback).
#pragma once
#include <QWidget>
#include <functional>

#include "views/run_data.h"
#include "views/runs_view.h"

class QTreeWidget;
class QLabel;

namespace statescope::views {

class RunsTableView : public QWidget, public RunsView {
 public:
  explicit RunsTableView(QWidget* parent = nullptr);
  QTreeWidget* tree() const { return tree_; }
  // Called with the selected runs' names (a seed group's row selects its seeds); empty: none.
  std::function<void(const QStringList&)> selected;
  // The command that reproduces the run shown as `name` (reproduce_command; its row's context menu
  // copies it); "" for a run without a file.
  QString command_of(const QString& name) const;
  // Called with a run's shown name when its row's context menu asks to rename it (unset: no such item).
  std::function<void(const QString&)> rename;

 private:
  void show_runs() override;
  QTreeWidget* tree_;
  QLabel* note_;
};

// The shell command that runs `r` again alone from its file (statescope-cli run --from FILE --only
// NAME, core/experiment/experiment.h) at the intra-op thread count it ran with (its versions' "threads
// N"), writing <file stem>-<run>.h5 here: the same numbers as in the file. "" without a file.
QString reproduce_command(const RunData& r);

// The two-sided 95% Student t quantile for `dof` degrees of freedom (1..30 tabulated, 1.96 beyond).
double t95(int dof);

}  // namespace statescope::views
