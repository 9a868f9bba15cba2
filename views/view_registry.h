// view_registry.h — the app's views, one tab each, in tab order, each saying which analyses
// (core/store/analysis_record.h keys; "train" and "sweep" for what every run carries) it draws. The
// window builds its tabs from this list; tests/test_gui.cpp checks that every registered analysis
// is drawn by some view. A new analysis's view is its class and a line here.
#pragma once
#include <QWidget>
#include <string>
#include <vector>

#include "views/runs_view.h"

namespace statescope::views {

struct ViewEntry {
  const char* title;               // the tab's title (translated with QObject::tr's context "views")
  std::vector<std::string> shows;  // analysis keys it draws
  QWidget* (*make)();              // a new view; the widget is also a RunsView
  // The group its tab sits in (the window's upper row of tabs, so that every tab fits at 1280 px),
  // translated like the title; a group's tabs keep their order in this list.
  const char* group;
};

const std::vector<ViewEntry>& view_registry();

// The RunsView side of a widget made by a ViewEntry.
RunsView* runs_view(QWidget* w);

}  // namespace statescope::views
