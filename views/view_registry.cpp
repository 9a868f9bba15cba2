// view_registry.cpp — the list of views (view_registry.h).
#include "views/view_registry.h"

#include "views/attention_view.h"
#include "views/decay_view.h"
#include "views/heatmap_view.h"
#include "views/line_views.h"
#include "views/norm_heads_view.h"
#include "views/runs_table_view.h"
#include "views/state_views.h"
#include "views/sweep_view.h"
#include "views/unexplored_view.h"

namespace statescope::views {

namespace {
template <class V>
QWidget* make() {
  return new V;
}
}  // namespace

const std::vector<ViewEntry>& view_registry() {
  static const std::vector<ViewEntry> all{
      {QT_TRANSLATE_NOOP("views", "Runs"), {"eval"}, make<RunsTableView>},  // the headline, shown first
      {QT_TRANSLATE_NOOP("views", "Training loss"), {"train"}, make<LossView>},
      {QT_TRANSLATE_NOOP("views", "Per-position loss"), {"eval"}, make<PositionLossView>},
      {QT_TRANSLATE_NOOP("views", "State norm"), {"eval"}, make<StateNormView>},  // curves + per-head map
      {QT_TRANSLATE_NOOP("views", "EffRem"), {"effrem"}, make<EffRemView>},
      {QT_TRANSLATE_NOOP("views", "Passkey"), {"passkey"}, make<PasskeyView>},
      {QT_TRANSLATE_NOOP("views", "State histograms"), {"states"}, make<StatesView>},
      {QT_TRANSLATE_NOOP("views", "Unexplored states"), {"unexplored"}, make<UnexploredView>},
      {QT_TRANSLATE_NOOP("views", "Sweep"), {"sweep"}, make<SweepView>},
      {QT_TRANSLATE_NOOP("views", "Copying && bAbI"), {"copying", "babi"}, make<TablesView>},
      {QT_TRANSLATE_NOOP("views", "Decay timescales"), {"decay"}, make<DecayView>},
      {QT_TRANSLATE_NOOP("views", "Effective attention"), {"attention"}, make<AttentionView>},
  };
  return all;
}

RunsView* runs_view(QWidget* w) { return dynamic_cast<RunsView*>(w); }

}  // namespace statescope::views
