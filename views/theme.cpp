// theme.cpp — the colour tables (see theme.h).
#include "views/theme.h"

#include <QApplication>
#include <QStyle>

namespace statescope::views {
namespace {

Theme make_dark() {
  Theme t;
  t.dark = true;
  t.plot_background = QColor(37, 37, 38);
  t.plot_foreground = QColor(220, 220, 220);
  t.plot_grid = QColor(70, 70, 70);
  t.legend_background = QColor(45, 45, 48, 220);
  t.hidden_series_text = QColor(140, 140, 140);
  t.marker = QColor(128, 128, 128);
  t.hint = QColor(170, 170, 175);
  t.note = QColor(0xd9, 0xa4, 0x41);
  t.invalid_background = QColor(0xaa, 0x33, 0x33);
  t.invalid_text = Qt::white;
  t.valid_verdict = QColor(0x4c, 0xaf, 0x50);
  t.invalid_verdict = QColor(0xe0, 0x5a, 0x4f);
  return t;
}

Theme make_light() {
  Theme t = make_dark();
  t.dark = false;
  t.plot_background = Qt::white;
  t.plot_foreground = Qt::black;
  t.plot_grid = QColor(220, 220, 220);
  t.legend_background = QColor(255, 255, 255, 220);
  t.hint = QColor(110, 110, 115);
  return t;
}

}  // namespace

const Theme& theme(bool dark) {
  static const Theme d = make_dark(), l = make_light();
  return dark ? d : l;
}

QPalette Theme::palette() const {
  if (!dark) return qApp->style()->standardPalette();
  QPalette p;
  p.setColor(QPalette::Window, QColor(45, 45, 48));
  p.setColor(QPalette::WindowText, QColor(220, 220, 220));
  p.setColor(QPalette::Base, QColor(30, 30, 30));
  p.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
  p.setColor(QPalette::Text, QColor(220, 220, 220));
  p.setColor(QPalette::Button, QColor(55, 55, 60));
  p.setColor(QPalette::ButtonText, QColor(220, 220, 220));
  p.setColor(QPalette::Highlight, QColor(42, 130, 218));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::ToolTipBase, QColor(60, 60, 60));
  p.setColor(QPalette::ToolTipText, QColor(230, 230, 230));
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 120));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 120));
  p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(120, 120, 120));  // a disabled check box's label
  return p;
}

QColor run_color(int i) {
  static const QColor p[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44), QColor(214, 39, 40),
                             QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127),
                             QColor(188, 189, 34), QColor(23, 190, 207)};
  return p[((i % 10) + 10) % 10];
}

const QColor* heat_stops(int* count) {
  static const QColor stops[] = {QColor(68, 1, 84), QColor(59, 82, 139), QColor(33, 145, 140), QColor(94, 201, 98),
                                 QColor(253, 231, 37)};
  *count = 5;
  return stops;
}

}  // namespace statescope::views
