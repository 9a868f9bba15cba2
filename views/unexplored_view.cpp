// unexplored_view.cpp — the unexplored-states tab: the fraction of states outside the envelope of training states per position, and the excess loss over the same positions.
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"
#include "views/split_pane.h"
#include "core/base/constants.h"

#include <QComboBox>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <cmath>
#include <set>
#include <qcustomplot.h>

namespace statescope::views {

namespace {

class UnexploredView : public QWidget, public RunsView {
 public:
  explicit UnexploredView(QWidget* parent = nullptr) : QWidget(parent) {
    outside_ = new PlotWidget(tr("States outside the envelope of the run's training states"), this);
    outside_->setObjectName("unexplored_outside");
    excess_ = new PlotWidget(tr("Excess loss over the same positions"), this);
    excess_->setObjectName("unexplored_excess");
    layer_ = new QComboBox(this);
    outside_->toolbar()->insertWidget(0, new QLabel(tr("layer"), this));
    outside_->toolbar()->insertWidget(1, layer_);
    connect(layer_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { redraw(); });
    // Which envelope: each run's own (it moves with the policy) or one for every run (the loaded
    // model's zero-state training states), where the file has it.
    envelope_ = new QComboBox(this);
    envelope_->setObjectName("unexplored_envelope");
    envelope_->addItem(tr("own"));     // short: the toolbar shares its width with the plot's own tools
    envelope_->addItem(tr("common"));
    envelope_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    envelope_->setToolTip(tr("own: the states each run met in training under its policy (state passing's envelope "
                             "holds passed states); common: one envelope for every run, so runs compare"));
    outside_->toolbar()->insertWidget(2, new QLabel(tr("envelope"), this));
    outside_->toolbar()->insertWidget(3, envelope_);
    connect(envelope_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { redraw(); });
    for (auto* p : {outside_, excess_}) p->set_log_x(true);
    outside_->set_labels(tr("position (tokens)"), tr("fraction of states outside"));
    excess_->set_labels(tr("position (tokens)"), tr("excess (bits/token)"));
    auto* split = split_pane(this, Qt::Vertical);
    split->addWidget(outside_);
    split->addWidget(excess_);
  }

 private:
  void show_runs() override;
  void redraw();
  PlotWidget *outside_, *excess_;
  QComboBox *layer_, *envelope_;
};

}  // namespace

void UnexploredView::show_runs() {
  int64_t nl = 0;
  for (auto& r : runs_)
    if (r.unexplored) nl = std::max(nl, r.unexplored->n_layer);
  const QSignalBlocker b(layer_);
  const int li = layer_->currentIndex();
  layer_->clear();
  layer_->addItem(tr("all (mean)"));
  for (int64_t l = 0; l < nl; ++l) layer_->addItem(QString::number(l));
  layer_->setCurrentIndex(std::max(0, std::min(li, layer_->count() - 1)));
  redraw();
}

void UnexploredView::redraw() {
  outside_->clear_series();
  excess_->clear_series();
  const int layer = layer_->currentIndex() - 1;  // -1: mean over layers
  const bool common = envelope_->currentIndex() == 1;
  outside_->set_title(common ? tr("States outside one envelope for every run (the loaded model's zero-state training states)")
                             : tr("States outside the envelope of the run's training states"));
  constexpr double kBits = kBitsPerNat;
  std::set<int64_t> Ts;
  for (auto& r : runs_) {
    if (!r.checked || !r.unexplored) continue;
    const auto& u = *r.unexplored;
    if (layer >= u.n_layer) continue;
    if (common && u.common_outside_mean.empty()) continue;  // a file from before the common envelope
    const auto& mean = common ? u.common_outside_mean : u.outside_mean;
    const auto& per = common ? u.common_outside : u.outside;
    const double rho_v = common ? u.common_rho : u.excess_rho, lo = common ? u.common_rho_lo : u.excess_rho_lo,
                 hi = common ? u.common_rho_hi : u.excess_rho_hi;
    Ts.insert(u.T);
    std::vector<double> x, y, ex, ey;
    const size_t H = static_cast<size_t>(u.nheads), NL = static_cast<size_t>(u.n_layer);
    for (size_t j = 0; j < u.positions.size(); ++j) {
      const double pos = static_cast<double>(u.positions[j] + 1);  // 1-based on a log axis
      double v = mean[j];
      if (layer >= 0) {
        v = 0;
        for (size_t h = 0; h < H; ++h) v += per[(j * NL + layer) * H + h] / static_cast<double>(H);
      }
      x.push_back(pos), y.push_back(v);
      if (std::isfinite(u.excess[j])) ex.push_back(pos), ey.push_back(u.excess[j] * kBits);
    }
    const QString rho = std::isfinite(rho_v)
                            ? QString(" (rho %1 [%2, %3])").arg(rho_v, 0, 'f', 2).arg(lo, 0, 'f', 2).arg(hi, 0, 'f', 2)
                            : QString();
    outside_->add_series(r.name + rho, r.color, x, y);
    if (!ex.empty()) excess_->add_series(r.name, r.color, ex, ey);
  }
  for (int64_t T : Ts)
    if (T > 0)
      for (auto* p : {outside_, excess_}) p->add_vertical_marker(static_cast<double>(T), QString("T = %1").arg(T));
  outside_->reset_view();
  excess_->reset_view();
  excess_->plot()->xAxis->setRange(outside_->plot()->xAxis->range());  // the same positions, one above the other
  excess_->replot();
}

QWidget* new_unexplored_view() { return new UnexploredView; }

}  // namespace statescope::views
