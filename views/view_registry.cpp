// view_registry.cpp — the list of views (view_registry.h).
#include "views/view_registry.h"

#include "views/attention_view.h"
#include "views/line_views.h"
#include "views/runs_table_view.h"

namespace statescope::views {

// The views private to their .cpp (a class the window never names) are made by their new_<view>().
QWidget* new_state_norm_view();
QWidget* new_effrem_view();
QWidget* new_passkey_view();
QWidget* new_states_view();
QWidget* new_unexplored_view();
QWidget* new_sweep_view();
QWidget* new_tables_view();
QWidget* new_decay_view();

namespace {
template <class V>
QWidget* make() {
  return new V;
}
}  // namespace

const std::vector<ViewEntry>& view_registry() {
  static const std::vector<ViewEntry> all{
      {QT_TRANSLATE_NOOP("views", "Runs"), {"eval"}, make<RunsTableView>, QT_TRANSLATE_NOOP("views", "Runs")},  // the headline, shown first
      {QT_TRANSLATE_NOOP("views", "Training loss"), {"train"}, make<LossView>, QT_TRANSLATE_NOOP("views", "Loss")},
      {QT_TRANSLATE_NOOP("views", "Per-position loss"), {"eval"}, make<PositionLossView>, QT_TRANSLATE_NOOP("views", "Loss")},
      {QT_TRANSLATE_NOOP("views", "State norm"), {"eval"}, new_state_norm_view, QT_TRANSLATE_NOOP("views", "States")},  // curves + per-head map
      {QT_TRANSLATE_NOOP("views", "EffRem"), {"effrem"}, new_effrem_view, QT_TRANSLATE_NOOP("views", "Memory")},
      {QT_TRANSLATE_NOOP("views", "Passkey"), {"passkey"}, new_passkey_view, QT_TRANSLATE_NOOP("views", "Tasks")},
      {QT_TRANSLATE_NOOP("views", "State histograms"), {"states"}, new_states_view, QT_TRANSLATE_NOOP("views", "States")},
      {QT_TRANSLATE_NOOP("views", "Unexplored states"), {"unexplored"}, new_unexplored_view, QT_TRANSLATE_NOOP("views", "States")},
      {QT_TRANSLATE_NOOP("views", "Sweep"), {"sweep"}, new_sweep_view, QT_TRANSLATE_NOOP("views", "Sweep")},
      {QT_TRANSLATE_NOOP("views", "Copying && bAbI"), {"copying", "babi"}, new_tables_view, QT_TRANSLATE_NOOP("views", "Tasks")},
      {QT_TRANSLATE_NOOP("views", "Decay timescales"), {"decay"}, new_decay_view, QT_TRANSLATE_NOOP("views", "States")},
      {QT_TRANSLATE_NOOP("views", "Effective attention"), {"attention"}, make<AttentionView>, QT_TRANSLATE_NOOP("views", "Memory")},
  };
  return all;
}

RunsView* runs_view(QWidget* w) { return dynamic_cast<RunsView*>(w); }

}  // namespace statescope::views
