// main_window.cpp — window, menus, live run wiring, files, export, settings.
#include "app/gui/main_window.h"
#include "core/store/analysis_record.h"
#include "app/gui/elided_label.h"
#include "views/view_registry.h"

#include "core/base/output_rule.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QElapsedTimer>
#include <QDir>
#include <QRegularExpression>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QLabel>
#include <QListView>
#include <QMenuBar>
#include <QMessageBox>
#include <algorithm>
#include <cstdio>
#include <QShowEvent>
#include <QGuiApplication>
#include <QScreen>
#include <QScrollBar>
#include <QScrollArea>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "app/gui/experiment_panel.h"
#include "app/gui/file_loader.h"
#include "app/gui/tab_groups.h"
#include "app/gui/empty_page.h"
#include "views/sweep_view.h"
#include "views/heatmap_view.h"
#include "views/line_views.h"
#include "views/runs_table_view.h"
#include "views/plot_widget.h"
#include "core/report/html_report.h"
#include "core/compute/runtime.h"
#include "core/experiment/sweep.h"
#include "core/base/paths.h"
#include "core/base/output_lock.h"
#include "core/store/run_label.h"

namespace statescope::gui {

QString experiments_folder() {
  // Not AppDataLocation: with the organisation and the application both "statescope" it names the
  // folder twice (~/.local/share/statescope/statescope).
  return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + "/statescope/experiments";
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("statescope");
  setAcceptDrops(true);
  panel_ = new ExperimentPanel(this);
  panel_->set_default_output_folder(experiments_folder());
  auto* pd = new QDockWidget(tr("Experiment"), this);
  pd->setObjectName("experiment_dock");
  // The form scrolls when the screen is short (a 720-line laptop), so the Runs list keeps its share.
  auto* scroll = new QScrollArea(pd);
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(panel_->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
  // Edit / Run / Cancel stay under the scrolling form, never below the fold.
  auto* dock_body = new QWidget(pd);
  auto* db = new QVBoxLayout(dock_body);
  db->setContentsMargins(0, 0, 0, 0);
  db->addWidget(scroll, 1);
  db->addWidget(panel_->button_bar());  // reparented out of the panel's own layout
  pd->setWidget(dock_body);
  addDockWidget(Qt::LeftDockWidgetArea, pd);
  panel_dock_ = pd;
  run_set_ = new RunSet(this);
  list_ = new QListView(this);
  list_->setModel(run_set_);
  list_->setToolTip(tr("Checked runs are overlaid in every view; right-click a run to rename it"));
  list_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(list_, &QListView::customContextMenuRequested, this, [this](const QPoint& at) {
    const QModelIndex i = list_->indexAt(at);
    if (!i.isValid()) return;
    const QString name = run_set_->runs()[i.row()].name;
    QMenu menu(this);
    QAction* ren = menu.addAction(tr("Rename…"));
    ren->setEnabled(!running_);
    if (menu.exec(list_->viewport()->mapToGlobal(at)) == ren) ask_rename(name);
  });
  auto* ld = new QDockWidget(tr("Runs"), this);
  ld->setObjectName("runs_dock");
  ld->setWidget(list_);
  addDockWidget(Qt::LeftDockWidgetArea, ld);
  runs_dock_ = ld;

  build_views();
  for (auto* p : findChildren<views::PlotWidget*>())
    connect(p, &views::PlotWidget::status, this, [this](const QString& s) { statusBar()->showMessage(s, 4000); });

  bar_ = new QProgressBar(this);
  bar_->setMaximumWidth(260);
  bar_->setVisible(false);
  status_ = new ElidedLabel(this);  // whole when there is room, "…" and a tooltip when not; never widens the window
  status_->setObjectName("status");
  statusBar()->addPermanentWidget(status_);
  statusBar()->addPermanentWidget(bar_);

  redraw_ = new QTimer(this);
  redraw_->setInterval(40);  // at most 25 redraws per second
  connect(redraw_, &QTimer::timeout, this, [this] {
    if (dirty_) refresh_views();
    else if (dirty_loss_) refresh_loss();
  });
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int) { refresh_current(); });
  redraw_->start();
  refresh_views();  // with nothing open every tab says so (over its view: no empty axes)
  latency_ = new QTimer(this);
  latency_->setInterval(10);
  latency_->setTimerType(Qt::PreciseTimer);
  connect(latency_, &QTimer::timeout, this, &MainWindow::latency_tick);

  qRegisterMetaType<Progress>();
  qRegisterMetaType<views::RunData>();
  worker_ = new RunWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(worker_, &RunWorker::progress, this, &MainWindow::on_progress);
  connect(worker_, &RunWorker::run_loaded, this, &MainWindow::on_run_loaded);
  connect(worker_, &RunWorker::finished, this, &MainWindow::on_finished);
  connect(panel_, &ExperimentPanel::run_requested, this, [this] { start_run(); });
  connect(panel_, &ExperimentPanel::cancel_requested, this, &MainWindow::cancel_run);
  connect(run_set_, &RunSet::checks_changed, this, [this] { dirty_ = true; });
  connect(run_set_, &QAbstractItemModel::modelReset, this,
          [this] { QTimer::singleShot(0, this, [this] { fit_run_list(); }); });
  connect(run_set_, &QAbstractItemModel::rowsInserted, this,
          [this] { QTimer::singleShot(0, this, [this] { fit_run_list(); }); });
  thread_.start();

  build_menus();
  QSettings s;
  recent_files_ = s.value("files/recent").toStringList();
  update_recent_menu();
  restoreGeometry(s.value("window/geometry").toByteArray());
  restoreState(s.value("window/state").toByteArray());
  set_dark(s.value("view/dark", true).toBool());
  QFile demo(QString::fromStdString(statescope::data_path("experiments/demo.json")));
  if (demo.open(QIODevice::ReadOnly)) {
    panel_->load_spec(QString::fromUtf8(demo.readAll()));
  } else {  // an install without its data: say where it looked (after the window shows, and not when quiet)
    const QString why = tr("%1: the demo experiment is missing, so is the embedded model it runs (%2).")
                            .arg(demo.fileName(), QString::fromStdString(statescope::data_dir_searched()));
    QTimer::singleShot(0, this, [this, why] { error(tr("statescope's data folder not found"), why); });
  }
  first_start_ = !s.value("window/geometry").isValid();
  fit_to_screen(first_start_);
}

void MainWindow::fit_to_screen(bool first_start) {
  QScreen* sc = QGuiApplication::screenAt(geometry().center());
  if (!sc) sc = screen();
  if (!sc) return;
  const QRect avail = sc->availableGeometry();
  // A window manager adds a frame: keep room for it (the title bar is below 40 pixels everywhere).
  const QSize room(avail.width(), std::max(200, avail.height() - 40));
  QSize size = first_start ? QSize(avail.width() * 9 / 10, avail.height() * 9 / 10) : this->size();
  size = size.boundedTo(room).expandedTo(minimumSizeHint().boundedTo(room));
  resize(size);
  QPoint p = first_start ? avail.center() - QPoint(size.width() / 2, size.height() / 2) : pos();
  p.setX(std::clamp(p.x(), avail.left(), std::max(avail.left(), avail.right() + 1 - size.width())));
  p.setY(std::clamp(p.y(), avail.top(), std::max(avail.top(), avail.bottom() + 1 - size.height() - 30)));
  move(p);
  if (first_start) {  // the form about a quarter of the width; the plots the rest
    const int w = std::clamp(size.width() / 4, panel_dock_->minimumSizeHint().width(), 460);
    resizeDocks({panel_dock_}, {w}, Qt::Horizontal);
  }
  fit_run_list();
}

void MainWindow::fit_run_list() {
  const int n = std::max(3, run_set_->rowCount());
  const int row = run_set_->rowCount() > 0 ? list_->sizeHintForRow(0) : list_->fontMetrics().height() + 6;
  const int chrome = std::max(0, runs_dock_->height() - list_->viewport()->height());  // title bar and frames
  if (list_->viewport()->height() >= n * row + 2) return;  // all shown already: a size the user chose stays
  const int want = n * row + chrome + 4;
  const int cap = height() * 55 / 100;
  resizeDocks({runs_dock_}, {std::min(want, cap)}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!shown_) {  // the docks' shares take effect once the window is laid out
    shown_ = true;
    QTimer::singleShot(0, this, [this] { fit_to_screen(first_start_); });
  }
}

// The tabs: one per registered view (views/view_registry.h), in its order; the window only ever
// talks to them as RunsView. The first is the training loss, redrawn alone while training runs.
void MainWindow::build_views() {
  tabs_ = new QTabWidget(this);
  for (const auto& v : views::view_registry()) {
    QWidget* w = v.make();
    tabs_->addTab(w, QCoreApplication::translate("views", v.title));
    views_.push_back(views::runs_view(w));
    empty_pages_.push_back(new EmptyPage(w));
  }
  for (int i = 0; i < tabs_->count(); ++i) {
    if (auto* l = dynamic_cast<views::LossView*>(tabs_->widget(i))) loss_ = l, loss_index_ = i;
    if (auto* t = dynamic_cast<views::RunsTableView*>(tabs_->widget(i))) {
      table_index_ = i;
      // Rows selected in the Runs table stand out in every plot (the others fade).
      t->rename = [this](const QString& name) { ask_rename(name); };
      t->selected = [this](const QStringList& names) {
        highlighted_ = names;
        for (int k = 0; k < tabs_->count(); ++k)
          for (auto* p : plots_in_tab(k)) p->set_highlight(names);
      };
    }
  }
  // Two rows of tabs, groups above and the chosen group's tabs below, so that every tab fits at 1280 px.
  QStringList groups;
  for (const auto& v : views::view_registry()) groups << QCoreApplication::translate("views", v.group);
  auto* central = new QWidget(this);
  auto* lay = new QVBoxLayout(central);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  tab_groups_ = new TabGroups(tabs_, groups, central);
  lay->addWidget(tab_groups_);
  lay->addWidget(tabs_);
  setCentralWidget(central);
}

MainWindow::~MainWindow() {
  QSettings().setValue("files/recent", recent_files_);
  worker_->cancel();
  thread_.quit();
  thread_.wait();
}

void MainWindow::build_menus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open experiment..."), QKeySequence::Open, this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Open experiment"), {}, tr("Experiment files (*.h5)"));
    if (!p.isEmpty()) open_file(p);
  });
  file->addAction(tr("&Add runs from file..."), QKeySequence(tr("Ctrl+Shift+O")), this, [this] {
    const QStringList ps =
        QFileDialog::getOpenFileNames(this, tr("Add runs from experiment files"), {}, tr("Experiment files (*.h5)"));
    for (const QString& p : ps)
      if (!add_file(p)) break;
  });
  recent_ = file->addMenu(tr("Open &recent"));
  file->addAction(tr("&Save as..."), QKeySequence::Save, this, &MainWindow::save_as);
  file->addSeparator();
  file->addAction(tr("&Export plot (PNG/SVG/PDF)..."), QKeySequence(tr("Ctrl+E")), this, [this] { export_tab(false); });
  file->addAction(tr("Export plot &data (CSV)..."), QKeySequence(tr("Ctrl+Shift+E")), this, [this] { export_tab(true); });
  file->addAction(tr("Export e&very tab (PNG and CSV)..."), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export every tab into a folder"));
    if (dir.isEmpty()) return;
    const QStringList written = export_all_tabs_to(dir);
    statusBar()->showMessage(tr("Wrote %1 files to %2").arg(written.size()).arg(dir), 8000);
  });
  file->addAction(tr("Export &report (HTML)..."), this, [this] {
    if (file_.isEmpty()) return error(tr("No experiment"), tr("Open or run an experiment first"));
    const QString p = QFileDialog::getSaveFileName(this, tr("Export report"), QFileInfo(file_).completeBaseName() + ".html",
                                                   tr("HTML (*.html)"));
    if (!p.isEmpty()) export_report(p);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  auto* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(panel_->run_action());     // shared with the panel's Run button (Ctrl+R)
  run->addAction(panel_->cancel_action());  // and its Cancel button (Esc)
  run->addAction(tr("Edit spec as &JSON..."), QKeySequence(tr("Ctrl+J")), panel_, &ExperimentPanel::edit_json);
  auto* view = menuBar()->addMenu(tr("&View"));
  auto* dark = view->addAction(tr("&Dark theme"));
  dark->setCheckable(true);
  dark->setChecked(dark_);
  connect(dark, &QAction::toggled, this, &MainWindow::set_dark);
  // Exported figures go on a page: light by default, whatever the window's theme.
  auto* light = view->addAction(tr("&Export figures on a light background"));
  light->setObjectName("export_light");
  light->setCheckable(true);
  export_light_ = QSettings().value("view/export_light", true).toBool();
  light->setChecked(export_light_);
  connect(light, &QAction::toggled, this, [this](bool on) {
    export_light_ = on;
    QSettings().setValue("view/export_light", on);
  });
  // Exported figures at a size ready for their page: the window's, a paper's column or width, a slide.
  auto* sizes = view->addMenu(tr("Exported &figure size"));
  auto* size_group = new QActionGroup(this);
  figure_size_ = std::clamp(QSettings().value("view/figure_size", 0).toInt(), 0,
                            static_cast<int>(views::figure_sizes().size()) - 1);
  for (int i = 0; i < static_cast<int>(views::figure_sizes().size()); ++i) {
    QAction* a = sizes->addAction(QCoreApplication::translate("views", views::figure_sizes()[static_cast<size_t>(i)].name));
    a->setObjectName(QString("figure_size_%1").arg(i));
    a->setCheckable(true);
    a->setChecked(i == figure_size_);
    size_group->addAction(a);
    connect(a, &QAction::triggered, this, [this, i] { set_figure_size(i); });
  }
  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About statescope"), this, &MainWindow::about);
  update_recent_menu();
}

void MainWindow::set_figure_size(int index) {
  if (index < 0 || index >= static_cast<int>(views::figure_sizes().size())) return;
  figure_size_ = index;
  QSettings().setValue("view/figure_size", index);
  if (auto* a = findChild<QAction*>(QString("figure_size_%1").arg(index))) a->setChecked(true);
}

void MainWindow::error(const QString& title, const QString& text) {
  last_message_ = text;
  statusBar()->showMessage(title + ": " + text, 10000);
  if (!quiet_) QMessageBox::critical(this, title, text);
}

// The runs of an experiment file, or (after an error dialog) nothing; what is shown stays as it is.
std::optional<views::Runs> MainWindow::read_runs(const QString& path) {
  try {
    std::vector<std::string> unreadable;
    auto runs = load_runs(path.toStdString(), &unreadable);
    if (!unreadable.empty()) {  // the healthy runs open; the damaged ones are named
      QStringList why;
      for (const auto& u : unreadable) why << QString::fromStdString(u);
      error(tr("Some runs could not be read"),
            tr("%1 of the %2 runs in %3 could not be read and are left out; the others are shown.\n\n%4")
                .arg(unreadable.size())
                .arg(unreadable.size() + runs.size())
                .arg(QFileInfo(path).fileName(), why.join("\n")));
    }
    return runs;
  } catch (const std::exception& e) {
    error(tr("Cannot open experiment"), QString::fromStdString(e.what()));
    return std::nullopt;
  }
}

bool MainWindow::open_file(const QString& path) {
  auto runs = read_runs(path);
  if (!runs) return false;
  run_set_->reset(std::move(*runs), path);
  file_ = path;
  // The panel shows how the file was made, so "Run" repeats (or varies) it.
  QString spec_note;
  if (const std::string spec = read_spec(path.toStdString()); !spec.empty())
    if (const QString why = panel_->load_spec(QString::fromStdString(spec)); !why.isEmpty())
      spec_note = tr(" (its spec does not load into the panel: %1)").arg(why);
  setWindowTitle(QString("statescope — %1").arg(QFileInfo(path).fileName()));
  add_recent(path);
  tabs_->setCurrentIndex(table_index_);  // the headline first
  refresh_views();
  statusBar()->showMessage(tr("Opened %1: %2 runs%3").arg(path).arg(run_set_->size()).arg(spec_note), spec_note.isEmpty() ? 5000 : 15000);
  return true;
}

bool MainWindow::add_file(const QString& path) {
  if (file_.isEmpty()) return open_file(path);
  if (running_) {
    error(tr("Cannot add runs"), tr("An experiment is running; add %1 when it has finished.").arg(path));
    return false;
  }
  auto loaded = read_runs(path);
  if (!loaded) return false;
  views::Runs more = std::move(*loaded);
  const int n_more = static_cast<int>(more.size());
  run_set_->append(std::move(more), path);  // every run names its file's short tag
  setWindowTitle(QString("statescope — %1 + %2 more").arg(QFileInfo(file_).fileName()).arg(run_set_->files() - 1));
  add_recent(path);
  tabs_->setCurrentIndex(table_index_);
  refresh_views();
  statusBar()->showMessage(tr("Added %1 from %2").arg(n_more == 1 ? tr("1 run") : tr("%1 runs").arg(n_more), path),
                           5000);
  return true;
}

bool MainWindow::rename_run(const QString& name, const QString& display_in) {
  const QString display = display_in.trimmed();
  const int row = run_set_->find(name);
  if (row < 0) return false;
  const views::RunData& r = run_set_->runs()[row];
  const QString why = running_ ? tr("An experiment is running; rename runs when it has finished.")
                      : r.file.isEmpty() || r.in_file.isEmpty() ? tr("The run has no file yet.")
                                                               : QString();
  if (!why.isEmpty()) {
    error(tr("Cannot rename %1").arg(name), why);
    return false;
  }
  // The name it will be shown as (its file's tag kept) must stay one run's: runs are found by it.
  const QString to = run_set_->shown_as(row, display);
  for (int i = 0; i < run_set_->size(); ++i)
    if (i != row && run_set_->runs()[i].name == to) {
      error(tr("Cannot rename %1").arg(name), tr("Another run is shown as \"%1\".").arg(to));
      return false;
    }
  try {
    set_run_display_name(r.file.toStdString(), r.in_file.toStdString(), display.toStdString());
  } catch (const std::exception& e) {
    error(tr("Cannot rename %1").arg(name), QString::fromStdString(e.what()));
    return false;
  }
  const bool was_highlighted = highlighted_.removeAll(name) > 0;
  run_set_->set_display(row, display);
  if (was_highlighted) highlighted_ << run_set_->runs()[row].name;
  refresh_views();
  statusBar()->showMessage(tr("%1 is shown as %2 (written to %3)").arg(r.in_file, run_set_->runs()[row].name, r.file), 5000);
  return true;
}

void MainWindow::ask_rename(const QString& name) {
  const int row = run_set_->find(name);
  if (row < 0) return;
  const views::RunData& r = run_set_->runs()[row];
  bool ok = false;
  const QString d = QInputDialog::getText(this, tr("Rename run"),
                                          tr("Display name of run '%1' in %2 (empty: its own name).\n"
                                             "Stored in the file; the run's group and data stay as they are.")
                                              .arg(r.in_file, QFileInfo(r.file).fileName()),
                                          QLineEdit::Normal, r.display.isEmpty() ? r.in_file : r.display, &ok);
  if (ok) rename_run(name, d);
}

void MainWindow::start_run(const QString& out, bool replace) {
  if (running_) return;
  const QString spec = panel_->spec_json();
  if (spec.isEmpty()) {
    error(tr("Invalid experiment"), panel_->problems().join("\n"));
    if (quiet_) emit run_finished(false);
    return;
  }
  size_t planned = 0;  // a large sweep is started only when the user says so (quiet: refused)
  QString compute;      // what the runs compute on, said in the status bar: "cpu bf16 AVX512-BF16 loop-scan"
  try {
    const auto checked = check_spec(spec.toStdString(), "the experiment panel");
    planned = plan_runs(checked).size();
    running_asks_ = {"eval"};  // what the tabs wait for while it runs, rather than call it not asked
    for (const auto& [key, section] : checked.analyses.sections) running_asks_.insert(key);
    if (checked.posttrain.steps > 0 || checked.pretrain) running_asks_.insert("train");
    if (!checked.sweep.empty()) running_asks_.insert("sweep");
    compute = QString::fromStdString(make_compute(checked.device, checked.precision, checked.scan, default_compute()).summary());
  } catch (const std::exception&) {
    planned = 0;  // the run itself reports a bad spec by name
  }
  if (planned > kSweepConfirmRuns &&
      (quiet_ || QMessageBox::question(this, tr("Run a large sweep?"),
                                       tr("This experiment makes %1 runs (more than %2). Start it?")
                                           .arg(planned).arg(kSweepConfirmRuns)) != QMessageBox::Yes)) {
    error(tr("Not started"), tr("The sweep makes %1 runs; not started without confirmation").arg(planned));
    if (quiet_) emit run_finished(false);
    return;
  }
  QString path = out.isEmpty() ? panel_->output_path() : out;  // the panel's Output field, or a new file
  bool overwrite = replace;
  if (path.isEmpty()) {  // a new file of its own, never an existing one
    const QString dir = experiments_folder();
    QDir().mkpath(dir);
    const QString stem = dir + "/experiment-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
    path = stem + ".h5";
    for (int k = 2; QFileInfo::exists(path); ++k) path = QString("%1-%2.h5").arg(stem).arg(k);
  } else if (QFileInfo::exists(path) && !overwrite) {  // the user named an existing file: ask (quiet: refuse)
    overwrite = !quiet_ && QMessageBox::question(this, tr("Replace experiment file?"),
                                                 tr("%1 exists. Replace it when the new experiment ends? Until then, "
                                                    "and if the run fails, the old file stays as it is.").arg(path)) ==
                               QMessageBox::Yes;
    if (!overwrite) {
      error(tr("Not started"), tr("%1 exists and was left as it is; choose another output file").arg(path));
      if (quiet_) emit run_finished(false);
      return;
    }
  }
  try {  // refused before anything runs: a folder that is missing or read-only
    check_output_writable(path.toStdString());
  } catch (const std::exception& e) {
    error(tr("Not started"), QString::fromStdString(e.what()));
    if (quiet_) emit run_finished(false);
    return;
  }
  file_ = path;
  run_set_->reset({});
  refresh_views();
  set_running(true);
  last_tick_ = 0;
  worst_gap_ = 0;
  latency_->start();
  bar_->setVisible(true);
  bar_->setValue(0);
  run_clock_.start();
  setWindowTitle(QString("statescope — %1 (running)").arg(QFileInfo(path).fileName()));
  if (!compute.isEmpty()) statusBar()->showMessage(tr("Running on %1").arg(compute), 15000);
  jobs_.clear();
  const int jobs = panel_->jobs();
  QMetaObject::invokeMethod(worker_, [w = worker_, spec, path, overwrite, jobs] { w->start(spec, path, overwrite, jobs); },
                            Qt::QueuedConnection);
}

void MainWindow::cancel_run() {
  if (!running_) return;
  worker_->cancel();
  status_->setText(tr("cancelling..."));
}

namespace {
// "45 s", "3m07s", "1h05m": an estimate as people read it.
std::string format_eta(double s) {
  char b[32];
  if (!(s >= 0) || s > 100.0 * 86400) return "?";
  if (s < 60) std::snprintf(b, sizeof b, "%d s", int(s));
  else if (s < 3600) std::snprintf(b, sizeof b, "%dm%02ds", int(s / 60), int(s) % 60);
  else std::snprintf(b, sizeof b, "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  return b;
}
}  // namespace

void MainWindow::on_progress(const Progress& p) {
  phase_ = QString("%1 %2 %3/%4").arg(p.run, p.phase).arg(p.done).arg(p.total);
  if (p.phase == "tokenize") {  // the data, before any run: bytes of source text
    bar_->setMaximum(static_cast<int>(std::max<qint64>(1, p.total >> 20)));
    bar_->setValue(static_cast<int>(p.done >> 20));
    status_->setText(QString("tokenizing data · %1/%2 MB · %3 MB/s · ETA %4 s")
                         .arg(p.done / 1e6, 0, 'f', 1).arg(p.total / 1e6, 0, 'f', 1)
                         .arg(p.rate / 1e6, 0, 'f', 1).arg(p.eta_s, 0, 'f', 0));
    return;
  }
  const int row = run_set_->touch(p.run);  // a new run appears in the list, in spec order
  if (p.phase == "queued") {
    run_set_->set_status(row, "queued");
    return;
  }
  run_set_->set_status(row, "running");
  if (p.phase == "train") {
    StepInfo s;
    s.step = p.done;
    s.steps = p.total;
    s.loss = p.loss;
    run_set_->add_train_step(row, s);
    dirty_loss_ = true;
  }
  // Every running job has an entry (several at once with Jobs > 1). The bar and the leading "run k of
  // n · ETA" are the whole experiment's: runs ended count whole, running ones by their phase's share.
  QString rate = p.phase == "train" ? QString("%1 tok/s").arg(p.rate, 0, 'f', 0) : QString("%1 /s").arg(p.rate, 0, 'f', 2);
  QString eta = p.eta_s >= 0 ? QString("ETA %1 s").arg(p.eta_s, 0, 'f', 0) : QString("ETA ?");
  jobs_[p.run] = {p.done, p.total, QString("%1 · %2 %3/%4 · %5 · %6").arg(p.run, p.phase).arg(p.done).arg(p.total).arg(rate, eta)};
  QStringList texts;
  double share = 0;
  for (const auto& j : jobs_) {
    texts << j.text;
    if (j.total > 0) share += std::clamp(double(j.done) / double(j.total), 0.0, 1.0);
  }
  const auto& rs = run_set_->runs();
  const int n = static_cast<int>(rs.size());
  int ended = 0;
  for (const auto& r : rs) ended += r.status != "queued" && r.status != "running";
  const double complete = std::min<double>(n, ended + share);
  const double elapsed = run_clock_.isValid() ? run_clock_.elapsed() / 1000.0 : 0;
  const int running = static_cast<int>(jobs_.size());
  QString whole = n < 2 ? QString()
                  : running > 1 ? tr("runs %1–%2 of %3").arg(ended + 1).arg(std::min(n, ended + running)).arg(n)
                                : tr("run %1 of %2").arg(std::min(n, ended + 1)).arg(n);
  if (complete > 0.02 && elapsed > 0) {
    const double left = elapsed * (n - complete) / complete;
    whole += (whole.isEmpty() ? "" : " · ") + tr("all ETA %1").arg(QString::fromStdString(format_eta(left)));
  }
  bar_->setMaximum(1000);
  bar_->setValue(n > 0 ? static_cast<int>(1000.0 * complete / n) : 0);
  status_->setText((whole.isEmpty() ? "" : whole + "  |  ") + texts.join("  |  "));
}

void MainWindow::on_run_loaded(const views::RunData& r) {
  phase_ = r.name + " loaded";
  jobs_.remove(r.name);
  run_set_->replace(r);  // keeps the run's colour and check state
  dirty_ = true;
}

void MainWindow::on_finished(bool ok, const QString& message) {
  set_running(false);
  // Runs that never started (queued behind the cancelled one) say so rather than "queued" forever.
  if (!ok)
    for (int i = 0; i < run_set_->rowCount(); ++i)
      if (run_set_->runs()[static_cast<size_t>(i)].status == "queued") run_set_->set_status(i, tr("not run (cancelled)"));
  phase_ = "finishing";
  last_message_ = message;
  bar_->setVisible(false);
  // Where the file went (the event-loop stall is a developer's number: --quit-when-done prints it).
  QString where = QDir::toNativeSeparators(file_);
  if (const QString home = QDir::homePath(); where.startsWith(home + "/")) where = "~" + where.mid(home.size());
  status_->setText((ok ? tr("finished") : tr("stopped")) + tr(" · written to %1").arg(where));
  setWindowTitle(QString("statescope — %1").arg(QFileInfo(file_).fileName()));
  // Every run, finished or cut short, already arrived through run_loaded, read back from the file
  // on the worker thread; re-reading it here would only stall the event loop (~40 ms for the demo).
  if (QFileInfo::exists(file_)) add_recent(file_);
  refresh_views();  // tabs that said "being computed" say what they hold now
  if (ok) tabs_->setCurrentIndex(table_index_);  // the headline when the experiment ends
  if (!ok && !message.startsWith(tr("cancelled"))) error(tr("Run failed"), message);
  latency_tick();  // the time spent in here counts too
  latency_->stop();
  emit run_finished(ok);
}

void MainWindow::latency_tick() {
  static QElapsedTimer clock;
  if (!clock.isValid()) clock.start();
  const qint64 now = clock.elapsed();
  if (last_tick_ > 0 && now - last_tick_ > worst_gap_) worst_gap_ = now - last_tick_, worst_phase_ = phase_;
  last_tick_ = now;
}

// While a run goes, the form is locked and Cancel applies; Run applies when the form is valid.
void MainWindow::set_running(bool running) {
  running_ = running;
  panel_->set_running(running);
}

void MainWindow::refresh_views() {
  dirty_ = false;
  stale_.assign(tabs_->count(), true);
  refresh_current();
}

void MainWindow::refresh_loss() {
  dirty_loss_ = false;
  if (tabs_->currentWidget() == loss_) loss_->set_runs(runs());
  else if (loss_index_ < static_cast<int>(stale_.size())) stale_[static_cast<size_t>(loss_index_)] = true;
}

// Only the visible view is redrawn; the others catch up when their tab is shown, so one redraw
// costs one view, whatever the number of tabs.
void MainWindow::refresh_current() {
  const int i = tabs_->currentIndex();
  if (i < 0 || i >= static_cast<int>(stale_.size()) || !stale_[i]) return;
  stale_[i] = false;
  const views::Runs rs = runs();
  views_[i]->set_runs(rs);
  const QString why = empty_tab_reason(views::view_registry()[static_cast<size_t>(i)].shows, rs);
  for (auto* p : plots_in_tab(i)) p->set_empty_hint(why);
  show_empty_page(i, why);
}

// A tab with nothing to draw shows why over its view, never empty axes: nothing open yet, results
// still being computed, or the reason empty_tab_reason gives, with the analyses the panel's model
// cannot take named and a button that ticks the others.
void MainWindow::show_empty_page(int i, const QString& why) {
  EmptyPage* page = empty_pages_.at(static_cast<size_t>(i));
  const auto& shows = views::view_registry()[static_cast<size_t>(i)].shows;
  if (run_set_->size() == 0) {
    page->show_reason(tr("No results yet\n\nRun ▸ Run experiment (Ctrl+R) runs the panel's experiment; "
                         "File ▸ Open shows a saved one."));
    return;
  }
  if (why.isEmpty()) return page->show_reason({});
  if (running_ && std::any_of(shows.begin(), shows.end(), [&](const std::string& k) { return running_asks_.count(k) > 0; }))
    return page->show_reason(tr("Being computed\n\nThis tab fills as the runs that ask for it finish."));
  QStringList refusals, labels;
  std::vector<std::string> addable;
  for (const auto& k : shows) {
    const AnalysisRecord* a = find_analysis_record(k);
    if (!a || !a->options) continue;
    const QString label = QString::fromStdString(a->label);
    if (const QString no = panel_->analysis_refusal(k); !no.isEmpty()) refusals << label + ": " + no;
    else addable.push_back(k), labels << label;
  }
  QString text = why;
  if (!refusals.isEmpty())
    text += "\n\n" + tr("The panel's model cannot take it: %1").arg(refusals.join("; "));
  if (addable.empty() || running_) return page->show_reason(text);
  page->show_reason(text, tr("Add %1 to the experiment").arg(labels.join(", ")), [this, page, text, addable] {
    QStringList ticked;
    for (const auto& k : addable)
      if (panel_->tick_analysis(k)) ticked << QString::fromStdString(find_analysis_record(k)->label);
    page->show_reason(text + "\n\n" + tr("Ticked in the panel: %1. Run (Ctrl+R) computes it.").arg(ticked.join(", ")));
    statusBar()->showMessage(tr("Ticked %1 under Evaluation and analyses").arg(ticked.join(", ")), 5000);
  });
}

// Why a tab of an open experiment is empty: its analyses were not asked for ("" : not empty, or
// nothing open, where "No results yet" says what to do).
QString empty_tab_reason(const std::vector<std::string>& shows, const views::Runs& runs) {
  if (runs.empty()) return {};
  auto holds = [&](const views::RunData& r, const std::string& k) {
    if (k == "train") return !r.train.empty();
    if (k == "sweep") return !r.sweep.group.empty();
    const AnalysisRecord* a = find_analysis_record(k);
    return a && a->present(r);
  };
  for (const auto& r : runs)
    for (const auto& k : shows)
      if (holds(r, k)) return {};
  QStringList asked;
  for (const auto& k : shows) {
    if (k == "train") return QObject::tr("No run of this experiment trained\n(the baseline and training-free runs are "
                                         "measured as loaded)");
    if (k == "sweep") return QObject::tr("This experiment has no sweep\n(a spec's \"sweep\" section: Edit as JSON)");
    if (const AnalysisRecord* a = find_analysis_record(k); a && a->options) asked << QString::fromStdString(a->label);
  }
  if (asked.isEmpty()) return {};
  return QObject::tr("Not in this experiment: %1\nTick it under Evaluation and analyses, then Run (Ctrl+R)")
      .arg(asked.join(", "));
}

QList<views::PlotWidget*> MainWindow::plots_in_tab(int index) const {
  QWidget* w = tabs_->widget(index);
  QList<views::PlotWidget*> out;
  if (auto* p = qobject_cast<views::PlotWidget*>(w)) out << p;
  out << w->findChildren<views::PlotWidget*>();
  return out;
}

bool MainWindow::export_report(const QString& path) {
  try {
    report::write_html_report(file_.toStdString(), path.toStdString(), /*overwrite=*/true);  // the dialog asked
    status_->setText(tr("Report written to %1").arg(path));
    return true;
  } catch (const std::exception& e) {
    error(tr("Report not written"), QString::fromStdString(e.what()));
    return false;
  }
}

// Exports every plot of the visible tab, as an image (PNG/SVG/PDF) or its data (CSV), and says which
// files it wrote.
void MainWindow::export_tab(bool data) {
  if (plots_in_tab(tabs_->currentIndex()).isEmpty()) return;
  const QString title = tabs_->tabText(tabs_->currentIndex()).remove('&');
  const QString path =
      data ? QFileDialog::getSaveFileName(this, tr("Export data"), title + ".csv", tr("CSV (*.csv)"))
           : QFileDialog::getSaveFileName(this, tr("Export plot"), title + ".png", tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  const QStringList written = export_tab_to(tabs_->currentIndex(), path, data);
  QStringList names;
  for (const auto& w : written) names << QFileInfo(w).fileName();
  if (!names.isEmpty()) statusBar()->showMessage(tr("Wrote %1").arg(names.join(", ")), 8000);
}

QStringList MainWindow::export_tab_to(int tab, const QString& path, bool data) {
  const auto plots = plots_in_tab(tab);
  const QFileInfo fi(path);
  const QString suffix = data ? QString("csv") : fi.suffix();
  QStringList written, parts;
  // Each figure says what it shows: the file, the tab and the runs drawn (the checked ones).
  QStringList shown;
  for (const auto& r : run_set_->runs())
    if (r.checked) shown << r.name;
  const int n_shown = static_cast<int>(shown.size());
  if (n_shown > 8) shown = shown.mid(0, 8) << tr("+%1 more").arg(n_shown - 8);
  const QString caption = tr("%1 · %2 · runs: %3 · statescope")
                              .arg(file_.isEmpty() ? tr("(no file)") : QFileInfo(file_).fileName(), tabs_->tabText(tab),
                                   shown.isEmpty() ? tr("none") : shown.join(", "));
  for (int i = 0; i < plots.size(); ++i) {
    plots[i]->set_export_caption(caption);
    // A part's name: its plot's object name without the view's prefix ("effrem_heatmap" -> "heatmap").
    QString part = plots[i]->objectName().section('_', 1);
    if (part.isEmpty() || parts.contains(part)) part = QString::number(i + 1);
    parts << part;
    const QString p = plots.size() == 1 ? path : fi.dir().filePath(fi.completeBaseName() + "_" + part + "." + suffix);
    if (data ? plots[i]->export_csv(p)
             : plots[i]->export_figure(p, views::figure_sizes()[static_cast<size_t>(figure_size_)], export_light_))
      written << p;
    else
      error(tr("Export failed"), tr("Could not write %1").arg(p));
  }
  return written;
}

QStringList MainWindow::export_all_tabs_to(const QString& folder) {
  QStringList written;
  QDir().mkpath(folder);
  for (int t = 0; t < tabs_->count(); ++t) {
    bool any = false;  // a tab whose plots all say why they are empty is left out: no empty axes
    for (auto* p : plots_in_tab(t)) any = any || p->empty_hint().isEmpty();
    if (!any) continue;
    QString name = QString("%1_%2").arg(t + 1, 2, 10, QChar('0')).arg(tabs_->tabText(t).remove('&'));
    name.replace(QRegularExpression("[^A-Za-z0-9._-]+"), "_");
    const QString base = QDir(folder).filePath(name);
    written += export_tab_to(t, base + ".png", false);
    written += export_tab_to(t, base + ".csv", true);
  }
  return written;
}

void MainWindow::save_as() {
  if (file_.isEmpty() || running_) return;
  const QString p = QFileDialog::getSaveFileName(this, tr("Save experiment as"), QFileInfo(file_).fileName(), tr("*.h5"));
  if (p.isEmpty() || p == file_) return;
  try {  // the copy is made beside p and renamed onto it: a failed copy leaves an existing p as it was
    copy_file_staged(file_.toStdString(), p.toStdString(), OutputRule{/*overwrite=*/true, {file_.toStdString()}, false});
  } catch (const std::exception& e) {
    error(tr("Save failed"), QString::fromStdString(e.what()));
    return;
  }
  open_file(p);
}

// The recent-files list lives in memory and goes to QSettings when the window closes: a settings
// write (file sync) on the GUI thread took up to ~100 ms, a visible stall at the end of a run.
void MainWindow::add_recent(const QString& path) {
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent_files_.removeAll(abs);
  recent_files_.prepend(abs);
  while (recent_files_.size() > 10) recent_files_.removeLast();
  update_recent_menu();
}

void MainWindow::update_recent_menu() {
  recent_->clear();
  for (const QString& p : recent_files_) recent_->addAction(p, this, [this, p] { open_file(p); });
  recent_->setEnabled(!recent_->isEmpty());
}

void MainWindow::set_dark(bool dark) {
  dark_ = dark;
  QSettings().setValue("view/dark", dark);
  qApp->setStyle(QStyleFactory::create("Fusion"));
  qApp->setPalette(views::theme(dark).palette());
  for (auto* w : findChildren<views::PlotWidget*>()) w->apply_theme(dark);
}

void MainWindow::about() {
  QMessageBox::about(this, tr("About statescope"),
                     tr("<b>statescope %1</b><br>Length generalization lab for recurrent language models "
                        "(Buitrago Ruiz &amp; Gu, ICML 2025).<br><br>Qt %2 (built with %3), QCustomPlot 2.1, "
                        "LibTorch and HDF5 as linked by statescope_core.")
                         .arg(QApplication::applicationVersion(), qVersion(), QT_VERSION_STR));
}

bool MainWindow::save_screenshots(const QString& dir) {
  if (!QDir().mkpath(dir) || !QFileInfo(dir).isDir()) {
    qCritical("%s: cannot create this folder for the screenshots", qPrintable(dir));
    return false;
  }
  bool ok = true;
  for (int i = 0; i < tabs_->count(); ++i) {
    tabs_->setCurrentIndex(i);
    QApplication::processEvents();
    for (auto* p : plots_in_tab(i)) p->replot();
    QApplication::processEvents();
    QString name = tabs_->tabText(i).toLower().replace("&&", "and").replace(' ', '_').replace('-', '_');
    const QString file = QDir(dir).filePath(QString("%1_%2.png").arg(i + 1).arg(name));
    if (!grab().save(file)) {
      qCritical("%s: cannot write this PNG (a full disk, or no permission?)", qPrintable(file));
      ok = false;
    }
  }
  return ok;
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (running_ && !quiet_ &&
      QMessageBox::question(this, tr("Quit"), tr("An experiment is running. Cancel it and quit? Finished steps stay in the file.")) !=
          QMessageBox::Yes) {
    e->ignore();
    return;
  }
  worker_->cancel();
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  s.setValue("files/recent", recent_files_);
  e->accept();
}

bool MainWindow::accepts_drop(const QMimeData* m) const {
  for (const QUrl& u : m->urls())
    if (u.toLocalFile().endsWith(".h5")) return true;
  return false;
}

bool MainWindow::handle_drop(const QMimeData* m) {
  bool first = true;
  for (const QUrl& u : m->urls()) {
    const QString p = u.toLocalFile();
    if (!p.endsWith(".h5")) continue;
    if (!(first ? open_file(p) : add_file(p))) return false;
    first = false;
  }
  return !first;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (accepts_drop(e->mimeData())) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  if (handle_drop(e->mimeData())) e->acceptProposedAction();
}

}  // namespace statescope::gui
