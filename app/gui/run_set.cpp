// run_set.cpp — the window's run model (see run_set.h).
#include "app/gui/run_set.h"

#include <QFileInfo>
#include <QPixmap>

namespace statescope::gui {

int RunSet::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : size(); }

QVariant RunSet::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= size()) return {};
  const views::RunData& r = runs_[index.row()];
  switch (role) {
    case Qt::DisplayRole:
      return QString("%1  [%2]%3").arg(r.name, r.intervention.isEmpty() ? "-" : r.intervention,
                                       r.status == "finished" ? "" : "  " + r.status);
    case Qt::DecorationRole: {
      QPixmap px(12, 12);
      px.fill(r.color);
      return px;
    }
    case Qt::CheckStateRole:
      return r.checked ? Qt::Checked : Qt::Unchecked;
    case Qt::ToolTipRole:  // the file, and the run's own name when it is shown under another
      if (r.file.isEmpty()) return {};
      return r.in_file.isEmpty() || r.name == r.in_file ? r.file : QString("%1\nrun '%2'").arg(r.file, r.in_file);
    default:
      return {};
  }
}

bool RunSet::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.row() >= size() || role != Qt::CheckStateRole) return false;
  const bool on = value.toInt() == Qt::Checked;
  if (runs_[index.row()].checked == on) return true;
  runs_[index.row()].checked = on;
  emit dataChanged(index, index, {Qt::CheckStateRole});
  emit checks_changed();
  return true;
}

Qt::ItemFlags RunSet::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

void RunSet::reset(views::Runs runs, const QString& file) {
  beginResetModel();
  runs_ = std::move(runs);
  files_ = QStringList{file};
  source_.assign(runs_.size(), 0);
  for (int i = 0; i < size(); ++i) runs_[i].color = views::run_color(i);
  endResetModel();
}

void RunSet::append(views::Runs more, const QString& file) {
  if (more.empty()) return;
  files_ << file;
  beginInsertRows({}, size(), size() + static_cast<int>(more.size()) - 1);
  for (auto& r : more) {
    r.color = views::run_color(size());
    runs_.push_back(std::move(r));
    source_.push_back(static_cast<int>(files_.size()) - 1);
  }
  endInsertRows();
  relabel();
}

void RunSet::set_display(int row, const QString& display) {
  runs_.at(row).display = display;
  relabel();
}

// Run `row`'s label were its display name `display`: its file's tag (with two or more files), then
// the display name, or its group's name.
QString RunSet::label(int row, const QStringList& tags, const QString& display) const {
  const auto& r = runs_[row];
  const QString base = !display.isEmpty() ? display : !r.in_file.isEmpty() ? r.in_file : r.name;
  return files_.size() > 1 ? tags[source_[row]] + "/" + base : base;
}

QString RunSet::shown_as(int row, const QString& display) const { return label(row, short_tags(files_), display); }

void RunSet::relabel() {
  const QStringList tags = short_tags(files_);
  for (int i = 0; i < size(); ++i) runs_[i].name = label(i, tags, runs_[i].display);
  if (size() > 0) emit dataChanged(index(0), index(size() - 1), {Qt::DisplayRole});
}

QStringList short_tags(const QStringList& files) {
  QStringList stems;
  for (const auto& f : files) stems << QFileInfo(f).completeBaseName();
  int cut = 0;  // the shared prefix, up to and including its last separator
  if (stems.size() > 1) {
    const QString& first = stems.front();
    int common = static_cast<int>(first.size());
    for (const auto& s : stems) {
      int k = 0;
      while (k < common && k < s.size() && s[k] == first[k]) ++k;
      common = k;
    }
    for (int k = 0; k < common; ++k)
      if (QString("-_. ").contains(first[k])) cut = k + 1;
    for (const auto& s : stems)
      if (s.size() <= cut) cut = 0;  // a name would vanish: keep every name whole
  }
  QStringList tags;
  for (const auto& s : stems) {
    QString t = s.mid(cut);
    if (t.isEmpty()) t = "(unnamed)";
    if (t.size() > 20) t = t.left(9) + QChar(0x2026) + t.right(10);
    QString u = t;
    for (int k = 2; tags.contains(u); ++k) u = QString("%1(%2)").arg(t).arg(k);
    tags << u;
  }
  return tags;
}

int RunSet::find(const QString& name) const {
  for (int i = 0; i < size(); ++i)
    if (runs_[i].name == name) return i;
  return -1;
}

int RunSet::touch(const QString& name) {
  if (const int i = find(name); i >= 0) return i;
  beginInsertRows({}, size(), size());
  views::RunData r;
  r.name = r.in_file = name;
  r.status = "running";
  r.color = views::run_color(size());
  runs_.push_back(r);
  source_.push_back(0);
  endInsertRows();
  return size() - 1;
}

void RunSet::set_status(int row, const QString& status) {
  if (runs_.at(row).status == status) return;
  runs_[row].status = status;
  emit dataChanged(index(row), index(row));
}

void RunSet::add_train_step(int row, const StepInfo& s) { runs_.at(row).train.push_back(s); }

void RunSet::replace(const views::RunData& r) {
  views::RunData copy = r;
  if (const int i = find(r.name); i >= 0) {
    copy.color = runs_[i].color;
    copy.checked = runs_[i].checked;
    runs_[i] = std::move(copy);
    emit dataChanged(index(i), index(i));
    return;
  }
  beginInsertRows({}, size(), size());
  copy.color = views::run_color(size());
  runs_.push_back(std::move(copy));
  source_.push_back(0);
  endInsertRows();
}

}  // namespace statescope::gui
