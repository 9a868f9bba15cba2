// flow_layout.h — a toolbar layout that wraps: its widgets keep their natural width and go on as many
// rows as the width needs, so no control is ever cut ("0 % smoot", "colour ra") when two plots share
// a narrow window. Hidden widgets take no room. Rows are left-aligned, items vertically centred.
#pragma once
#include <QLayout>
#include <QList>

namespace statescope::views {

class FlowLayout : public QLayout {
 public:
  explicit FlowLayout(QWidget* parent = nullptr, int hspacing = 6, int vspacing = 4);
  ~FlowLayout() override;

  void insertWidget(int index, QWidget* w);  // as QBoxLayout::insertWidget; index < 0 appends
  int rows() const { return rows_; }         // rows used by the last layout pass

  void addItem(QLayoutItem* item) override;
  int count() const override { return static_cast<int>(items_.size()); }
  QLayoutItem* itemAt(int index) const override;
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override { return {}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;
  QSize sizeHint() const override;
  void setGeometry(const QRect& rect) override;

 private:
  int place(const QRect& rect, bool apply) const;  // lays out (or measures); returns the height used
  QList<QLayoutItem*> items_;
  int hspacing_, vspacing_;
  mutable int rows_ = 0;
};

}  // namespace statescope::views
