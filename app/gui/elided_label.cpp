// elided_label.cpp — see elided_label.h.
#include "app/gui/elided_label.h"

#include <QPainter>
#include <QStyle>

namespace statescope::gui {

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  setTextFormat(Qt::PlainText);
}

QSize ElidedLabel::minimumSizeHint() const {
  return {fontMetrics().averageCharWidth() * 20, QLabel::minimumSizeHint().height()};
}

bool ElidedLabel::elided() const { return fontMetrics().horizontalAdvance(text()) > contentsRect().width(); }

void ElidedLabel::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QRect r = contentsRect();
  p.setPen(palette().color(foregroundRole()));
  const QString shown = fontMetrics().elidedText(text(), Qt::ElideRight, r.width());
  p.drawText(r, Qt::AlignVCenter | Qt::AlignLeft, shown);
  const QString tip = shown == text() ? QString() : text();  // set when painted: setText is not virtual
  if (toolTip() != tip) setToolTip(tip);
}

}  // namespace statescope::gui
