// elided_label.h — a one-line label for the status bar: it asks for its whole text's width, so a
// short message ("finished · written to ~/x.h5") is never clipped, and when the window is too
// narrow for a long one it ends in "…" with the whole text as its tooltip (never cut mid-word, never
// widening the window).
#pragma once
#include <QLabel>

namespace statescope::gui {

class ElidedLabel : public QLabel {
 public:
  explicit ElidedLabel(QWidget* parent = nullptr);
  QSize minimumSizeHint() const override;  // room for about 20 characters
  bool elided() const;                     // the text does not fit and is shown shortened

 protected:
  void paintEvent(QPaintEvent* e) override;
};

}  // namespace statescope::gui
