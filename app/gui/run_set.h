// run_set.h — the runs the window shows, as a Qt item model: names, intervention and status, a
// colour each, check state (checked runs are drawn), the file each came from, and live updates
// while an experiment runs. The run list is a view of it; every plot draws runs() from it.
#pragma once
#include <QAbstractListModel>
#include <QStringList>
#include <vector>

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

  // Replaces every run (those of `file`, or a live run's); colours by position.
  void reset(views::Runs runs, const QString& file = {});
  // Comparing experiments: adds another file's runs. With two or more files each run is shown as
  // "<tag>/<display name or group>", the tag the file's name made short (short_tags) and the same
  // for every run of one file; each run keeps its own file.
  void append(views::Runs more, const QString& file);
  // A run's display name ("" = its group's name): the label changes, nothing else.
  void set_display(int row, const QString& display);
  int find(const QString& name) const;  // the row shown as `name`, -1 if none
  // The name run `row` would be shown as with this display name (its file's tag kept).
  QString shown_as(int row, const QString& display) const;
  int files() const { return static_cast<int>(files_.size()); }  // the files whose runs are shown

  // Live updates from a running experiment.
  int touch(const QString& name);                        // the run's row; a new run starts "running"
  void set_status(int row, const QString& status);       // "queued" until its first step, then "running"
  void add_train_step(int row, const StepInfo& s);       // its loss curve grows
  void replace(const views::RunData& r);                 // read back from the file: keeps colour and check

 signals:
  void checks_changed();  // a run was checked or unchecked: the views redraw

 private:
  void relabel();
  QString label(int row, const QStringList& tags, const QString& display) const;
  views::Runs runs_;
  QStringList files_;        // the files shown, in the order opened (the same file twice: twice)
  std::vector<int> source_;  // per run: its index in files_
};

// Short labels for files compared side by side: their names without the folder and extension,
// then without the longest prefix that all share up to a '-', '_', '.' or ' ' (two timestamped
// experiment-20261206-182505.h5 files become "182505" and "190102"), a long one elided in the
// middle, a repeated one followed by "(2)", "(3)".
QStringList short_tags(const QStringList& files);

}  // namespace statescope::gui
