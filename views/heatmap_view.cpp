// heatmap_view.cpp — colour-map views (EffRem heatmap + curves, passkey grid).
#include "views/heatmap_view.h"
#include "views/split_pane.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace statescope::views {

HeatmapWidget::HeatmapWidget(const QString& title, QWidget* parent) : PlotWidget(title, parent) {
  connect(plot(), &QCustomPlot::afterLayout, this, [this] { fit_cell_texts(); });
  run_ = new QComboBox(this);
  run_->setMinimumContentsLength(10);
  lo_ = new QDoubleSpinBox(this);
  hi_ = new QDoubleSpinBox(this);
  for (auto* s : {lo_, hi_}) {
    s->setDecimals(4);
    s->setRange(0, 1e9);
    s->setSingleStep(0.05);
  }
  hi_->setValue(1.0);
  logz_ = new QCheckBox(tr("log colour"), this);
  toolbar()->insertWidget(0, new QLabel(tr("run"), this));
  toolbar()->insertWidget(1, run_);
  toolbar()->insertWidget(2, new QLabel(tr("colour range"), this));
  toolbar()->insertWidget(3, lo_);
  toolbar()->insertWidget(4, hi_);
  toolbar()->insertWidget(5, logz_);
  set_legend_enabled(false);
  hide_line_controls();
  plot()->xAxis->grid()->setZeroLinePen(Qt::NoPen);
  plot()->yAxis->grid()->setZeroLinePen(Qt::NoPen);
  connect(lo_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double) { apply_range(); });
  connect(hi_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double) { apply_range(); });
  connect(logz_, &QCheckBox::toggled, this, [this](bool) { apply_range(); });
  connect(run_, &QComboBox::currentTextChanged, this, &HeatmapWidget::run_selected);
}

void HeatmapWidget::fit_cell_texts() {
  if (cell_texts_.isEmpty() || cells_x_ <= 0) return;
  const int need = QFontMetrics(cell_texts_.front()->font()).horizontalAdvance("0.00") + 4;
  const bool fit = plot()->axisRect()->width() / cells_x_ >= need;
  for (auto* t : cell_texts_) t->setVisible(fit);
}

bool HeatmapWidget::cell_values_shown() const {
  return !cell_texts_.isEmpty() && cell_texts_.front()->visible();
}

void HeatmapWidget::clear_map() {
  plot()->clearItems();
  cell_texts_.clear();
  if (map_) plot()->removePlottable(map_);
  map_ = nullptr;
  if (scale_) plot()->plotLayout()->remove(scale_);
  scale_ = nullptr;
  plot()->plotLayout()->simplify();
  replot();
}

void HeatmapWidget::set_map(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& v,
                            bool log_x, bool log_y, const QString& xl, const QString& yl, const QString& zl,
                            const QStringList& y_names) {
  clear_map();
  const int nx = static_cast<int>(x.size()), ny = static_cast<int>(y.size());
  if (nx == 0 || ny == 0) return;
  // Cells are drawn on a uniform grid of indices; the axes show the true coordinates as tick labels,
  // which keeps uneven (log-spaced) grids readable without stretching cells.
  map_ = new QCPColorMap(plot()->xAxis, plot()->yAxis);
  map_->data()->setSize(nx, ny);
  map_->data()->setRange(QCPRange(0, nx - 1), QCPRange(0, ny - 1));
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) map_->data()->setCell(i, j, v[static_cast<size_t>(j) * nx + i]);
  // Labels that do not run into each other in a narrow map: on a log-spaced grid the cell nearest
  // each power of ten (within a factor of 2), else round values (below).
  auto ticks = [](const std::vector<double>& c, bool log) {
    QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
    const int n = static_cast<int>(c.size());
    if (log && n > 6 && c.front() > 0) {
      for (double d = std::pow(10.0, std::floor(std::log10(c.front()))); d <= c.back() * 2; d *= 10) {
        int best = 0;
        for (int i = 1; i < n; ++i)
          if (std::abs(std::log(c[i] / d)) < std::abs(std::log(c[best] / d))) best = i;
        if (std::abs(std::log(c[best] / d)) < std::log(2.0)) t->addTick(best, QString::number(d, 'g', 4));
      }
      if (!t->ticks().isEmpty()) return t;
    }
    // On an evenly spaced grid (positions 0, 1, 2, ...): round values (1, 2 or 5 times a power of
    // ten, at most about 4 of them) placed where they fall between cells. Else (an uneven grid: T =
    // 256, 1024, 4096) the cells' own values, at most 6 evenly spaced cells.
    bool uniform = n > 2 && c.back() > c.front();
    for (int i = 1; uniform && i < n; ++i)
      uniform = std::abs((c[i] - c[i - 1]) - (c.back() - c.front()) / (n - 1)) <= 1e-6 * (c.back() - c.front());
    if (uniform) {
      const double raw = (c.back() - c.front()) / 4, mag = std::pow(10.0, std::floor(std::log10(raw)));
      double step = 10 * mag;
      for (double m : {1.0, 2.0, 5.0})
        if (m * mag >= raw) {
          step = m * mag;
          break;
        }
      for (double d = std::ceil(c.front() / step) * step; d <= c.back() + 1e-9 * step; d += step) {
        const auto hi = std::lower_bound(c.begin(), c.end(), d);
        const int i = std::clamp(static_cast<int>(hi - c.begin()), 1, n - 1);
        const double at = (i - 1) + (d - c[i - 1]) / (c[i] - c[i - 1]);
        t->addTick(std::clamp(at, 0.0, n - 1.0), QString::number(d, 'g', 6));
      }
      if (t->ticks().size() >= 2) return t;
      t->clear();
    }
    const int step = std::max(1, (n + 5) / 6);
    for (int i = 0; i < n; i += step) t->addTick(i, QString::number(c[i], 'g', 4));
    return t;
  };
  plot()->xAxis->setScaleType(QCPAxis::stLinear);
  plot()->yAxis->setScaleType(QCPAxis::stLinear);
  plot()->xAxis->setTicker(ticks(x, log_x));
  if (y_names.size() == ny) {
    QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
    const int step = std::max(1, ny / 24);
    for (int j = 0; j < ny; j += step) t->addTick(j, y_names[j]);
    plot()->yAxis->setTicker(t);
  } else {
    plot()->yAxis->setTicker(ticks(y, log_y));
  }
  plot()->xAxis->setLabel(xl + (log_x ? tr(" (log-spaced)") : QString()));
  plot()->yAxis->setLabel(yl + (log_y ? tr(" (log-spaced)") : QString()));
  scale_ = new QCPColorScale(plot());
  plot()->plotLayout()->addElement(1, 1, scale_);
  scale_->setType(QCPAxis::atRight);
  scale_->axis()->setLabel(zl);
  map_->setColorScale(scale_);
  QCPColorGradient viridis;  // perceptually uniform, readable in grey (not in QCustomPlot 2.1's presets)
  viridis.clearColorStops();
  int n_stops = 0;
  const QColor* stops = heat_stops(&n_stops);  // theme.h
  for (int k = 0; k < n_stops; ++k) viridis.setColorStopAt(k / double(n_stops - 1), stops[k]);
  viridis.setNanHandling(QCPColorGradient::nhTransparent);  // e.g. EffRem cells with t >= T
  map_->setGradient(viridis);
  map_->setInterpolate(false);
  auto* group = new QCPMarginGroup(plot());
  plot()->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  if (nx * ny <= 120)  // small grids (passkey): the value in each cell
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j) {
        const double val = v[static_cast<size_t>(j) * nx + i];
        if (std::isnan(val)) continue;
        auto* t = new QCPItemText(plot());
        t->position->setCoords(i, j);
        t->setText(QString::number(val, 'f', 2));
        t->setColor(val > 0.6 * (hi_->value() + lo_->value()) ? Qt::black : Qt::white);
        cell_texts_ << t;
      }
  cells_x_ = nx;
  // Table for CSV: y, x, value.
  std::vector<std::vector<QString>> rows;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      rows.push_back({y_names.size() == ny ? y_names[j] : QString::number(y[j], 'g', 10), QString::number(x[i], 'g', 10),
                      QString::number(v[static_cast<size_t>(j) * nx + i], 'g', 10)});
  set_table({yl, xl, zl}, rows);
  apply_range();
  plot()->rescaleAxes();
  plot()->xAxis->setRange(-0.5, nx - 0.5);
  plot()->yAxis->setRange(-0.5, ny - 0.5);
  replot();
}

void HeatmapWidget::fill_run_box(const Runs& runs, const std::function<bool(const RunData&)>& has) {
  const QString keep = run_->currentText();
  const QSignalBlocker b(run_);
  run_->clear();
  for (auto& r : runs)
    if (has(r)) run_->addItem(r.name);
  if (run_->findText(keep) >= 0) run_->setCurrentText(keep);
}

void HeatmapWidget::set_range(double lo, double hi) {
  lo_->setValue(lo);
  hi_->setValue(hi);
  apply_range();
}

void HeatmapWidget::set_log_colour(bool on) { logz_->setChecked(on); }

void HeatmapWidget::apply_range() {
  if (!map_) return;
  double lo = lo_->value(), hi = hi_->value();
  if (logz_->isChecked()) {
    lo = std::max(lo, 1e-4);
    scale_->setDataScaleType(QCPAxis::stLogarithmic);
    scale_->axis()->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
  } else {
    scale_->setDataScaleType(QCPAxis::stLinear);
    scale_->axis()->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  map_->setDataRange(QCPRange(lo, std::max(hi, lo + 1e-9)));
  replot();
}

namespace {

class EffRemView : public QWidget, public RunsView {
 public:
  explicit EffRemView(QWidget* parent = nullptr) : QWidget(parent) {
    auto* split = split_pane(this, Qt::Horizontal);
    curves_ = new PlotWidget(tr("Effective Remembrance EffRem_T(t)"), split);
    curves_->setObjectName("effrem_curves");
    Tbox_ = new QComboBox(curves_);
    curves_->toolbar()->insertWidget(0, new QLabel(tr("T"), curves_));
    curves_->toolbar()->insertWidget(1, Tbox_);
    curves_->set_labels(tr("t (tokens before t dropped)"), tr("EffRem = TV(p(.|x[0:T]), p(.|x[t:T]))"));
    curves_->set_log_x(true);  // the default grid is log-spaced
    heat_ = new HeatmapWidget(tr("EffRem heatmap"), split);
    heat_->setObjectName("effrem_heatmap");
    split->addWidget(curves_);
    split->addWidget(heat_);
    connect(Tbox_, &QComboBox::currentTextChanged, this, [this](const QString&) { draw_curves(); });
    connect(heat_, &HeatmapWidget::run_selected, this, [this](const QString&) { draw_map(); });
  }

 private:
  void show_runs() override;
  void draw_curves();
  void draw_map();
  PlotWidget* curves_;
  HeatmapWidget* heat_;
  QComboBox* Tbox_;
};

}  // namespace

void EffRemView::show_runs() {
  const QString keepT = Tbox_->currentText();
  const QSignalBlocker b1(Tbox_), b2(heat_->run_box());
  Tbox_->clear();
  heat_->fill_run_box(runs_, [](const RunData& r) { return r.effrem.has_value(); });
  std::vector<int64_t> Ts;
  for (auto& r : runs_) {
    if (!r.effrem) continue;
    for (auto T : r.effrem->T)
      if (std::find(Ts.begin(), Ts.end(), T) == Ts.end()) Ts.push_back(T);
  }
  std::sort(Ts.begin(), Ts.end());
  for (auto T : Ts) Tbox_->addItem(QString::number(T));
  if (Tbox_->findText(keepT) >= 0) Tbox_->setCurrentText(keepT);
  else if (Tbox_->count()) Tbox_->setCurrentIndex(Tbox_->count() - 1);
  draw_curves();
  draw_map();
}

void EffRemView::draw_curves() {
  curves_->clear_series();
  const int64_t T = Tbox_->currentText().toLongLong();
  for (auto& r : runs_) {
    if (!r.checked || !r.effrem) continue;
    const auto& e = *r.effrem;
    const auto it = std::find(e.T.begin(), e.T.end(), T);
    if (it == e.T.end()) continue;
    const size_t i = it - e.T.begin(), nt = e.t.size();
    std::vector<double> x, y, err;
    for (size_t j = 0; j < nt; ++j) {
      const double v = e.value[i * nt + j];
      if (std::isnan(v) || e.t[j] <= 0) continue;  // t = 0 is the self-check (always 0)
      x.push_back(static_cast<double>(e.t[j]));
      y.push_back(v);
      err.push_back(e.stderr_[i * nt + j]);
    }
    curves_->add_series(r.name, r.color, x, y, false, err);
  }
  curves_->add_vertical_marker(static_cast<double>(T), QString("T = %1").arg(T));
  curves_->reset_view();
}

void EffRemView::draw_map() {
  const QString name = heat_->run_box()->currentText();
  for (auto& r : runs_)
    if (r.name == name && r.effrem) {
      const auto& e = *r.effrem;
      std::vector<double> x(e.t.begin(), e.t.end()), y(e.T.begin(), e.T.end());
      heat_->set_map(x, y, e.value, true, true, tr("t"), tr("T"), tr("EffRem"));
      return;
    }
  heat_->clear_map();
}

namespace {

class PasskeyView : public HeatmapWidget, public RunsView {
 public:
  explicit PasskeyView(QWidget* parent = nullptr) : HeatmapWidget(tr("Passkey retrieval accuracy"), parent) {
    metric_ = new QComboBox(this);
    metric_->addItems({tr("exact (all 5 digits)"), tr("digit accuracy")});
    toolbar()->insertWidget(2, metric_);
    connect(metric_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { draw(); });
    connect(this, &HeatmapWidget::run_selected, this, [this](const QString&) { draw(); });
  }

 private:
  void show_runs() override;
  void draw();
  QComboBox* metric_;
};

}  // namespace

void PasskeyView::show_runs() {
  fill_run_box(runs_, [](const RunData& r) { return r.passkey.has_value(); });
  draw();
}

void PasskeyView::draw() {
  for (auto& r : runs_)
    if (r.name == run_->currentText() && r.passkey) {
      const auto& p = *r.passkey;
      std::vector<double> x(p.depths.begin(), p.depths.end()), y(p.lengths.begin(), p.lengths.end());
      set_map(x, y, metric_->currentIndex() == 0 ? p.accuracy : p.digit_accuracy, false, true, tr("key depth"),
              tr("prompt length"), metric_->currentText());
      return;
    }
  clear_map();
}

QWidget* new_effrem_view() { return new EffRemView; }

QWidget* new_passkey_view() { return new PasskeyView; }

}  // namespace statescope::views
