// run_set.cpp — the window's run model (see run_set.h).
#include "app/gui/run_set.h"

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
    case Qt::ToolTipRole:
      return r.file.isEmpty() ? QVariant() : QVariant(r.file);
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

void RunSet::reset(views::Runs runs) {
  beginResetModel();
  runs_ = std::move(runs);
  for (int i = 0; i < size(); ++i) runs_[i].color = views::run_color(i);
  endResetModel();
}

void RunSet::prefix_names(const QString& stem) {
  for (auto& r : runs_) r.name = stem + "/" + r.name;
  if (size() > 0) emit dataChanged(index(0), index(size() - 1), {Qt::DisplayRole});
}

void RunSet::append(views::Runs more, const QString& stem) {
  if (more.empty()) return;
  beginInsertRows({}, size(), size() + static_cast<int>(more.size()) - 1);
  for (auto& r : more) {  // the same file added twice gets stem(2)/..., and so on
    QString name = stem + "/" + r.name;
    for (int k = 2; find(name) >= 0; ++k) name = QString("%1(%2)/%3").arg(stem).arg(k).arg(r.name);
    r.name = name;
    r.color = views::run_color(size());
    runs_.push_back(std::move(r));
  }
  endInsertRows();
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
  r.name = name;
  r.status = "running";
  r.color = views::run_color(size());
  runs_.push_back(r);
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
  endInsertRows();
}

}  // namespace statescope::gui
