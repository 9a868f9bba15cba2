// empty_page.h — what a tab shows instead of empty axes: a plain page over the whole view saying why
// there is nothing to draw (nothing open yet, an analysis the experiment did not ask for, one the
// model's architecture cannot take, no training, no sweep), and, where it can, a button that adds
// the analysis to the experiment in the panel. It covers its view (a child raised over it, following
// its size), so the view and its plots stay what the window and the tests address.
#pragma once
#include <QFrame>
#include <functional>

class QLabel;
class QPushButton;

namespace statescope::gui {

class EmptyPage : public QFrame {
 public:
  explicit EmptyPage(QWidget* view);  // object name "empty_page"
  // Shown with `why` (hidden when it is ""); `add`: the button's text ("" : no button) and what it does.
  void show_reason(const QString& why, const QString& add = {}, std::function<void()> on_add = {});
  QString reason() const;
  QPushButton* add_button() const { return add_; }  // object name "add_analysis"

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QLabel* text_;
  QPushButton* add_;
  std::function<void()> on_add_;
};

}  // namespace statescope::gui
