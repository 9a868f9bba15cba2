// plot_widget.cpp — shared plot behaviour (see plot_widget.h).
#include "views/plot_widget.h"

#include <functional>
#include "views/flow_layout.h"

#include "core/base/output_rule.h"
#include "views/robust_range.h"
#include "views/theme.h"

#include <QCheckBox>
#include <QFile>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QSvgGenerator>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <qcustomplot.h>

namespace statescope::views {

std::vector<double> smooth_ema(const std::vector<double>& y, double w) {
  std::vector<double> out(y.size());
  double acc = 0, norm = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    acc = w * acc + (1 - w) * y[i];
    norm = w * norm + (1 - w);
    out[i] = acc / norm;
  }
  return out;
}

PlotWidget::PlotWidget(const QString& title, QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(2, 2, 2, 2);
  // The controls wrap onto as many rows as the plot's width needs (flow_layout.h): two plots side by
  // side fit a 1280-pixel screen with every control whole.
  strip_ = new QWidget(this);
  strip_->setObjectName("toolbar");
  QSizePolicy sp(QSizePolicy::Preferred, QSizePolicy::Preferred);
  sp.setHeightForWidth(true);
  strip_->setSizePolicy(sp);
  bar_ = new FlowLayout(strip_);
  auto* reset = new QPushButton(tr("Reset view"), this);
  reset->setToolTip(tr("Fit all visible data (also: double-click the plot)"));
  logx_ = new QCheckBox(tr("log x"), this);
  logy_ = new QCheckBox(tr("log y"), this);
  smooth_ = new QSpinBox(this);
  smooth_->setRange(0, 99);
  smooth_->setSuffix(tr(" % smoothing"));
  smooth_->setToolTip(tr("Exponential moving average; the raw curve stays faint beneath"));
  bar_->addWidget(reset);
  bar_->addWidget(logx_);
  bar_->addWidget(logy_);
  bar_->addWidget(smooth_);
  raw_ = new QCheckBox(tr("raw"), this);
  raw_->setObjectName("raw_traces");
  raw_->setChecked(true);
  raw_->setToolTip(tr("With smoothing: the unsmoothed curves, faint beneath the smoothed ones (off by default when "
                      "the curves are dense: more than %1 points)").arg(kDenseRaw));
  bar_->addWidget(raw_);
  robust_ = new QCheckBox(tr("robust y"), this);
  robust_->setToolTip(tr("Reset view fits y to the runs that do not dominate it; the runs left out are named on "
                         "the plot and still reachable by zooming out or unticking this"));
  bar_->addWidget(robust_);
  v->addWidget(strip_);
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(title);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectLegend);
  plot_->setNoAntialiasingOnDrag(true);
  plot_->setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
  plot_->legend->setVisible(true);
  plot_->legend->setSelectableParts(QCPLegend::spItems);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, new QCPTextElement(plot_, title, QFont(font().family(), 10, QFont::Bold)));
  place_legend(false);  // beside once the figure is wide enough (fit_legend, before each replot)
  plot_->setMinimumSize(300, 200);
  v->addWidget(plot_, 1);
  readout_ = new QLabel(this);
  readout_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long read-out never widens the window
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(readout_);

  connect(reset, &QPushButton::clicked, this, &PlotWidget::reset_view);
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) { reset_view(); });
  connect(logx_, &QCheckBox::toggled, this, [this](bool on) { set_log_x(on); });
  connect(logy_, &QCheckBox::toggled, this, [this](bool on) { set_log_y(on); });
  connect(robust_, &QCheckBox::toggled, this, [this](bool) { reset_view(); });
  connect(raw_, &QCheckBox::clicked, this, [this](bool) {  // the user's choice (clicked: not set_raw_traces' own)
    raw_chosen_ = true;
    restyle();
    replot();
  });
  raw_->setEnabled(false);  // without smoothing the raw curves are the curves
  connect(smooth_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int v) {
    raw_->setEnabled(v > 0);
    rebuild_smoothing();
    on_smoothing_changed();
    replot();
  });
  connect(plot_, &QCustomPlot::legendClick, this, &PlotWidget::legend_click);
  connect(plot_, &QCustomPlot::beforeReplot, this, [this] { fit_legend(plot_->width(), plot_->height()); });
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { hover_at(e->position()); });
}

void PlotWidget::clear_series() {
  plot_->clearGraphs();
  plot_->clearItems();
  series_.clear();
  table_header_.clear();
  table_rows_.clear();
}

QCPGraph* PlotWidget::add_series(const QString& name, const QColor& color, const std::vector<double>& x,
                                 const std::vector<double>& y, bool smoothable, const std::vector<double>& err) {
  Series s{name, color, x, y, err, smoothable, nullptr, nullptr};
  s.raw = plot_->addGraph();
  s.raw->setName(name);
  s.raw->setPen(QPen(color, 1.5));
  s.raw->setData(QVector<double>(x.begin(), x.end()), QVector<double>(y.begin(), y.end()), true);
  if (!err.empty() && err.size() == y.size()) {  // a faint band of +-1 standard error
    QVector<double> lo(y.size()), hi(y.size());
    for (size_t i = 0; i < y.size(); ++i) lo[i] = y[i] - err[i], hi[i] = y[i] + err[i];
    auto* a = plot_->addGraph();
    auto* b = plot_->addGraph();
    a->setData(QVector<double>(x.begin(), x.end()), lo, true);
    b->setData(QVector<double>(x.begin(), x.end()), hi, true);
    a->setPen(Qt::NoPen);
    b->setPen(Qt::NoPen);
    QColor f = color;
    f.setAlpha(45);
    b->setBrush(f);
    b->setChannelFillGraph(a);
    a->removeFromLegend();
    b->removeFromLegend();
    a->setProperty("band_of", name);
    b->setProperty("band_of", name);
  }
  series_.push_back(s);
  if (!raw_chosen_) {  // dense curves: raw traces off until the user says otherwise
    bool dense = false;
    for (const auto& t : series_) dense = dense || (t.smoothable && t.y.size() > kDenseRaw);
    raw_->setChecked(!dense);
  }
  if (smoothable && smooth_->value() > 0) rebuild_smoothing();
  else if (!highlight_.isEmpty()) restyle();
  return s.raw;
}

void PlotWidget::set_highlight(const QStringList& names) {
  highlight_ = names;
  restyle();
  plot_->replot();
}

void PlotWidget::restyle() {
  const bool smoothing = smooth_->value() > 0;
  for (auto& s : series_) {
    const bool on = highlight_.contains(s.name), faded = !highlight_.isEmpty() && !on;
    QColor c = s.color;
    if (faded) c.setAlpha(50);
    const double wide = on ? 2.0 : 1.0;
    if (s.smooth) {
      QColor faint = c;
      faint.setAlpha(faded ? 25 : 60);
      s.raw->setPen(raw_->isChecked() ? QPen(faint, 1) : QPen(Qt::NoPen));
      s.smooth->setPen(QPen(c, 2 * wide));
    } else if (!(smoothing && s.smoothable)) {
      s.raw->setPen(QPen(c, 1.5 * wide));
    }
  }
}

void PlotWidget::set_raw_traces(bool on) {
  raw_chosen_ = true;
  raw_->setChecked(on);
  restyle();
  replot();
}

bool PlotWidget::raw_traces() const { return raw_->isChecked(); }

QStringList PlotWidget::series_names() const {
  QStringList out;
  for (auto& s : series_) out << s.name;
  return out;
}

void PlotWidget::rebuild_smoothing() {
  const double w = smooth_->value() / 100.0;
  for (auto& s : series_) {
    if (!s.smoothable) continue;
    if (s.smooth) {
      plot_->removeGraph(s.smooth);
      s.smooth = nullptr;
    }
    QColor faint = s.color;
    if (w > 0) {
      faint.setAlpha(60);
      s.raw->setPen(raw_->isChecked() ? QPen(faint, 1) : QPen(Qt::NoPen));
      s.raw->removeFromLegend();
      s.smooth = plot_->addGraph();
      s.smooth->setName(s.name);
      s.smooth->setPen(QPen(s.color, 2));
      auto sm = smooth_ema(s.y, w);
      s.smooth->setData(QVector<double>(s.x.begin(), s.x.end()), QVector<double>(sm.begin(), sm.end()), true);
      s.smooth->setVisible(s.raw->visible());
    } else {
      s.raw->setPen(QPen(s.color, 1.5));
      s.raw->addToLegend();
    }
    if (!highlight_.isEmpty()) restyle();
    // Standard-error bands belong to the raw curve: shown only without smoothing.
    for (int i = 0; i < plot_->graphCount(); ++i)
      if (plot_->graph(i)->property("band_of").toString() == s.name) plot_->graph(i)->setVisible(w == 0 && s.raw->visible());
  }
}

void PlotWidget::legend_click(QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
  auto* pli = qobject_cast<QCPPlottableLegendItem*>(item);
  if (!pli) return;
  QCPAbstractPlottable* p = pli->plottable();
  const bool show = !p->visible();
  for (auto& s : series_)
    if (s.raw == p || s.smooth == p) {
      s.raw->setVisible(show);
      if (s.smooth) s.smooth->setVisible(show);
      for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->property("band_of").toString() == s.name) plot_->graph(i)->setVisible(show);
    }
  p->setVisible(show);
  const Theme& t = theme(dark_);
  pli->setTextColor(show ? t.plot_foreground : t.hidden_series_text);
  item->setSelected(false);
  replot();
}

void PlotWidget::set_log_x(bool on) {
  if (logx_->isChecked() != on) logx_->setChecked(on);
  plot_->xAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  plot_->xAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  reset_view();
}

void PlotWidget::set_log_y(bool on) {
  if (logy_->isChecked() != on) logy_->setChecked(on);
  plot_->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  plot_->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  reset_view();
}

void PlotWidget::set_title(const QString& title) {
  if (auto* t = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0)); t && t->text() != title) {
    t->setText(title);
    plot_->replot(QCustomPlot::rpQueuedReplot);
  }
}

void PlotWidget::set_labels(const QString& x, const QString& y) {
  plot_->xAxis->setLabel(x);
  plot_->yAxis->setLabel(y);
}

void PlotWidget::add_vertical_marker(double x, const QString& label) {
  auto* line = new QCPItemStraightLine(plot_);
  line->point1->setCoords(x, 0);
  line->point2->setCoords(x, 1);
  QPen mp(theme(dark_).marker, 0, Qt::DashLine);
  mp.setCosmetic(true);
  line->setPen(mp);
  auto* text = new QCPItemText(plot_);
  text->position->setTypeX(QCPItemPosition::ptPlotCoords);
  text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  text->position->setCoords(x, 0.02);
  text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
  text->setText(" " + label);
  text->setColor(theme(dark_).marker);
}

void PlotWidget::reset_view() {
  plot_->rescaleAxes(true);
  clipped_.clear();
  if (clip_note_) clip_note_->setVisible(false);
  std::vector<std::vector<double>> ys;
  std::vector<int> which;
  for (size_t i = 0; i < series_.size(); ++i)
    if (series_[i].raw && series_[i].raw->visible()) ys.push_back(series_[i].y), which.push_back(static_cast<int>(i));
  const bool log = plot_->yAxis->scaleType() == QCPAxis::stLogarithmic;
  if (const auto r = robust_y_range(ys, log)) {
    QStringList names;
    for (int k : r->excluded) names << series_[which[k]].name;
    if (robust_->isChecked()) {
      clipped_ = names;
      if (log) plot_->yAxis->setRange(r->lo / 1.15, r->hi * 1.15);
      else {
        const double pad = std::max(1e-12, 0.06 * (r->hi - r->lo));
        plot_->yAxis->setRange(r->lo - pad, r->hi + pad);
      }
      if (!clip_note_) {
        clip_note_ = new QCPItemText(plot_);
        clip_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
        clip_note_->position->setCoords(0.01, 0.01);  // top left
        clip_note_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        clip_note_->setSelectable(false);
      }
      clip_note_->setText(tr("robust y: %1 beyond the range").arg(names.join(", ")));
      clip_note_->setColor(theme(dark_).hint);
      clip_note_->setVisible(true);
    } else {
      emit status((names.size() == 1 ? tr("%1 dominates the y range: tick \"robust y\" to fit the others")
                                      : tr("%1 dominate the y range: tick \"robust y\" to fit the others"))
                      .arg(names.join(", ")));
    }
  }
  replot();
}

void PlotWidget::set_robust_y(bool on) { robust_->setChecked(on); }
bool PlotWidget::robust_y() const { return robust_->isChecked(); }

void PlotWidget::sync_overlays() {
  plot_->legend->setVisible(legend_enabled_ && plot_->legend->itemCount() > 0);  // no empty box
  const bool empty = plot_->plottableCount() == 0;
  if (empty && !empty_hint_) {  // say what to do instead of showing bare axes
    empty_hint_ = new QCPItemText(plot_);
    empty_hint_->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty_hint_->position->setCoords(0.5, 0.5);
    empty_hint_->setTextAlignment(Qt::AlignCenter);
    empty_hint_->setSelectable(false);
  }
  if (empty_hint_) {
    empty_hint_->setText(empty_hint());
    empty_hint_->setVisible(empty);
    empty_hint_->setColor(theme(dark_).hint);
  }
}

void PlotWidget::set_empty_hint(const QString& text) {
  empty_text_ = text;
  replot();
}

QString PlotWidget::empty_hint() const {
  if (plot_->plottableCount() > 0) return {};
  return !empty_text_.isEmpty() ? empty_text_
                                : tr("No results yet\nRun \u25B8 Run experiment (Ctrl+R)\nor File \u25B8 Open experiment (Ctrl+O)");
}

void PlotWidget::replot() {
  sync_overlays();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void PlotWidget::set_table(const QStringList& header, const std::vector<std::vector<QString>>& rows) {
  table_header_ = header;
  table_rows_ = rows;
}

// Both exports follow the output rule (core/base/output_rule.h): written under a staging name and
// renamed when complete, so a failed export never leaves half a file where an old one was. The file
// dialog has asked before an existing file is replaced.
const std::vector<FigureSize>& figure_sizes() {
  static const std::vector<FigureSize> all{
      {QT_TRANSLATE_NOOP("views", "1200 x 800, the window's fonts"), 1200, 800, 0, 2.0},
      {QT_TRANSLATE_NOOP("views", "Paper, one column: 3.5 x 2.6 in, 8 pt, 300 dpi"), 336, 250, 8, 3.125},
      {QT_TRANSLATE_NOOP("views", "Paper, full width: 7 x 3.5 in, 9 pt, 300 dpi"), 672, 336, 9, 3.125},
      {QT_TRANSLATE_NOOP("views", "Slide: 1600 x 900, 20 pt"), 1600, 900, 20, 1.0},
  };
  return all;
}

bool PlotWidget::export_figure(const QString& path, const FigureSize& size, bool light) {
  std::vector<std::function<void()>> undo;  // every font put back as it was, last changed first
  if (size.font_pt > 0) {
    auto at = [](QFont f, double pt) {
      f.setPointSizeF(pt);
      return f;
    };
    const double pt = size.font_pt;
    QList<QCPAxis*> axes;
    for (auto* rect : plot_->axisRects()) axes += rect->axes();
    for (auto* e : plot_->plotLayout()->elements(true)) {
      if (auto* cs = qobject_cast<QCPColorScale*>(e)) axes << cs->axis();
      if (auto* t = qobject_cast<QCPTextElement*>(e)) {
        undo.push_back([t, f = t->font()] { t->setFont(f); });
        t->setFont(at(t->font(), pt + 1));  // a title a point larger
      }
    }
    for (auto* a : axes) {
      undo.push_back([a, l = a->labelFont(), k = a->tickLabelFont()] { a->setLabelFont(l), a->setTickLabelFont(k); });
      a->setLabelFont(at(a->labelFont(), pt));
      a->setTickLabelFont(at(a->tickLabelFont(), pt - 1));
    }
    if (auto* lg = plot_->legend) {
      undo.push_back([lg, f = lg->font()] { lg->setFont(f); });
      lg->setFont(at(lg->font(), pt - 1));
      for (int i = 0; i < lg->itemCount(); ++i) {
        auto* it = lg->item(i);
        if (!it) continue;  // an empty cell of a wrapped legend
        undo.push_back([it, f = it->font()] { it->setFont(f); });
        it->setFont(at(it->font(), pt - 1));
      }
    }
    undo.push_back([this, c = caption_pt_] { caption_pt_ = c; });
    caption_pt_ = std::max(5.0, pt - 2);
  }
  const bool ok = export_image(path, size.width, size.height, light, size.png_scale);
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) (*it)();
  if (!undo.empty()) plot_->replot();
  return ok;
}

bool PlotWidget::export_image(const QString& path, int w, int h, bool light, double png_scale) {
  if (w <= 0) w = plot_->width();
  if (h <= 0) h = plot_->height();
  // A figure for a page: drawn in the light theme whatever the window's, then the window's restored.
  const bool was_dark = dark_;
  if (light && was_dark) apply_theme(false);
  struct Restore {
    PlotWidget* p;
    bool dark;
    ~Restore() {
      if (dark) p->apply_theme(true);
    }
  } restore{this, light && was_dark};
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != "png" && suffix != "pdf" && suffix != "svg") return false;
  // The caption as a last row of the layout while the figure is drawn, removed after.
  struct Caption {
    QCustomPlot* plot;
    QCPTextElement* text = nullptr;
    ~Caption() {
      if (!text) return;
      plot->plotLayout()->remove(text);
      plot->plotLayout()->simplify();
    }
  } caption{plot_};
  if (!caption_.isEmpty()) {
    const int row = plot_->plotLayout()->rowCount();
    plot_->plotLayout()->insertRow(row);
    caption.text = new QCPTextElement(plot_, caption_, QFont(font().family(), 8));
    QFont cf = caption.text->font();
    cf.setPointSizeF(caption_pt_);
    caption.text->setFont(cf);
    caption.text->setTextColor(light || !dark_ ? QColor(60, 60, 60) : QColor(200, 200, 200));
    plot_->plotLayout()->addElement(row, 0, caption.text);
  }
  sync_overlays();
  fit_legend(w, h);  // the figure's own size; the window's again after it (the next replot)
  struct Refit {
    PlotWidget* p;
    ~Refit() { p->fit_legend(p->plot_->width(), p->plot_->height()); }
  } refit{this};
  try {
    StagedOutput out(path.toStdString(), OutputRule{true, {}, false});
    const QString tmp = QString::fromStdString(out.staging());
    bool ok = false;
    if (suffix == "png") ok = plot_->savePng(tmp, w, h, png_scale);
    if (suffix == "pdf") ok = plot_->savePdf(tmp, w, h);
    if (suffix == "svg") {
      QSvgGenerator gen;
      gen.setFileName(tmp);
      gen.setSize(QSize(w, h));
      gen.setViewBox(QRect(0, 0, w, h));
      // The presets' pixels are 1/96 inch (figure_sizes): a 336-pixel column is 3.5 in (88.9 mm), and
      // text in points is as wide as where the layout measured it (the generator's 72 dpi default made
      // the page 4.7 in and the text a third smaller than its boxes).
      gen.setResolution(96);
      // The SVG writer ignores clipping, and QCustomPlot draws a legend's line 5 px past its icon,
      // clipped everywhere else: widen the gap before the text so the line never touches it.
      QCPLegend* lg = plot_->legend;
      struct Padding {
        QCPLegend* lg;
        int was;
        ~Padding() { lg->setIconTextPadding(was); }
      } padding{lg, lg->iconTextPadding()};
      lg->setIconTextPadding(padding.was + 6);
      gen.setTitle(plot_->objectName());
      QCPPainter painter;
      if (!painter.begin(&gen)) return false;
      plot_->toPainter(&painter, w, h);
      ok = painter.end() && QFileInfo(tmp).size() > 0;
    }
    if (!ok) return false;  // the staging copy is removed; an old file stays
    out.finish(StagedOutput::Outcome::Replace);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool PlotWidget::export_csv(const QString& path) const {
  QString text;
  QTextStream o(&text);
  if (!table_header_.isEmpty()) {
    o << table_header_.join(',') << '\n';
    for (auto& r : table_rows_) o << QStringList(r.begin(), r.end()).join(',') << '\n';
  } else {
    // Long format: one row per point, so series of different lengths share one file.
    o << "series," << plot_->xAxis->label().replace(',', ';') << ',' << plot_->yAxis->label().replace(',', ';')
      << ",stderr\n";
    for (auto& s : series_)
      for (size_t i = 0; i < s.x.size(); ++i) {
        o << '"' << s.name << "\"," << QString::number(s.x[i], 'g', 10) << ',' << QString::number(s.y[i], 'g', 10) << ',';
        if (i < s.err.size()) o << QString::number(s.err[i], 'g', 10);
        o << '\n';
      }
  }
  o.flush();
  try {
    write_file_staged(path.toStdString(), text.toStdString(), OutputRule{true, {}, false});
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void PlotWidget::hover_at(const QPointF& px) {
  double best = std::numeric_limits<double>::infinity();
  QString text;
  for (auto& s : series_) {
    QCPGraph* g = s.smooth ? s.smooth : s.raw;
    if (!g->visible() || g->data()->isEmpty()) continue;
    const double x = plot_->xAxis->pixelToCoord(px.x());
    auto it = g->data()->findBegin(x, true);
    for (int k = 0; k < 2 && it != g->data()->constEnd(); ++k, ++it) {
      const double dx = plot_->xAxis->coordToPixel(it->key) - px.x();
      const double dy = plot_->yAxis->coordToPixel(it->value) - px.y();
      const double d = dx * dx + dy * dy;
      if (d < best) {
        best = d;
        text = QString("%1: x = %2, y = %3").arg(s.name).arg(it->key, 0, 'g', 6).arg(it->value, 0, 'g', 6);
      }
    }
  }
  if (!text.isEmpty()) {
    readout_->setText(text);
    emit status(text);
  }
}

void PlotWidget::set_legend_enabled(bool on) {
  legend_enabled_ = on;
  fit_legend(plot_->width(), plot_->height());
  replot();
}

// The legend beside the axis rect, never over the data (in the app and in exports): row 1 of the
// plot holds [axis rect | legend over empty space], under the title of row 0, which spans both. Inside
// the axis rect (top right) when the plot is too narrow to give it a column, and for plots without
// one (heatmaps: their colour scale takes that side).
void PlotWidget::place_legend(bool beside) {
  auto* grid = plot_->plotLayout();
  auto* inset = plot_->axisRect()->insetLayout();
  auto* row = qobject_cast<QCPLayoutGrid*>(grid->element(1, 0));  // null while the axis rect sits there
  if (beside && !row) {
    inset->take(plot_->legend);
    inset->simplify();
    QCPAxisRect* rect = plot_->axisRect();
    grid->take(rect);
    row = new QCPLayoutGrid;
    grid->addElement(1, 0, row);
    row->addElement(0, 0, rect);
    auto* column = new QCPLayoutGrid;
    row->addElement(0, 1, column);
    row->setColumnStretchFactor(1, 0.001);  // as narrow as its entries
    column->addElement(0, 0, plot_->legend);
    column->addElement(1, 0, new QCPLayoutElement(plot_));  // the space below it
    column->setRowStretchFactor(0, 0.001);
    column->setMargins(QMargins(0, 0, 4, 0));
  } else if (!beside && row) {
    QCPAxisRect* rect = plot_->axisRect();
    auto* column = qobject_cast<QCPLayoutGrid*>(row->element(0, 1));
    column->take(plot_->legend);
    row->take(rect);
    grid->remove(row);  // deletes the row, the legend's column and its spacer
    grid->addElement(1, 0, rect);
    inset->addElement(plot_->legend, Qt::AlignRight | Qt::AlignTop);
  }
}

// Where the legend goes for a figure of this size. Beside the plot when the figure is at least
// kLegendBesideWidth wide and the legend takes at most half of it; there, rather than squeeze its rows
// over one another as QCustomPlot does when they outnumber the room (text drawn on text, the last
// entries cut off), it wraps into more columns. Else inside, top right; where it would cover more than a
// third of the plot there it is left out, and a line at the top right says so (the Runs list shows each run's colour; hovering a
// curve names it). The room: the figure's height less its title, axis and caption (a generous 90 px);
// a row: its icon or its text, whichever is taller, with the item's margins.
void PlotWidget::fit_legend(int width, int height) {
  QCPLegend* lg = plot_->legend;
  // The entries (a wrapped legend's grid has empty cells: item() is null there).
  std::vector<QCPAbstractLegendItem*> items;
  for (int i = 0; i < lg->itemCount(); ++i)
    if (auto* it = lg->item(i)) items.push_back(it);
  const int n = static_cast<int>(items.size());
  int row = lg->iconSize().height();
  for (auto* it : items) row = std::max(row, QFontMetrics(it->font()).height());
  row += 4 + lg->rowSpacing();
  const int room = std::max(1, height - 90);
  const int rows = std::max(1, room / row);
  // Beside the plot when the figure is wide enough and the legend, wrapped into as many columns as
  // its rows need, takes at most half of it.
  int text_w = 0;
  for (auto* item : items)
    if (auto* it = qobject_cast<QCPPlottableLegendItem*>(item))
      text_w = std::max(text_w, QFontMetrics(it->font()).horizontalAdvance(it->plottable()->name()));
  const int wrap_beside = n > rows ? rows : 0;
  const int columns = wrap_beside > 0 ? (n + wrap_beside - 1) / wrap_beside : 1;
  const int legend_w = columns * (lg->iconSize().width() + lg->iconTextPadding() + text_w + 16);
  const bool shown = legend_enabled_ && n > 0;
  const bool beside = shown && width >= kLegendBesideWidth && legend_w <= width / 2;
  if (beside != legend_beside()) place_legend(beside);
  // Inside, one taller than a third of the plot would hide the data: left out, and said.
  const bool crowded = shown && !beside && n * row > room / 3;
  const int wrap = beside ? wrap_beside : 0;
  if (lg->wrap() != wrap) {
    lg->setWrap(wrap);
    lg->setFillOrder(QCPLayoutGrid::foRowsFirst, true);  // rearranged: down the first column, then the next
  }
  lg->setVisible(legend_enabled_ && n > 0 && !crowded);
  if (crowded && legend_enabled_ && !legend_note_) {
    legend_note_ = new QCPItemText(plot_);
    legend_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
    legend_note_->position->setCoords(0.99, 0.01);  // top right, where the legend would be
    legend_note_->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    legend_note_->setSelectable(false);
  }
  if (legend_note_) {
    legend_note_->setText(tr("%1 curves: legend left out at this size (colours as in the Runs list)").arg(n));
    legend_note_->setColor(theme(dark_).hint);
    legend_note_->setVisible(crowded && legend_enabled_);
  }
}

bool PlotWidget::legend_shown() const { return plot_->legend->visible(); }

int PlotWidget::legend_columns() const { return plot_->legend->columnCount(); }

bool PlotWidget::legend_beside() const { return qobject_cast<QCPLayoutGrid*>(plot_->plotLayout()->element(1, 0)); }

void PlotWidget::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  replot();  // where the legend goes at this size: fit_legend, before the replot
}

void PlotWidget::set_smoothing(int percent) { smooth_->setValue(percent); }

void PlotWidget::hide_line_controls() {
  logx_->hide();
  logy_->hide();
  smooth_->hide();
  robust_->hide();
  raw_->hide();
}

QString PlotWidget::hover_text() const { return readout_->text(); }

void PlotWidget::set_readout(const QString& text) {
  readout_->setText(text);
  emit status(text);
}

void PlotWidget::apply_theme(bool dark) {
  dark_ = dark;
  const Theme& t = theme(dark);
  const QColor bg = t.plot_background, fg = t.plot_foreground, grid = t.plot_grid;
  plot_->setBackground(bg);
  for (QCPAxis* a : {plot_->xAxis, plot_->yAxis, plot_->xAxis2, plot_->yAxis2}) {
    a->setBasePen(QPen(fg));
    a->setTickPen(QPen(fg));
    a->setSubTickPen(QPen(fg));
    a->setTickLabelColor(fg);
    a->setLabelColor(fg);
    // Solid cosmetic grid lines: a width-1 dotted pen made every replot of a full-size plot take
    // 130-180 ms in the raster engine (measured), which stalled the event loop during runs.
    QPen gp(grid, 0, Qt::SolidLine);
    gp.setCosmetic(true);
    a->grid()->setPen(gp);
  }
  plot_->legend->setBrush(t.legend_background);
  plot_->legend->setTextColor(fg);
  plot_->legend->setBorderPen(QPen(grid));
  if (auto* t = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0))) t->setTextColor(fg);
  replot();
}

}  // namespace statescope::views
