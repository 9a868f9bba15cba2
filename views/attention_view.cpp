// attention_view.cpp — see attention_view.h.
#include "views/attention_view.h"

#include <QComboBox>
#include <QMouseEvent>
#include <qcustomplot.h>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace statescope::views {

namespace {

// The row of `want` among the file's heads; the first ("mean over heads" shows the first head's matrix).
size_t head_row(const AttentionResult& a, int64_t want) {
  for (size_t i = 0; i < a.heads.size(); ++i)
    if (a.heads[i] == want) return i;
  return 0;
}

// The tokens around position i: bytes as text (controls shown as escapes), else ids.
QString around(const std::vector<int32_t>& tokens, int64_t i, int64_t reach = 8) {
  const bool bytes = std::all_of(tokens.begin(), tokens.end(), [](int32_t v) { return v >= 0 && v < 256; });
  const int64_t lo = std::max<int64_t>(0, i - reach), hi = std::min<int64_t>(static_cast<int64_t>(tokens.size()), i + reach + 1);
  QString out;
  for (int64_t k = lo; k < hi; ++k) {
    QString piece;
    const int32_t v = tokens[static_cast<size_t>(k)];
    if (!bytes) piece = QString::number(v) + " ";
    else if (v == '\n') piece = "\\n";
    else if (v < 32 || v == 127) piece = QString("\\x%1").arg(v, 2, 16, QChar('0'));
    else piece = QString(QChar(v < 128 ? v : 0xFFFD));  // a byte of a multi-byte character: shown as one mark
    out += k == i ? "[" + piece.trimmed() + "]" : piece;
  }
  return out;
}

}  // namespace

AttentionView::AttentionView(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 0, 0, 0);
  auto* split = new QSplitter(Qt::Horizontal, this);
  curves_ = new PlotWidget(tr("How far back heads read: mean |M[t, t-d]|"), split);
  curves_->setObjectName("attention_curves");
  head_ = new QComboBox(curves_);
  head_->setObjectName("attention_head");
  curves_->toolbar()->insertWidget(0, new QLabel(tr("head"), curves_));
  curves_->toolbar()->insertWidget(1, head_);
  curves_->set_labels(tr("distance d (tokens)"), tr("mean |M|"));
  curves_->set_log_x(true);
  curves_->set_log_y(true);
  // The two maps one above the other (the window keeps the width of one map beside the curves).
  auto* maps = new QSplitter(Qt::Vertical, split);
  map_ = new HeatmapWidget(tr("Effective attention M[t, s]"), maps);
  map_->setObjectName("attention_map");
  map2_ = new HeatmapWidget(tr("beside it: M[t, s] of another run"), maps);
  map2_->setObjectName("attention_second_map");
  maps->addWidget(map_);
  maps->addWidget(map2_);
  split->addWidget(curves_);
  split->addWidget(maps);
  v->addWidget(split, 1);
  strip_ = new QLabel(this);
  strip_->setObjectName("attention_tokens");
  strip_->setWordWrap(true);
  strip_->setTextFormat(Qt::RichText);
  strip_->setToolTip(tr("The sequence; hover a map's row t to shade each byte by how much position t reads it"));
  auto* scroll = new QScrollArea(this);  // a long sequence scrolls, the maps keep their room
  scroll->setWidget(strip_);
  scroll->setWidgetResizable(true);
  scroll->setMaximumHeight(fontMetrics().lineSpacing() * 6);
  scroll->setFrameShape(QFrame::NoFrame);
  v->addWidget(scroll);
  connect(head_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int) {
    draw_curves();
    draw_map();
  });
  for (HeatmapWidget* m : {map_, map2_}) {
    m->set_log_colour(true);  // |M| spans decades between the diagonal and far back
    connect(m, &HeatmapWidget::run_selected, this, [this, m](const QString&) { draw_map(m); });
    connect(m->plot(), &QCustomPlot::mouseMove, this, [this, m](QMouseEvent* e) {
      const double s = m->plot()->xAxis->pixelToCoord(e->position().x());
      const double t = m->plot()->yAxis->pixelToCoord(e->position().y());
      describe_cell(std::llround(t), std::llround(s), m);
    });
  }
}

// Every byte of the sequence up to t, its background as strong as |M[t, s]| relative to the row's
// largest (the bytes after t, not yet read, plain); t itself boxed.
void AttentionView::shade_strip(const AttentionResult& a, size_t row, int64_t t) {
  const int64_t L = a.length, B = a.bins(), bt = a.bin_of(t);
  const bool bytes = std::all_of(a.tokens.begin(), a.tokens.end(), [](int32_t v) { return v >= 0 && v < 256; });
  // |M| of row t at position s: its cell's (binned: the mean over the cell).
  std::vector<double> cell(static_cast<size_t>(L), 0.0);
  double top = 0;
  for (int64_t s = 0, bs = 0; s <= t && s < L; ++s) {
    while (bs + 1 < B && a.positions[static_cast<size_t>(bs + 1)] <= s) ++bs;
    cell[static_cast<size_t>(s)] = std::abs(a.M[row * B * B + bt * B + bs]);
    top = std::max(top, cell[static_cast<size_t>(s)]);
  }
  const QColor c = palette().color(QPalette::Highlight);
  QString html = "<p style=\"font-family: monospace; white-space: pre-wrap;\">";  // wraps at the strip's width
  for (int64_t s = 0; s < L; ++s) {
    const int32_t v = a.tokens[static_cast<size_t>(s)];
    QString piece = !bytes ? QString::number(v) + " " : v == '\n' ? QString("\u21b5") : v < 32 || v >= 127 ? QString("\u00b7")
                                                                                           : QString(QChar(v)).toHtmlEscaped();
    const double w = s <= t && top > 0 ? cell[static_cast<size_t>(s)] / top : 0.0;
    QString style;
    if (w > 0) style += QString("background-color: rgba(%1,%2,%3,%4);").arg(c.red()).arg(c.green()).arg(c.blue()).arg(w, 0, 'f', 2);
    if (s == t) style += "border: 1px solid; font-weight: bold;";
    html += style.isEmpty() ? piece : "<span style=\"" + style + "\">" + piece + "</span>";
  }
  strip_->setText(html + "</p>");
}


QString AttentionView::describe_cell(int64_t i, int64_t j, HeatmapWidget* map) {
  if (!map) map = map_;
  const QString name = map->run_box()->currentText();
  for (auto& r : runs_) {
    if (r.name != name || !r.attention) continue;
    const auto& a = *r.attention;
    const int64_t B = a.bins();
    if (i < 0 || j < 0 || i >= B || j >= B) return {};
    const int64_t want = head_->currentData().toLongLong();
    const size_t row = head_row(a, want);
    const int64_t t = a.positions[static_cast<size_t>(i)], s = a.positions[static_cast<size_t>(j)];
    auto span = [&](int64_t k) {  // a bin's positions, "p" or "p..q"
      const int64_t last = k + 1 < B ? a.positions[static_cast<size_t>(k + 1)] - 1 : a.length - 1;
      return last > a.positions[static_cast<size_t>(k)] ? QString("%1..%2").arg(a.positions[static_cast<size_t>(k)]).arg(last)
                                                        : QString::number(a.positions[static_cast<size_t>(k)]);
    };
    const double m = j > i ? 0.0 : a.M[row * B * B + i * B + j];
    const QString text = tr("t = %1 \"%2\" reads s = %3 \"%4\": %5 = %6 (head %7)")
                             .arg(span(i)).arg(around(a.tokens, t)).arg(span(j)).arg(around(a.tokens, s))
                             .arg(a.binned() ? tr("mean |M|") : QString("M")).arg(m, 0, 'g', 4).arg(a.heads[row]);
    map->set_readout(text);
    shade_strip(a, row, t);
    return text;
  }
  return {};
}

void AttentionView::show_runs() {
  const QSignalBlocker b1(head_), b2(map_->run_box()), b3(map2_->run_box());
  const QString second = map2_->run_box()->currentText();
  for (HeatmapWidget* m : {map_, map2_}) m->fill_run_box(runs_, [](const RunData& r) { return r.attention.has_value(); });
  // Unless chosen there before: the first map opens on a baseline run and the second on a
  // state-passing run (the comparison the tab is for), else on the run after the first's.
  auto first_named = [](QComboBox* box, const QString& prefix) {
    for (int i = 0; i < box->count(); ++i)
      if (box->itemText(i).section(':', -1).startsWith(prefix)) return i;  // "model:passing@seed=0" too
    return -1;
  };
  if (const int b = first_named(map_->run_box(), "baseline"); b >= 0 && first_fill_) map_->run_box()->setCurrentIndex(b);
  if (map2_->run_box()->findText(second) >= 0 && second != map_->run_box()->currentText()) {
    map2_->run_box()->setCurrentText(second);
  } else if (map2_->run_box()->count() > 1) {
    const int p = first_named(map2_->run_box(), "passing");
    map2_->run_box()->setCurrentIndex(p >= 0 && p != map_->run_box()->currentIndex()
                                          ? p
                                          : (map_->run_box()->currentIndex() + 1) % map2_->run_box()->count());
  }
  if (map_->run_box()->count() > 0) first_fill_ = false;
  std::vector<int64_t> heads;
  for (auto& r : runs_)
    if (r.attention)
      for (auto h : r.attention->heads)
        if (std::find(heads.begin(), heads.end(), h) == heads.end()) heads.push_back(h);
  std::sort(heads.begin(), heads.end());
  const QString keep = head_->currentText();
  head_->clear();
  head_->addItem(tr("mean over heads"), -1);
  for (auto h : heads) head_->addItem(tr("head %1").arg(h), static_cast<qlonglong>(h));
  if (head_->findText(keep) >= 0) head_->setCurrentText(keep);
  draw_curves();
  draw_map();
}

void AttentionView::draw_curves() {
  curves_->clear_series();
  const int64_t want = head_->currentData().toLongLong();
  for (auto& r : runs_) {
    if (!r.checked || !r.attention) continue;
    const auto& a = *r.attention;
    const size_t L = static_cast<size_t>(a.length);
    std::vector<size_t> rows;
    for (size_t i = 0; i < a.heads.size(); ++i)
      if (want < 0 || a.heads[i] == want) rows.push_back(i);
    if (rows.empty()) continue;
    std::vector<double> x, y;
    for (size_t d = 1; d < L; ++d) {
      double v = 0;
      for (size_t i : rows) v += a.by_distance[i * L + d] / double(rows.size());
      if (v > 0) x.push_back(double(d)), y.push_back(v);
    }
    curves_->add_series(r.name + (a.layer_kind.empty() ? tr(" (layer %1)").arg(a.layer)
                                                       : tr(" (layer %1, %2)").arg(a.layer).arg(QString::fromStdString(a.layer_kind))),
                        r.color, x, y);
  }
  curves_->reset_view();
}

void AttentionView::draw_map() {
  draw_map(map_);
  draw_map(map2_);
}

void AttentionView::draw_map(HeatmapWidget* map) {
  const QString name = map->run_box()->currentText();
  const int64_t want = std::max<int64_t>(head_->currentData().toLongLong(), -1);
  for (auto& r : runs_) {
    if (r.name != name || !r.attention) continue;
    const auto& a = *r.attention;
    const size_t row = head_row(a, want);
    const size_t B = static_cast<size_t>(a.bins());
    std::vector<double> pos(a.positions.begin(), a.positions.end()), values(B * B);
    double top = 0;
    for (size_t k = 0; k < B * B; ++k) top = std::max(top, std::abs(a.M[row * B * B + k]));
    for (size_t t = 0; t < B; ++t)  // |M| relative to the largest (above the diagonal: nothing)
      for (size_t s = 0; s < B; ++s)
        values[t * B + s] = s > t || top <= 0 ? NAN : std::abs(a.M[row * B * B + t * B + s]) / top;
    // A binned map's cells are uneven (one position each, then log-spaced): the axes name positions.
    // (the axes' labels then say "log-spaced"; each cell of a binned map is its pairs' mean |M|)
    // A hybrid's attention layer: M is its softmax itself, not an effective form.
    const bool softmax = a.layer_kind == "attention";
    map->set_title(softmax ? tr("Attention map (softmax) M[t, s]") : tr("Effective attention M[t, s]"));
    map->set_map(pos, pos, values, a.binned(), a.binned(), tr("s (position read)"), tr("t (position reading)"),
                 (softmax ? tr("M / max M, head %1, attention layer %2") : tr("|M| / max |M|, head %1, layer %2"))
                     .arg(a.heads[row])
                     .arg(a.layer));
    map->set_range(1e-4, 1.0);
    if (map == map_) shade_strip(a, row, a.length - 1);  // the last position's reading
    return;
  }
  map->clear_map();
  if (map == map_) strip_->clear();
}

}  // namespace statescope::views
