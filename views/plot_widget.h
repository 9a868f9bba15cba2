// plot_widget.h — a QCustomPlot with the conventions every statescope plot shares: wheel zoom and
// drag pan, reset view, hover read-out of the value under the cursor, a legend whose entries hide
// their series on click, true log axes, optional smoothing with the raw curve faint beneath,
// export to PNG/SVG/PDF (with legend and labels) and of the plotted data to CSV.
#pragma once
#include <QPointer>
#include <QWidget>
#include <vector>

#include "views/flow_layout.h"  // toolbar()

class QCustomPlot;
class QCPGraph;
class QCPAbstractPlottable;
class QCPItemText;
class QCPLegend;
class QCPAbstractLegendItem;
class QLabel;
class QCheckBox;
class QSpinBox;
class QMouseEvent;

namespace statescope::views {

// A size for exported figures: logical pixels (1/96 inch; a PDF or SVG has that many points x 0.75)
// and the point size of its text (0: the window's fonts); a PNG has png_scale device pixels per
// logical pixel (3.125: 300 dpi for the paper sizes).
struct FigureSize {
  const char* name;  // as the View ▸ Figure size menu says it
  int width, height;
  double font_pt;
  double png_scale;
};
// The sizes offered, the first the default: 1200 x 800 in the window's fonts (PNG 2400 x 1600); a
// paper's single column (3.5 x 2.6 in, 8 pt) and full width (7 x 3.5 in, 9 pt) at 300 dpi; a 16:9
// slide (1600 x 900, 20 pt).
const std::vector<FigureSize>& figure_sizes();

class PlotWidget : public QWidget {
  Q_OBJECT
 public:
  explicit PlotWidget(const QString& title, QWidget* parent = nullptr);

  QCustomPlot* plot() const { return plot_; }
  FlowLayout* toolbar() const { return bar_; }  // views add their selectors here (insertWidget)
  QWidget* toolbar_strip() const { return strip_; }  // the widget that holds them (tests: nothing cut)

  // Series API for line plots: the raw data is kept for CSV export and smoothing.
  void clear_series();
  QCPGraph* add_series(const QString& name, const QColor& color, const std::vector<double>& x,
                       const std::vector<double>& y, bool smoothable = false, const std::vector<double>& err = {});
  int series_count() const { return static_cast<int>(series_.size()); }
  QStringList series_names() const;
  void set_log_x(bool on);
  void set_log_y(bool on);
  void set_labels(const QString& x, const QString& y);
  void set_title(const QString& title);  // the heading above the plot
  void add_vertical_marker(double x, const QString& label);  // e.g. the training context T
  void reset_view();          // rescale to all visible data
  void replot();
  void place_legend(bool beside);
  void fit_legend(int width, int height);  // wraps the legend, or leaves it out, for a figure of this size
  void resizeEvent(QResizeEvent* e) override;

  // Table export for non-line views (heatmaps): header + rows; line views use the series.
  void set_table(const QStringList& header, const std::vector<std::vector<QString>>& rows);

  // .png .svg .pdf by suffix; light: the light theme whatever the window's; a PNG is drawn at
  // png_scale device pixels per logical pixel.
  bool export_image(const QString& path, int width = 0, int height = 0, bool light = true, double png_scale = 2.0);
  // The same at one of figure_sizes(): its size, and every text of the figure (titles, axis labels,
  // tick labels, legend, colour scale, caption) at its point size while it is drawn.
  bool export_figure(const QString& path, const struct FigureSize& size, bool light = true);
  bool export_csv(const QString& path) const;
  // A line under exported figures (PNG/SVG/PDF) naming what they show, e.g. the file and its runs; not
  // drawn in the window. "" : none.
  void set_export_caption(const QString& caption) { caption_ = caption; }
  QString hover_text() const;  // the current read-out (tests)
  void set_readout(const QString& text);  // a view's own read-out (e.g. a colour map's cell), also to the status bar
  void hover_at(const QPointF& pixel);  // what a mouse move there does

  void apply_theme(bool dark);  // colours of axes, grid, legend, background
  // Series whose names are listed stand out (thicker), the others fade; empty: all as drawn. Kept for
  // the series added later (a redraw).
  void set_highlight(const QStringList& names);
  QStringList highlight() const { return highlight_; }
  void hide_line_controls();     // log/smoothing toggles make no sense for colour maps
  void set_smoothing(int percent);  // EMA weight in percent (0: off)
  void set_legend_enabled(bool on);  // shown only when enabled and holding at least one entry
  // Where it is: beside the plot (true) when enabled, the figure at least kLegendBesideWidth wide and
  // the legend (wrapped into columns as its rows need) at most half of it; else inside, top right.
  bool legend_beside() const;
  // The legend's columns: one unless its entries outnumber what the plot's height holds (fit_legend).
  int legend_columns() const;
  // Whether the legend is drawn: not when disabled or empty, nor inside the plot where it would cover
  // more than a third of it (a note says so instead; fit_legend).
  bool legend_shown() const;
  static constexpr int kLegendBesideWidth = 480;
  // "robust y": Reset view fits y to the runs that do not dominate it (robust_range.h), names the
  // ones left out on the plot; off: every point. The loss view starts with it on.
  void set_robust_y(bool on);
  bool robust_y() const;
  // "raw": with smoothing on, the unsmoothed curves faint beneath the smoothed ones. Until the user
  // chooses, it is on for sparse curves and off when any smoothable curve has more than kDenseRaw
  // points (per-position curves: the raw traces would turn the far half of a log-x plot into noise).
  void set_raw_traces(bool on);  // the user's choice: kept from then on
  bool raw_traces() const;
  static constexpr size_t kDenseRaw = 1000;
  // What an empty plot says ("" : "No results yet", run or open an experiment); the window says why
  // a tab of an open experiment is empty (an analysis it did not ask for). The shown text, or "".
  void set_empty_hint(const QString& text);
  QString empty_hint() const;
  QStringList clipped_series() const { return clipped_; }  // left out of the y range by the last reset

 signals:
  void status(const QString& text);

 protected:
  virtual void on_smoothing_changed() {}

 private:
  void sync_overlays();  // legend only with entries; a hint on an empty plot
  struct Series {
    QString name;
    QColor color;
    std::vector<double> x, y, err;
    bool smoothable = false;
    QCPGraph* raw = nullptr;      // faint when smoothing is on
    QCPGraph* smooth = nullptr;
  };
  void rebuild_smoothing();
  void restyle();  // every series' pens from its colour, the smoothing and the highlight
  void legend_click(QCPLegend* legend, QCPAbstractLegendItem* item, QMouseEvent* event);

  QStringList highlight_;
  QCustomPlot* plot_;
  FlowLayout* bar_;
  QWidget* strip_;
  QLabel* readout_;
  QCheckBox *logx_, *logy_;
  QSpinBox* smooth_;
  QCheckBox* robust_;
  QCheckBox* raw_;
  QString caption_;  // set_export_caption
  double caption_pt_ = 8;  // the caption's point size (export_figure sets it with the figure's)
  bool raw_chosen_ = false;  // the user ticked or unticked "raw": no automatic choice any more
  QStringList clipped_;
  QPointer<QCPItemText> clip_note_;
  QPointer<QCPItemText> legend_note_;  // "legend left out" (fit_legend)
  std::vector<Series> series_;
  QStringList table_header_;
  std::vector<std::vector<QString>> table_rows_;
  bool dark_ = false;
  bool legend_enabled_ = true;
  QPointer<QCPItemText> empty_hint_;  // null again once clear_series() deletes the items
  QString empty_text_;                // set_empty_hint's ("" : the default)
};

// Exponential moving average with the bias correction used by TensorBoard (weight in [0, 1)).
std::vector<double> smooth_ema(const std::vector<double>& y, double weight);

}  // namespace statescope::views
