// sweep_view.cpp — mean and spread over seeds against a swept field (see sweep_view.h).
#include "views/sweep_view.h"
#include "core/base/constants.h"
#include "core/base/eval_reference.h"

#include <QComboBox>
#include <qcustomplot.h>
#include <QHBoxLayout>
#include <QLabel>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace statescope::views {
namespace {
constexpr double kBits = kBitsPerNat;
}

double far_excess_bits(const EvalResult& e) {
  const std::vector<double> ref = reference_nll(e);  // the one yardstick, else the run's own reference
  if (ref.empty() || e.T <= 0 || e.length <= e.T) return std::nan("");
  int64_t lo = e.T;
  while (2 * lo < e.length) lo *= 2;  // the last bin [lo, length)
  double s = 0;
  for (int64_t p = lo; p < e.length; ++p) s += e.nll[p] - ref[p];
  return s / static_cast<double>(e.length - lo) * kBits;
}

double far_loss_bits(const EvalResult& e) {
  double s = 0;
  for (int64_t p = e.length / 2; p < e.length; ++p) s += e.nll[p];
  return e.length > 1 ? s / static_cast<double>(e.length - e.length / 2) * kBits : std::nan("");
}

namespace {

class SweepView : public PlotWidget, public RunsView {
 public:
  explicit SweepView(QWidget* parent = nullptr) : PlotWidget(tr("Sweep: mean over seeds, error bars one standard deviation"), parent) {
    field_ = new QComboBox(this);
    field_->setObjectName("sweep_field");
    measure_ = new QComboBox(this);
    measure_->addItems({tr("excess, last position bin (bits/token)"), tr("loss far, last half (bits/token)")});
    toolbar()->insertWidget(0, new QLabel(tr("against"), this));
    toolbar()->insertWidget(1, field_);
    toolbar()->insertWidget(2, measure_);
    connect(field_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { redraw(); });
    connect(measure_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { redraw(); });
  }

 private:
  void show_runs() override;
  void redraw();
  QComboBox *field_, *measure_;
};

}  // namespace

void SweepView::show_runs() {
  std::set<std::string> fields;
  for (auto& r : runs_)
    for (auto& [k, v] : r.sweep.values)
      if (k != "seed") fields.insert(k);
  const QSignalBlocker b(field_);
  const QString was = field_->currentText();
  field_->clear();
  for (auto& f : fields) field_->addItem(QString::fromStdString(f));
  if (fields.empty() && std::any_of(runs_.begin(), runs_.end(), [](auto& r) { return !r.sweep.values.empty(); }))
    field_->addItem("seed");  // only seeds swept: one point per run, spread by seed
  const int i = field_->findText(was);
  field_->setCurrentIndex(i >= 0 ? i : 0);
  redraw();
}

void SweepView::redraw() {
  clear_series();
  const std::string x_field = field_->currentText().toStdString();
  set_labels(field_->currentText(), measure_->currentText());
  if (x_field.empty()) {
    reset_view();
    return;
  }
  // A line: the policy (the run name before '@') and the values of the swept fields other than x and seed.
  struct Line {
    std::map<double, std::vector<double>> at;  // x -> the seeds' values
  };
  std::map<std::string, Line> lines;
  std::vector<std::string> order;
  for (auto& r : runs_) {
    if (!r.checked || !r.eval || r.sweep.values.empty()) continue;
    double x = std::nan("");
    std::string key = r.name.toStdString().substr(0, r.name.toStdString().find('@'));
    std::string rest;
    for (auto& [k, v] : r.sweep.values) {
      if (k == x_field) x = v;
      else if (k != "seed") rest += (rest.empty() ? "" : ",") + k + "=" + QString::number(v).toStdString();
    }
    if (x_field == "seed") x = 0;
    if (std::isnan(x)) continue;  // this run does not vary the chosen field (e.g. sigma for passing)
    if (!rest.empty()) key += " " + rest;
    const double y = measure_->currentIndex() == 0 ? far_excess_bits(*r.eval) : far_loss_bits(*r.eval);
    if (!std::isfinite(y)) continue;
    if (!lines.count(key)) order.push_back(key);
    lines[key].at[x].push_back(y);
  }
  // Only seeds swept: one bar per line at its own place on x (named below it), its mean as a line and
  // its spread as a band, rather than every line on one point at x = 0.
  const bool seeds_only = x_field == "seed";
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (size_t li = 0; li < order.size(); ++li) {  // a colour per line, so policies are told apart
    const std::string& key = order[li];
    const Line& l = lines[key];
    std::vector<double> xs, ys, err;
    for (auto& [x, v] : l.at) {
      double m = 0, s = 0;
      for (double y : v) m += y / static_cast<double>(v.size());
      for (double y : v) s += (y - m) * (y - m);
      const double sd = v.size() > 1 ? std::sqrt(s / static_cast<double>(v.size() - 1)) : 0.0;
      if (seeds_only) {
        const double at = static_cast<double>(li);
        xs = {at - 0.3, at + 0.3}, ys = {m, m}, err = {sd, sd};
        ticker->addTick(at, QString::fromStdString(key));
      } else {
        xs.push_back(x), ys.push_back(m), err.push_back(sd);
      }
    }
    QCPGraph* g = add_series(QString::fromStdString(key), run_color(static_cast<int>(li)), xs, ys, false, err);
    if (!seeds_only) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));  // a field with one value shows
  }
  if (seeds_only) {
    set_labels(tr("run (its seeds pooled: mean, band one standard deviation)"), measure_->currentText());
    plot()->xAxis->setTicker(ticker);
  } else if (plot()->xAxis->ticker().dynamicCast<QCPAxisTickerText>()) {
    plot()->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());  // numbers again (log x sets its own)
  }
  reset_view();
}

QWidget* new_sweep_view() { return new SweepView; }

}  // namespace statescope::views
