// decay_view.cpp — the memory-length distributions of the checked runs.
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

#include <QComboBox>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace statescope::views {

namespace {

class DecayView : public PlotWidget, public RunsView {
 public:
  explicit DecayView(QWidget* parent = nullptr) : PlotWidget(tr("Decay timescales"), parent) {
    layer_ = new QComboBox(this);
    layer_->setObjectName("decay_layer");
    layer_->addItem(tr("all layers"));
    toolbar()->insertWidget(0, layer_);
    connect(layer_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { show_runs(); });
    set_log_x(true);
    set_labels(tr("memory length -1/(dt A) (tokens)"), tr("fraction of tokens"));
  }

 private:
  void show_runs() override;
  QComboBox* layer_;  // "all layers" or one layer
};

}  // namespace

void DecayView::show_runs() {
  int64_t layers = 0;
  for (auto& r : runs_)
    if (r.decay) layers = std::max(layers, r.decay->n_layer);
  if (layer_->count() != layers + 1) {  // the layer list follows the runs shown
    const QSignalBlocker block(layer_);
    const int keep = layer_->currentIndex();
    layer_->clear();
    layer_->addItem(tr("all layers"));
    for (int64_t l = 0; l < layers; ++l) layer_->addItem(tr("layer %1").arg(l));
    layer_->setCurrentIndex(keep >= 0 && keep < layer_->count() ? keep : 0);
  }
  const int64_t only = layer_->currentIndex() - 1;  // -1: all
  clear_series();
  for (auto& r : runs_) {
    if (!r.checked || !r.decay) continue;
    const auto& d = *r.decay;
    if (only >= d.n_layer) continue;
    const size_t nb = d.bin_edges.size() - 1;
    const auto [first, last] = occupied_bins(d);
    for (auto [far, h] : {std::pair{false, &d.near}, {true, &d.far}}) {
      std::vector<double> x, y;
      for (size_t k = first; k <= last; ++k) {
        double v = 0;
        int64_t n = 0;
        for (int64_t l = 0; l < d.n_layer; ++l) {
          if (only >= 0 && l != only) continue;
          for (int64_t g = 0; g < d.groups; ++g, ++n) v += (*h)[(l * d.groups + g) * nb + k];
        }
        x.push_back(std::pow(10.0, 0.5 * (d.bin_edges[k] + d.bin_edges[k + 1])));
        y.push_back(n ? v / double(n) : 0.0);
      }
      auto* g = add_series(r.name + (far ? tr(" far past T") : tr(" within T")), r.color, x, y);
      if (far && g) g->setPen(QPen(r.color, 1.5, Qt::DashLine));
    }
  }
  reset_view();
}

QWidget* new_decay_view() { return new DecayView; }

}  // namespace statescope::views
