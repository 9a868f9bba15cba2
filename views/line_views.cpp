// line_views.cpp — loss, per-position loss and state norm plots.
#include "views/line_views.h"
#include "core/base/constants.h"
#include "core/base/eval_reference.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <cmath>
#include <set>
#include <qcustomplot.h>

namespace statescope::views {
namespace {
constexpr double kBits = kBitsPerNat;  // nats -> bits (bytes are tokens)
}

LossView::LossView(QWidget* parent) : PlotWidget(tr("Training loss"), parent) {
  set_labels(tr("step"), tr("loss (bits/token)"));
  set_robust_y(true);  // one run trained from loud noise must not squash the others into a band
  set_smoothing(90);   // per-step losses are noisy (one batch each); the raw curves stay faint beneath
}

void LossView::show_runs() {
  clear_series();
  for (auto& r : runs_) {
    if (!r.checked || r.train.empty()) continue;
    std::vector<double> x, y;
    for (auto& s : r.train) x.push_back(static_cast<double>(s.step)), y.push_back(s.loss * kBits);
    add_series(r.name, r.color, x, y, /*smoothable=*/true);
  }
  reset_view();
}

PositionLossView::PositionLossView(QWidget* parent) : PlotWidget(tr("Loss per position"), parent) {
  what_ = new QComboBox(this);
  what_->addItems({tr("loss (bits/token)"), tr("excess over the loaded model's state-reset loss"), tr("perplexity"),
                   tr("state-reset reference loss (bits/token)")});
  // Opens on the excess: the measure the experiment is about (raw losses differ by passage far more
  // than by run).
  what_->setCurrentIndex(1);
  toolbar()->insertWidget(0, what_);
  connect(what_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { show_runs(); });
  set_log_x(true);
  set_smoothing(97);  // per-position losses are noisy; the raw curves stay faint beneath
  set_robust_y(true);  // one damaged run (random noise at sigma = 1) must not flatten the others; it is named
}

void PositionLossView::show_runs() {
  clear_series();
  const int mode = what_->currentIndex();
  // Each mode's heading and y axis, units included.
  const QString titles[] = {tr("Loss per position"), tr("Excess loss per position (against the one yardstick)"),
                            tr("Perplexity per position"), tr("State-reset reference loss per position")};
  const QString units[] = {tr("loss (bits/token)"), tr("excess loss (bits/token)"), tr("perplexity"),
                           tr("reference loss (bits/token)")};
  set_title(titles[mode]);
  set_labels(tr("position (tokens)"), units[mode]);
  std::set<int64_t> Ts;  // runs of several files may have other training contexts
  for (auto& r : runs_) {
    if (!r.checked || !r.eval) continue;
    const auto& e = *r.eval;
    Ts.insert(e.T);
    // The excess and the reference: the one yardstick (the loaded model's state-reset loss) when the
    // run has it, so runs compare; else the run's own state-reset reference.
    const std::vector<double> ref = reference_nll(e);
    const std::vector<float>& ref_seq = reference_seq(e);
    if ((mode == 1 || mode == 3) && ref.empty()) continue;  // evaluated without a reference: nothing to show
    std::vector<double> x, y, err;
    const int64_t L = e.length, n = e.sequences;
    const bool per_seq = static_cast<int64_t>(ref_seq.size()) == n * L;
    for (int64_t i = 0; i < L; ++i) {
      x.push_back(static_cast<double>(i + 1));  // 1-based so position 0 shows on a log axis
      double v = e.nll[i];
      if (mode == 1) v = e.nll[i] - ref[i];
      if (mode == 3) v = ref[i];
      y.push_back(mode == 2 ? std::exp(v) : v * kBits);
      if (n > 1 && mode != 2 && static_cast<int64_t>(e.nll_seq.size()) == n * L && (mode == 0 || per_seq)) {
        double m = 0, s = 0;
        for (int64_t q = 0; q < n; ++q) {
          const double d = mode == 3   ? ref_seq[q * L + i]
                           : mode == 1 ? e.nll_seq[q * L + i] - static_cast<double>(ref_seq[q * L + i])
                                       : e.nll_seq[q * L + i];
          m += d;
          s += d * d;
        }
        m /= n;
        err.push_back(kBits * std::sqrt(std::max(0.0, (s / n - m * m) * n / (n - 1)) / n));
      }
    }
    add_series(r.name, r.color, x, y, true, err);
  }
  for (int64_t T : Ts)
    if (T > 0) add_vertical_marker(static_cast<double>(T), QString("T = %1").arg(T));
  reset_view();
}

NormCurvesView::NormCurvesView(QWidget* parent) : PlotWidget(tr("SSM state norm per position"), parent) {
  layer_ = new QComboBox(this);
  head_ = new QComboBox(this);
  toolbar()->insertWidget(0, new QLabel(tr("layer"), this));
  toolbar()->insertWidget(1, layer_);
  toolbar()->insertWidget(2, new QLabel(tr("head"), this));
  toolbar()->insertWidget(3, head_);
  connect(layer_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { redraw(); });
  connect(head_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { redraw(); });
  set_log_x(true);
  set_labels(tr("position (tokens)"), tr("||h_t||_F"));
}

void NormCurvesView::show_runs() {
  int64_t nl = 0, nh = 0;
  const EvalResult* widest = nullptr;  // the run whose rows name the layers (a hybrid's model layers)
  for (auto& r : runs_)
    if (r.eval) {
      if (!widest || r.eval->n_layer > nl) widest = &*r.eval;
      nl = std::max(nl, r.eval->n_layer), nh = std::max(nh, r.eval->nheads);
    }
  const QSignalBlocker b1(layer_), b2(head_);
  const int li = layer_->currentIndex(), hi = head_->currentIndex();
  layer_->clear();
  head_->clear();
  layer_->addItem(tr("all (mean)"));
  for (int64_t l = 0; l < nl; ++l)  // a hybrid's recurrent rows by their model layer: "4 (mamba2)"
    layer_->addItem(widest && !widest->recurrent_kind(l).empty()
                        ? QString("%1 (%2)").arg(widest->model_layer(l)).arg(QString::fromStdString(widest->recurrent_kind(l)))
                        : QString::number(l));
  head_->addItem(tr("all (layer norm)"));
  for (int64_t h = 0; h < nh; ++h) head_->addItem(QString::number(h));
  layer_->setCurrentIndex(std::max(0, std::min(li, layer_->count() - 1)));
  head_->setCurrentIndex(std::max(0, std::min(hi, head_->count() - 1)));
  redraw();
}

void NormCurvesView::redraw() {
  clear_series();
  const int layer = layer_->currentIndex() - 1, head = head_->currentIndex() - 1;  // -1: all
  std::set<int64_t> Ts;
  for (auto& r : runs_) {
    if (!r.checked || !r.eval || r.eval->norm.empty()) continue;
    const auto& e = *r.eval;
    const int64_t L = e.length, H = e.nheads;
    if (layer >= e.n_layer || head >= H) continue;  // a smaller model (runs of several files): no such layer/head
    Ts.insert(e.T);
    std::vector<double> x(L), y(L, 0.0);
    for (int64_t i = 0; i < L; ++i) {
      x[i] = static_cast<double>(i + 1);
      if (head < 0) {
        if (layer >= 0) y[i] = e.norm[layer * L + i];
        else {
          for (int64_t l = 0; l < e.n_layer; ++l) y[i] += e.norm[l * L + i] / e.n_layer;
        }
      } else {
        if (layer >= 0) y[i] = e.norm_per_head[(layer * H + head) * L + i];
        else {
          for (int64_t l = 0; l < e.n_layer; ++l) y[i] += e.norm_per_head[(l * H + head) * L + i] / e.n_layer;
        }
      }
    }
    add_series(r.name, r.color, x, y, true);
  }
  for (int64_t T : Ts)
    if (T > 0) add_vertical_marker(static_cast<double>(T), QString("T = %1").arg(T));
  reset_view();
}

}  // namespace statescope::views
