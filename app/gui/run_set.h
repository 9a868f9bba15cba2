// run_set.h — the runs the window shows, as a Qt item model: names, intervention and status, a
// colour each, check state (checked runs are drawn), the file each came from, and live updates
// while an experiment runs. The run list is a view of it; every plot draws runs() from it.
#pragma once
#include <QAbstractListModel>

#include "views/run_data.h"

namespace statescope::gui {

class RunSet : public QAbstractListModel {
  Q_OBJECT
 public:
  using QAbstractListModel::QAbstractListModel;

  const views::Runs& runs() const { return runs_; }
  int size() const { return static_cast<int>(runs_.size()); }

  // QAbstractListModel: display "name  [intervention]  status", the colour as decoration, the
  // file as tooltip, a check box (the only editable role).
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

  void reset(views::Runs runs);  // replaces every run; colours by position
  // Comparing experiments: prefix_names("a") renames the shown runs "a/<run>"; append(more, "b")
  // adds another file's runs as "b/<run>" ("b(2)/<run>" when taken), each keeping its own file.
  void prefix_names(const QString& stem);
  void append(views::Runs more, const QString& stem);

  // Live updates from a running experiment.
  int touch(const QString& name);                        // the run's row; a new run starts "running"
  void set_status(int row, const QString& status);       // "queued" until its first step, then "running"
  void add_train_step(int row, const StepInfo& s);       // its loss curve grows
  void replace(const views::RunData& r);                 // read back from the file: keeps colour and check

 signals:
  void checks_changed();  // a run was checked or unchecked: the views redraw

 private:
  int find(const QString& name) const;
  views::Runs runs_;
};

}  // namespace statescope::gui
