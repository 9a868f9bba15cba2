// norm_heads_view.cpp — the "State norm" tab: the per-position norm curves of every checked run
// (NormCurvesView) beside a colour map of one run's state norm per (layer, head) over log-spaced positions,
// as growth relative to position T-1 or absolute, to see which heads' states grow past T. A hybrid's rows
// say their model layer and kind ("L4 Mamba-2 H3"), and the map also shows what its attention layers
// read per (layer, head): the entropy of the attention, or its mass on the first tokens.
#include "views/heatmap_view.h"
#include "views/line_views.h"
#include "views/runs_view.h"
#include "views/split_pane.h"

#include <QComboBox>
#include <QSignalBlocker>
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
                         "or the norm itself; for a hybrid, also what its attention layers read: the entropy of each "
                         "position's attention (bits; uniform over p+1 positions: log2(p+1)) or its mass on the first tokens"));
    toolbar()->insertWidget(2, mode_);
    connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { draw(); });
    connect(this, &HeatmapWidget::run_selected, this, [this](const QString&) { draw(); });
  }

 private:
  void show_runs() override;
  void draw();
  void draw_attention(const EvalResult& e, bool entropy);
  void fit_modes(bool attention);  // the attention modes offered only where the selected run has them
  QComboBox* mode_;  // relative to T-1 | absolute | attention entropy | attention mass on the first tokens
};

// What a recurrent layer kind is called on screen.
QString kind_label(const std::string& kind) {
  if (kind == "mamba2") return "Mamba-2";
  if (kind == "gated_deltanet") return "GDN";
  return QString::fromStdString(kind);
}

// Positions: about 32 log-spaced from 1 to L (1-based, as in the curves), each once.
std::vector<int64_t> log_positions(int64_t L) {
  std::vector<int64_t> pos;
  for (int k = 0; k < 32; ++k) {
    const auto p = static_cast<int64_t>(std::llround(std::exp(std::log(static_cast<double>(L)) * k / 31.0)));
    if (pos.empty() || p > pos.back()) pos.push_back(std::min(p, L));
  }
  return pos;
}

}  // namespace

void NormHeadsView::show_runs() {
  fill_run_box(runs_, [](const RunData& r) { return r.eval && !r.eval->norm_per_head.empty(); });
  draw();
}

void NormHeadsView::fit_modes(bool attention) {
  if ((mode_->count() > 2) == attention) return;
  const QSignalBlocker block(mode_);
  if (attention) {
    mode_->addItems({tr("attention entropy (bits)"), tr("attention mass on the first tokens")});
  } else {
    if (mode_->currentIndex() >= 2) mode_->setCurrentIndex(0);
    while (mode_->count() > 2) mode_->removeItem(2);
  }
}

void NormHeadsView::draw() {
  const RunData* run = nullptr;
  for (auto& r : runs_)
    if (r.name == run_->currentText() && r.eval && !r.eval->norm_per_head.empty()) run = &r;
  fit_modes(run && !run->eval->attn_entropy.empty());
  if (!run) return clear_map();
  const EvalResult& e = *run->eval;
  if (mode_->currentIndex() >= 2) return draw_attention(e, mode_->currentIndex() == 2);
  set_title(tr("State norm per layer and head"));
  const int64_t L = e.length, H = e.nheads, rows = e.n_layer * H;
  if (static_cast<int64_t>(e.norm_per_head.size()) != rows * L || L < 1) return clear_map();
  const std::vector<int64_t> pos = log_positions(L);
  const bool growth = mode_->currentIndex() == 0 && e.T >= 1 && e.T <= L;
  std::vector<double> x(pos.begin(), pos.end()), y(rows), v;
  QStringList names;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int64_t l = 0; l < e.n_layer; ++l)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t row = l * H + h;
      y[row] = static_cast<double>(row);
      const std::string kind = e.recurrent_kind(l);
      names << QString("L%1 %2%3%4")
                   .arg(e.model_layer(l))
                   .arg(kind.empty() ? QString() : kind_label(kind) + " ")
                   .arg(e.group_name == "head" ? "H" : "G")
                   .arg(h);
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

void NormHeadsView::draw_attention(const EvalResult& e, bool entropy) {
  const int64_t L = e.length, H = e.attention_heads, A = static_cast<int64_t>(e.attention_layers.size());
  const auto& src = entropy ? e.attn_entropy : e.attn_first;
  set_title(entropy ? tr("Attention entropy per layer and head") : tr("Attention mass on the first %1 tokens").arg(e.first_tokens));
  if (L < 1 || H < 1 || static_cast<int64_t>(src.size()) != A * H * L) return clear_map();
  const std::vector<int64_t> pos = log_positions(L);
  std::vector<double> x(pos.begin(), pos.end()), y(static_cast<size_t>(A * H)), v;
  QStringList names;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int64_t a = 0; a < A; ++a)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t row = a * H + h;
      y[static_cast<size_t>(row)] = static_cast<double>(row);
      names << QString("L%1 attention H%2").arg(e.attention_layers[static_cast<size_t>(a)]).arg(h);
      for (int64_t p : pos) {
        const double val = src[static_cast<size_t>(row * L + p - 1)];
        v.push_back(val);
        if (std::isfinite(val)) lo = std::min(lo, val), hi = std::max(hi, val);
      }
    }
  set_map(x, y, v, true, false, tr("position (tokens)"), tr("layer, head"),
          entropy ? tr("entropy (bits; T = %1)").arg(e.T) : tr("mass on positions 0-%1 (T = %2)").arg(e.first_tokens - 1).arg(e.T),
          names);
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
