// state_views.cpp — state histograms, state change per token, copying and bAbI tables.
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"
#include "views/split_pane.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

namespace statescope::views {

namespace {

class StatesView : public QWidget, public RunsView {
 public:
  explicit StatesView(QWidget* parent = nullptr) : QWidget(parent) {
    auto* split = split_pane(this, Qt::Horizontal);
    hist_ = new PlotWidget(tr("SSM state entries (dashed: Gaussian fitted at T-1)"), split);
    hist_->setObjectName("states_histogram");
    delta_ = new PlotWidget(tr("State change per token ||S_t - S_{t-1}||"), split);
    delta_->setObjectName("states_change");
    layer_ = new QComboBox(this);
    head_ = new QComboBox(this);
    pos_ = new QComboBox(this);
    pos_->setObjectName("states_position");
    int k = 0;
    for (auto [label, box] : {std::pair{tr("layer"), layer_}, {tr("head"), head_}, {tr("position"), pos_}}) {
      auto* l = new QLabel(label, hist_);
      if (box == head_) head_label_ = l;  // says "channel group" for Mamba-1 runs
      hist_->toolbar()->insertWidget(k++, l);
      hist_->toolbar()->insertWidget(k++, box);
      connect(box, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) { draw(); });
    }
    hist_->set_labels(tr("state entry value"), tr("density"));
    delta_->set_labels(tr("position (tokens)"), tr("||S_t - S_{t-1}||_F (mean over layers)"));
    delta_->set_log_x(true);
    split->addWidget(hist_);
    split->addWidget(delta_);
  }

 private:
  void show_runs() override;
  void draw();
  PlotWidget *hist_, *delta_;
  QComboBox *layer_, *head_, *pos_;
  QLabel* head_label_ = nullptr;  // "head", or "channel group" for Mamba-1 runs
};

}  // namespace

void StatesView::show_runs() {
  const StateStatsResult* first = nullptr;
  for (auto& r : runs_)
    if (r.states && !first) first = &*r.states;
  const QSignalBlocker b1(layer_), b2(head_), b3(pos_);
  const int li = layer_->currentIndex(), hi = head_->currentIndex(), pi = pos_->currentIndex();
  layer_->clear();
  head_->clear();
  pos_->clear();
  if (first) {
    for (auto l : first->layers) layer_->addItem(QString::number(l));
    for (int64_t h = 0; h < first->nheads; ++h) head_->addItem(QString::number(h));
    head_label_->setText(first->group_name == "head" ? tr("head") : tr("channel group"));
    for (auto p : first->positions)
      pos_->addItem(QString("%1%2").arg(p).arg(p >= first->T ? QString(" (%1 T)").arg(double(p + 1) / first->T, 0, 'g', 3)
                                                              : QString(" (< T)")));
    layer_->setCurrentIndex(std::clamp(li, 0, layer_->count() - 1));
    head_->setCurrentIndex(std::clamp(hi, 0, head_->count() - 1));
    pos_->setCurrentIndex(pi >= 0 && pi < pos_->count() ? pi : pos_->count() - 1);
  }
  draw();
}

void StatesView::draw() {
  hist_->clear_series();
  delta_->clear_series();
  const int li = layer_->currentIndex(), h = head_->currentIndex(), pi = pos_->currentIndex();
  int64_t T = 0;
  for (auto& r : runs_) {
    if (!r.checked || !r.states) continue;
    const auto& s = *r.states;
    T = s.T;
    const int64_t nl = s.layers.size(), np = s.positions.size(), H = s.nheads, nb = s.bin_edges.size() - 1;
    if (li >= 0 && li < nl && h >= 0 && h < H && pi >= 0 && pi < np) {
      std::vector<double> x(nb), y(nb);
      for (int64_t b = 0; b < nb; ++b) {
        x[b] = 0.5 * (s.bin_edges[b] + s.bin_edges[b + 1]);
        y[b] = s.histogram[((li * np + pi) * H + h) * nb + b];
      }
      hist_->add_series(r.name, r.color, x, y);
      const double m = s.fitted_mean[li * H + h], sd = s.fitted_std[li * H + h];
      if (sd > 0) {
        std::vector<double> gy(nb);
        for (int64_t b = 0; b < nb; ++b)
          gy[b] = std::exp(-0.5 * std::pow((x[b] - m) / sd, 2)) / (sd * std::sqrt(2 * M_PI));
        auto* g = hist_->add_series(r.name + tr(" fit@T-1"), r.color, x, gy);
        g->setPen(QPen(r.color, 1.5, Qt::DashLine));
      }
    }
    if (!s.delta_norm.empty() && s.length > 1) {
      std::vector<double> x, y;
      for (int64_t t = 1; t < s.length; ++t) {
        double v = 0;
        for (int64_t l = 0; l < s.n_layer; ++l) v += s.delta_norm[l * s.length + t] / s.n_layer;
        x.push_back(static_cast<double>(t));
        y.push_back(v);
      }
      delta_->add_series(r.name, r.color, x, y, true);
    }
  }
  if (T > 0) delta_->add_vertical_marker(static_cast<double>(T), QString("T = %1").arg(T));
  hist_->reset_view();
  delta_->reset_view();
}

namespace {

class TablesView : public QWidget, public RunsView {
 public:
  explicit TablesView(QWidget* parent = nullptr) : QWidget(parent) {
    auto* split = split_pane(this, Qt::Vertical);
    auto* tables = new QWidget(split);
    auto* h = new QHBoxLayout(tables);
    auto* c = new QVBoxLayout;
    auto wrapped = [tables](const QString& text) {  // wraps, so the two tables fit side by side on a small screen
      auto* l = new QLabel(text, tables);
      l->setWordWrap(true);
      return l;
    };
    c->addWidget(wrapped(tr("<b>Synthetic copying</b>: exact match (token accuracy) by string length, from a zero state | a passed state")));
    copy_ = new QTableWidget(tables);
    copy_->setObjectName("copying_table");
    c->addWidget(copy_);
    auto* b = new QVBoxLayout;
    b->addWidget(wrapped(tr("<b>bAbI-style questions</b>: greedy / choice accuracy [last-mentioned baseline] by context length")));
    babi_ = new QTableWidget(tables);
    babi_->setObjectName("babi_table");
    b->addWidget(babi_);
    h->addLayout(c);
    h->addLayout(b);
    plot_ = new PlotWidget(tr("Accuracy by length (solid: copying exact from a zero state; dotted: from a passed state; dashed: bAbI choice)"), split);
    plot_->set_labels(tr("length (tokens)"), tr("accuracy"));
    plot_->set_log_x(true);
    split->addWidget(tables);
    split->addWidget(plot_);
    for (auto* t : {copy_, babi_}) {
      t->setEditTriggers(QAbstractItemView::NoEditTriggers);
      t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    }
  }

 private:
  void show_runs() override;
  QTableWidget *copy_, *babi_;
  PlotWidget* plot_;
};

}  // namespace

void TablesView::show_runs() {
  auto fill = [](QTableWidget* t, const Runs& runs, bool copying) {
    std::vector<const RunData*> cols;
    std::vector<int64_t> lengths;
    for (auto& r : runs) {
      if (!r.checked || (copying ? !r.copying : !r.babi)) continue;
      cols.push_back(&r);
      for (auto L : copying ? r.copying->lengths : r.babi->lengths)
        if (std::find(lengths.begin(), lengths.end(), L) == lengths.end()) lengths.push_back(L);
    }
    std::sort(lengths.begin(), lengths.end());
    t->clear();
    t->setRowCount(static_cast<int>(lengths.size()));
    t->setColumnCount(static_cast<int>(cols.size()));
    QStringList hdr, rows;
    for (auto* r : cols) hdr << r->name;
    for (auto L : lengths) rows << QString::number(L);
    t->setHorizontalHeaderLabels(hdr);
    t->setVerticalHeaderLabels(rows);
    for (size_t j = 0; j < cols.size(); ++j) {
      const auto& ls = copying ? cols[j]->copying->lengths : cols[j]->babi->lengths;
      for (size_t k = 0; k < ls.size(); ++k) {
        const int row = static_cast<int>(std::find(lengths.begin(), lengths.end(), ls[k]) - lengths.begin());
        QString cell;
        if (copying) {  // exact (token accuracy) from a zero state | from a passed state
          const auto& c = *cols[j]->copying;
          cell = QString("%1 (%2)").arg(c.exact[k], 0, 'f', 2).arg(c.token_accuracy[k], 0, 'f', 2);
          if (!c.exact_passed.empty())
            cell += QString(" | %1 (%2)").arg(c.exact_passed[k], 0, 'f', 2).arg(c.token_accuracy_passed[k], 0, 'f', 2);
          QStringList foreign;  // exact match from each foreign start, in the cell's tooltip
          for (size_t f = 0; f < c.foreign.size(); ++f)
            foreign << QString("%1 %2").arg(QString::fromStdString(c.foreign[f])).arg(c.exact_foreign[f * ls.size() + k], 0, 'f', 2);
          if (!foreign.empty()) cell += QString(" | %1").arg(foreign.join(", "));
        } else {  // greedy / choice [last-mentioned baseline]
          const auto& b = *cols[j]->babi;
          cell = QString("%1 / %2").arg(b.accuracy[k], 0, 'f', 2).arg(b.choice_accuracy[k], 0, 'f', 2);
          if (!b.last_mentioned_accuracy.empty()) cell += QString(" [%1]").arg(b.last_mentioned_accuracy[k], 0, 'f', 2);
        }
        auto* item = new QTableWidgetItem(cell);
        if (copying && ls[k] > cols[j]->copying->L) item->setToolTip(QObject::tr("longer than any training string (L = %1)").arg(cols[j]->copying->L));
        t->setItem(row, static_cast<int>(j), item);
      }
    }
  };
  fill(copy_, runs_, true);
  fill(babi_, runs_, false);
  plot_->clear_series();
  for (auto& r : runs_) {
    if (!r.checked) continue;
    if (r.copying) {
      std::vector<double> x(r.copying->lengths.begin(), r.copying->lengths.end());
      plot_->add_series(r.name + tr(" copying"), r.color, x, r.copying->exact);
      if (!r.copying->exact_passed.empty()) {  // the same strings, each from a passed state
        auto* g = plot_->add_series(r.name + tr(" copying, passed state"), r.color, x, r.copying->exact_passed);
        g->setPen(QPen(r.color, 1.5, Qt::DotLine));
      }
    }
    if (r.babi) {
      std::vector<double> x(r.babi->lengths.begin(), r.babi->lengths.end());
      auto* g = plot_->add_series(r.name + tr(" bAbI"), r.color, x, r.babi->choice_accuracy);
      g->setPen(QPen(r.color, 1.5, Qt::DashLine));
    }
  }
  plot_->reset_view();
}

QWidget* new_states_view() { return new StatesView; }

QWidget* new_tables_view() { return new TablesView; }

}  // namespace statescope::views
