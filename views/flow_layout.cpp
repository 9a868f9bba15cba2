// flow_layout.cpp — see flow_layout.h.
#include "views/flow_layout.h"

#include <QComboBox>
#include <QWidget>
#include <algorithm>

namespace statescope::views {

namespace {

// A selector filled after the window first showed (a file opened later) keeps the width of its
// first, empty, contents unless it follows them: "all (mear".
void follow_contents(QWidget* w) {
  if (auto* combo = qobject_cast<QComboBox*>(w)) combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
}

}  // namespace

FlowLayout::FlowLayout(QWidget* parent, int hspacing, int vspacing)
    : QLayout(parent), hspacing_(hspacing), vspacing_(vspacing) {
  setContentsMargins(0, 0, 0, 0);
}

FlowLayout::~FlowLayout() {
  while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addItem(QLayoutItem* item) {
  follow_contents(item->widget());
  items_.append(item);
}

void FlowLayout::insertWidget(int index, QWidget* w) {
  follow_contents(w);
  addChildWidget(w);
  auto* item = new QWidgetItem(w);
  if (index < 0 || index > items_.size()) items_.append(item);
  else items_.insert(index, item);
  invalidate();
}

QLayoutItem* FlowLayout::itemAt(int index) const {
  return index >= 0 && index < items_.size() ? items_.at(index) : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index) {
  return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr;
}

int FlowLayout::heightForWidth(int width) const { return place(QRect(0, 0, width, 0), false); }

QSize FlowLayout::minimumSize() const {
  // As narrow as the widest single control: everything else wraps.
  QSize s;
  for (const QLayoutItem* item : items_)
    if (!item->isEmpty()) s = s.expandedTo(item->minimumSize());
  const QMargins m = contentsMargins();
  return s + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const {
  // One row: every control side by side.
  int w = 0, h = 0, n = 0;
  for (const QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    w += item->sizeHint().width() + (n++ ? hspacing_ : 0);
    h = std::max(h, item->sizeHint().height());
  }
  const QMargins m = contentsMargins();
  return {w + m.left() + m.right(), h + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
  QLayout::setGeometry(rect);
  place(rect, true);
}

int FlowLayout::place(const QRect& rect, bool apply) const {
  const QRect r = rect.marginsRemoved(contentsMargins());
  // Rows first (their height is the tallest item's), then place each row centred on its line.
  std::vector<std::vector<QLayoutItem*>> rows(1);
  int x = 0;
  for (QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    const int w = item->sizeHint().width();
    if (!rows.back().empty() && x + w > r.width()) {
      rows.emplace_back();
      x = 0;
    }
    rows.back().push_back(item);
    x += w + hspacing_;
  }
  if (rows.back().empty()) rows.pop_back();
  rows_ = static_cast<int>(rows.size());
  int y = r.y();
  for (const auto& row : rows) {
    int h = 0;
    for (const QLayoutItem* item : row) h = std::max(h, item->sizeHint().height());
    int xi = r.x();
    for (QLayoutItem* item : row) {
      const QSize s = item->sizeHint();
      const int w = std::min(s.width(), r.width());  // a control wider than the strip is the only thing on its row
      if (apply) item->setGeometry(QRect(xi, y + (h - s.height()) / 2, w, s.height()));
      xi += w + hspacing_;
    }
    y += h + vspacing_;
  }
  const QMargins m = contentsMargins();
  return (rows.empty() ? 0 : y - vspacing_ - r.y()) + m.top() + m.bottom();
}

}  // namespace statescope::views
