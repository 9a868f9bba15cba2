// attention_view.h — the "Effective attention" tab: how far back each run's heads read, as the mean
// |M| per distance for every checked run (left, log distance), beside two runs' matrices M[t, s] for
// one head, one above the other (|M| on a log colour scale; the second map opens on another run,
// e.g. state passing under the baseline, on the same bytes), and under them the token strip: the sequence's bytes,
// each shaded by how much the position under the mouse reads it.
#pragma once
#include <QWidget>

#include "views/heatmap_view.h"
#include "views/runs_view.h"

class QComboBox;
class QLabel;

namespace statescope::views {

class AttentionView : public QWidget, public RunsView {
 public:
  explicit AttentionView(QWidget* parent = nullptr);
  PlotWidget* curves() const { return curves_; }
  HeatmapWidget* matrix() const { return map_; }
  HeatmapWidget* second_matrix() const { return map2_; }
  QLabel* token_strip() const { return strip_; }
  QComboBox* head_box() const { return head_; }
  // What a map's cell (row bin i, column bin j: positions t, s when M is exact) says, in its read-out
  // and the status bar: both positions (a binned cell: its spans) with the bytes
  // around them (ids for a tokenizer beyond bytes) and |M| there; the token strip then shades every
  // position s' <= t by |M[t, s']| (row t of that map). Called on mouse moves.
  QString describe_cell(int64_t t, int64_t s, HeatmapWidget* map = nullptr);

 private:
  void show_runs() override;
  void draw_curves();
  void draw_map();
  void draw_map(HeatmapWidget* map);
  void shade_strip(const AttentionResult& a, size_t row, int64_t t);
  PlotWidget* curves_;
  HeatmapWidget *map_, *map2_;
  QLabel* strip_;
  QComboBox* head_;  // "mean over heads" or one head (the curves); the map shows one head
  bool first_fill_ = true;  // the maps open on baseline and state passing once; later the user's choice stands
};

}  // namespace statescope::views
