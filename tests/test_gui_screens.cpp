// test_gui_screens.cpp — the window's first start on small and large screens, and plots whose y
// range one run dominates. Qt's offscreen platform with two virtual screens side by side (a
// 1280x720 laptop at x = 0, a 1920x1080 monitor at x = 1280; written to a config file before the
// QApplication starts), so sizes are those of real screens without an X server.
#include <memory>
#include <gtest/gtest.h>

#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QListView>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QTabWidget>
#include <QTest>
#include <fstream>
#include <qcustomplot.h>

#include "app/gui/main_window.h"
#include "core/experiment/experiment.h"
#include "tests/scratch.h"
#include "views/line_views.h"
#include "views/plot_widget.h"
#include "views/robust_range.h"

using namespace statescope;

namespace {
QScreen* screen_named(const char* name) {
  for (QScreen* s : QGuiApplication::screens())
    if (s->name() == name) return s;
  ADD_FAILURE() << "no virtual screen '" << name << "'";
  return QGuiApplication::primaryScreen();
}

// The window's frame inside the screen's available area.
void expect_inside(const QWidget& w, const QScreen* s) {
  const QRect a = s->availableGeometry(), g = w.frameGeometry();
  EXPECT_TRUE(a.contains(g)) << "window " << g.x() << "," << g.y() << " " << g.width() << "x" << g.height()
                             << " not inside " << a.x() << "," << a.y() << " " << a.width() << "x" << a.height();
}

// Six runs (baseline and the five policies), two steps each, 64 positions: the demo's run list.
std::string six_run_file() {
  static const std::string out = [] {
    const std::string path = statescope::test::scratch("six_runs.h5");
    run_experiment(R"({"model": "embedded", "T": 32, "posttrain": {"steps": 2, "batch": 2},
        "policies": [{"kind": "zero"}, {"kind": "random", "sigma": 1.0}, {"kind": "fitted"}, {"kind": "passing"},
                     {"kind": "tbtt"}],
        "eval": {"length": 64, "sequences": 1, "segment": 32, "batch": 1}})",
                   "six runs", path);
    return path;
  }();
  return out;
}
// The window as on a first start (no saved settings), shown.
std::unique_ptr<gui::MainWindow> first_start() {
  QSettings().clear();
  auto w = std::make_unique<gui::MainWindow>();
  w->set_quiet(true);
  w->show();
  QTest::qWait(100);
  return w;
}

}  // namespace

TEST(Screens, FirstStartFitsA1280x720Screen) {
  const auto window = first_start();
  gui::MainWindow& w = *window;
  EXPECT_EQ(w.screen()->name(), "small");
  EXPECT_LE(w.minimumSizeHint().width(), 1280) << "the window cannot be made narrower than the screen";
  expect_inside(w, screen_named("small"));
  EXPECT_GE(w.width(), 1280 * 8 / 10) << "the first start uses most of the screen";
}

TEST(Screens, EveryToolbarControlIsWholeAndTheStatusReadsWholeAt1280) {
  // The first look on a laptop: every tab's plots side by side, every control of every toolbar at its
  // natural width inside its strip (wrapped onto another row where needed, never cut: "0 % smoot"),
  // no two overlapping; the status text whole ("finis").
  const std::string file = six_run_file();
  const auto window = first_start();
  gui::MainWindow& w = *window;
  ASSERT_EQ(w.screen()->name(), "small");
  ASSERT_TRUE(w.open_file(QString::fromStdString(file)));
  int checked = 0;
  for (int t = 0; t < w.tabs()->count(); ++t) {
    w.tabs()->setCurrentIndex(t);
    QTest::qWait(50);
    for (auto* pw : w.tabs()->widget(t)->findChildren<views::PlotWidget*>()) {
      if (!pw->isVisible()) continue;
      QWidget* strip = pw->toolbar_strip();
      std::vector<QRect> placed;
      for (QWidget* c : strip->findChildren<QWidget*>(Qt::FindDirectChildrenOnly)) {
        if (!c->isVisible()) continue;
        const QString what = w.tabs()->tabText(t) + " / " + pw->objectName() + " / " + c->metaObject()->className() +
                             " '" + c->property("text").toString() + "'";
        EXPECT_TRUE(strip->rect().contains(c->geometry())) << what.toStdString() << " outside its strip";
        EXPECT_GE(c->width(), c->sizeHint().width()) << what.toStdString() << " is cut";
        if (auto* combo = qobject_cast<QComboBox*>(c))  // its text whole, not only its (stale) size hint
          EXPECT_GE(c->width(), combo->fontMetrics().horizontalAdvance(combo->currentText()) + 20)
              << what.toStdString() << " '" << combo->currentText().toStdString() << "' is cut";
        for (const QRect& o : placed) EXPECT_FALSE(o.intersects(c->geometry())) << what.toStdString() << " overlaps";
        placed.push_back(c->geometry());
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
  auto* status = w.findChild<QLabel*>("status");
  ASSERT_NE(status, nullptr);
  status->setText("finished · written to ~/.local/share/statescope/experiments/experiment-20261206-182505.h5");
  QTest::qWait(50);
  EXPECT_GE(status->width(), status->fontMetrics().horizontalAdvance(status->text())) << "the status text is clipped";
}

TEST(Screens, RestoredGeometryLargerThanTheScreenIsClamped) {
  gui::MainWindow w;
  w.set_quiet(true);
  w.setGeometry(-300, -200, 3000, 1900);  // e.g. saved on a larger monitor that is gone now
  w.fit_to_screen(false);
  w.show();
  QTest::qWait(100);
  expect_inside(w, w.screen());
}

TEST(Screens, On1080pEveryRunOfTheDemoIsListedWithoutScrolling) {
  const std::string file = six_run_file();
  QScreen* hd = screen_named("hd");
  gui::MainWindow w;
  w.set_quiet(true);
  w.move(hd->geometry().topLeft() + QPoint(50, 50));
  w.fit_to_screen(true);
  w.show();
  QTest::qWait(100);
  ASSERT_TRUE(w.open_file(QString::fromStdString(file)));
  QTest::qWait(200);
  EXPECT_EQ(w.screen()->name(), "hd");
  expect_inside(w, hd);
  ASSERT_EQ(w.run_set()->rowCount(), 6);
  QListView* list = w.run_list();
  EXPECT_FALSE(list->verticalScrollBar()->isVisible()) << "the Runs list scrolls";
  for (int r = 0; r < 6; ++r)
    EXPECT_TRUE(list->viewport()->rect().contains(list->visualRect(w.run_set()->index(r))))
        << "run " << r << " is not fully visible";
  // The plots keep most of the width.
  EXPECT_GE(w.tabs()->width(), w.width() * 6 / 10);
}

TEST(Screens, RobustRangeLeavesOutTheRunThatDominatesAndNothingElse) {
  auto flat = [](double a, double b) {  // 100 points between a and b
    std::vector<double> y(100);
    for (int i = 0; i < 100; ++i) y[i] = a + (b - a) * i / 99.0;
    return y;
  };
  // Oracle 1: five runs near 2, one from 9 down to 4: that one is left out, the range is the others'.
  std::vector<std::vector<double>> s{flat(2.0, 2.6), flat(2.1, 2.5), flat(1.9, 2.7), flat(2.2, 2.4), flat(9.2, 4.0),
                                     flat(2.0, 2.3)};
  auto r = views::robust_y_range(s, false);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->excluded, std::vector<int>{4});
  EXPECT_DOUBLE_EQ(r->lo, 1.9);
  EXPECT_DOUBLE_EQ(r->hi, 2.7);
  // Oracle 2: runs spread evenly: nobody dominates, nothing is left out.
  EXPECT_FALSE(views::robust_y_range({flat(1, 2), flat(2, 3), flat(3, 4), flat(4, 5), flat(5, 6), flat(6, 7)}, false));
  // Two equal groups are two results, not outliers (at most a third may be left out).
  EXPECT_FALSE(views::robust_y_range({flat(1, 2), flat(1, 2), flat(1, 2), flat(9, 10), flat(9, 10), flat(9, 10)}, false));
  // One far below on a log axis (a run at 1e-4 among runs near 1).
  auto lr = views::robust_y_range({flat(0.8, 1.2), flat(0.9, 1.1), flat(1e-4, 2e-4)}, true);
  ASSERT_TRUE(lr.has_value());
  EXPECT_EQ(lr->excluded, std::vector<int>{2});
  EXPECT_NEAR(lr->lo, 0.8, 1e-12);
  // NaN and non-positive values (on log axes) are ignored, not fitted.
  EXPECT_FALSE(views::robust_y_range({{NAN, NAN}, {1.0, 2.0}}, false));
}

TEST(Screens, TrainingLossPlotFitsTheOthersAndTheOutlierStaysReachable) {
  views::LossView v;
  views::Runs runs;
  const char* names[] = {"baseline", "zero", "random", "fitted", "passing", "tbtt"};
  for (int k = 0; k < 6; ++k) {
    views::RunData r;
    r.name = names[k];
    r.color = Qt::red;
    for (int i = 0; i < 50; ++i) {
      StepInfo p;
      p.step = i + 1;
      p.loss = (k == 2 ? 6.0 - 3.0 * i / 49.0 : 1.5 + 0.1 * k) / 1.4426950408889634;  // bits = nats * log2(e)
      r.train.push_back(p);
    }
    runs.push_back(r);
  }
  v.set_runs(runs);
  ASSERT_TRUE(v.robust_y()) << "the loss view starts with the robust range";
  EXPECT_EQ(v.clipped_series(), QStringList{"random"});
  EXPECT_LT(v.plot()->yAxis->range().upper, 3.0) << "the others fill the plot";
  v.set_robust_y(false);  // every point again: the outlier is reachable
  EXPECT_TRUE(v.clipped_series().isEmpty());
  EXPECT_GE(v.plot()->yAxis->range().upper, 5.99);
  v.set_robust_y(true);
  v.plot()->yAxis->setRange(0, 100);  // the user zooms out...
  v.reset_view();                     // ...and "Reset view" brings the robust range back
  EXPECT_LT(v.plot()->yAxis->range().upper, 3.0);
}

int main(int argc, char** argv) {
  const std::string conf = statescope::test::scratch("screens.json");
  std::ofstream(conf) << R"({"screens": [
    {"name": "small", "x": 0, "y": 0, "width": 1280, "height": 720, "logicalDpi": 96},
    {"name": "hd", "x": 1280, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96}]})";
  qputenv("QT_QPA_PLATFORM", QByteArray("offscreen:configfile=") + conf.c_str());
  QApplication app(argc, argv);
  QApplication::setOrganizationName("statescope-tests-screens");  // QSettings apart from the user's
  QApplication::setApplicationName("statescope-tests-screens");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
