// split_pane.h — a view filled edge to edge by one splitter, whose panes the user resizes.
#pragma once
#include <QSplitter>
#include <QVBoxLayout>

namespace statescope::views {

inline QSplitter* split_pane(QWidget* view, Qt::Orientation orientation) {
  auto* lay = new QVBoxLayout(view);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* split = new QSplitter(orientation, view);
  lay->addWidget(split);
  return split;
}

}  // namespace statescope::views
