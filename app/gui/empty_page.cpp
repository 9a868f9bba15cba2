// empty_page.cpp — the page over a view with nothing to draw (see empty_page.h).
#include "app/gui/empty_page.h"

#include <QEvent>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace statescope::gui {

EmptyPage::EmptyPage(QWidget* view) : QFrame(view), text_(new QLabel(this)), add_(new QPushButton(this)) {
  setObjectName("empty_page");
  setAutoFillBackground(true);  // nothing of the view shows through
  text_->setObjectName("empty_reason");
  text_->setAlignment(Qt::AlignCenter);
  text_->setWordWrap(true);
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  add_->setObjectName("add_analysis");
  connect(add_, &QPushButton::clicked, this, [this] {
    const auto f = on_add_;  // a copy: what it does may show another reason, replacing on_add_
    if (f) f();
  });
  auto* lay = new QVBoxLayout(this);
  lay->addStretch(1);
  lay->addWidget(text_);
  lay->addWidget(add_, 0, Qt::AlignHCenter);
  lay->addStretch(2);
  view->installEventFilter(this);
  setGeometry(view->rect());
  hide();
}

void EmptyPage::show_reason(const QString& why, const QString& add, std::function<void()> on_add) {
  text_->setText(why);
  add_->setText(add);
  add_->setVisible(!add.isEmpty());
  on_add_ = std::move(on_add);
  setGeometry(parentWidget()->rect());
  setVisible(!why.isEmpty());
  if (!why.isEmpty()) raise();
}

QString EmptyPage::reason() const { return isHidden() ? QString() : text_->text(); }

bool EmptyPage::eventFilter(QObject* watched, QEvent* event) {
  if (watched == parentWidget() && (event->type() == QEvent::Resize || event->type() == QEvent::ChildAdded)) {
    setGeometry(parentWidget()->rect());
    if (!isHidden()) raise();  // over children the view adds later
  }
  return QFrame::eventFilter(watched, event);
}

}  // namespace statescope::gui
