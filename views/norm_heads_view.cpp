// norm_heads_view.cpp — the "State norm" tab: the per-position norm curves of every checked run
// (NormCurvesView) beside a colour map of one run's state norm per (layer, head) over log-spaced positions,
// as growth relative to position T-1 or absolute, to see which heads' states grow past T.
#include "views/heatmap_view.h"
#include "views/line_views.h"
#include "views/runs_view.h"
#include "views/split_pane.h"

#include <QComboBox>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

namespace statescope::views {

namespace {

class NormHeadsView : public HeatmapWidget, public RunsView {
 public:
  explicit NormHeadsView(QWidget* parent = nullptr) : HeatmapWidget(tr("State norm per layer and head"), parent) {
    mode_ = new QComboBox(this);
    mode_->setObjectName("state_norm_mode");
    mode_->addItems({tr("growth: ||h_t|| / ||h_T-1||"), tr("absolute ||h_t||")});
    mode_->setToolTip(tr("per (layer, head): the state norm at each position divided by its value at position T-1, "
                         "or the norm itself"));
    toolbar()->insertWidget(2, mode_);
    connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { draw(); });
    connect(this, &HeatmapWidget::run_selected, this, [this](const QString&) { draw(); });
  }

 private:
  void show_runs() override;
  void draw();
  QComboBox* mode_;  // relative to T-1 | absolute
};

}  // namespace

void NormHeadsView::show_runs() {
  fill_run_box(runs_, [](const RunData& r) { return r.eval && !r.eval->norm_per_head.empty(); });
  draw();
}

void NormHeadsView::draw() {
  const RunData* run = nullptr;
  for (auto& r : runs_)
    if (r.name == run_->currentText() && r.eval && !r.eval->norm_per_head.empty()) run = &r;
  if (!run) return clear_map();
  const EvalResult& e = *run->eval;
  const int64_t L = e.length, H = e.nheads, rows = e.n_layer * H;
  if (static_cast<int64_t>(e.norm_per_head.size()) != rows * L || L < 1) return clear_map();
  // Positions: about 32 log-spaced from 1 to L (1-based, as in the curves), each once.
  std::vector<int64_t> pos;
  for (int k = 0; k < 32; ++k) {
    const auto p = static_cast<int64_t>(std::llround(std::exp(std::log(static_cast<double>(L)) * k / 31.0)));
    if (pos.empty() || p > pos.back()) pos.push_back(std::min(p, L));
  }
  const bool growth = mode_->currentIndex() == 0 && e.T >= 1 && e.T <= L;
  std::vector<double> x(pos.begin(), pos.end()), y(rows), v;
  QStringList names;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int64_t l = 0; l < e.n_layer; ++l)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t row = l * H + h;
      y[row] = static_cast<double>(row);
      names << QString("L%1 %2%3").arg(l).arg(e.group_name == "head" ? "H" : "G").arg(h);
      const double* n = e.norm_per_head.data() + row * L;
      const double ref = growth ? n[e.T - 1] : 1.0;
      for (int64_t p : pos) {
        const double val = ref > 0 ? n[p - 1] / ref : std::numeric_limits<double>::quiet_NaN();
        v.push_back(val);
        if (std::isfinite(val)) lo = std::min(lo, val), hi = std::max(hi, val);
      }
    }
  set_map(x, y, v, true, false, tr("position (tokens)"), e.group_name == "head" ? tr("layer, head") : tr("layer, channel group"),
          growth ? tr("norm / norm at T-1 = %1").arg(e.T) : tr("||h_t||_F"), names);
  if (std::isfinite(lo)) set_range(lo, hi);
}

namespace {

class StateNormView : public QWidget, public RunsView {
 public:
  explicit StateNormView(QWidget* parent = nullptr) : QWidget(parent) {
    auto* split = split_pane(this, Qt::Horizontal);
    curves_ = new NormCurvesView(split);
    curves_->setObjectName("state_norm_curves");
    heads_ = new NormHeadsView(split);
    heads_->setObjectName("state_norm_heads");
    split->addWidget(curves_);
    split->addWidget(heads_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
  }

 private:
  void show_runs() override;
  NormCurvesView* curves_;
  NormHeadsView* heads_;
};

}  // namespace

void StateNormView::show_runs() {
  curves_->set_runs(runs_);
  heads_->set_runs(runs_);
}

QWidget* new_state_norm_view() { return new StateNormView; }

}  // namespace statescope::views
