// main_window.h — the statescope window: experiment panel and run list on the left, one tab per
// view in the centre, progress in the status bar; menus and shortcuts; QSettings; drag and drop.
#pragma once
#include <QElapsedTimer>
#include <QMainWindow>
#include <set>
#include <string>
#include <vector>
#include <QMap>
#include <QThread>
#include <optional>

#include "app/gui/run_set.h"
#include "app/gui/run_worker.h"
#include "views/run_data.h"

class QListView;
class QTabWidget;
class QProgressBar;
class QLabel;
class QMenu;
class QTimer;
class QMimeData;

namespace statescope::views {
class LossView;
class PlotWidget;
class RunsView;
}  // namespace statescope::views

namespace statescope::gui {

class ExperimentPanel;
class TabGroups;
class EmptyPage;

// Where a run without a chosen file is written: <XDG data home>/statescope/experiments
// (~/.local/share/statescope/experiments), each experiment a new file named by its start time.
QString experiments_folder();

// Why a tab showing the analyses `shows` (view_registry.h keys) is empty for these runs: not asked for
// by the experiment ("Not in this experiment: Passkey grid (zero-shot) ..."), no training, no sweep;
// "" when some run holds one of them or nothing is open.
QString empty_tab_reason(const std::vector<std::string>& shows, const views::Runs& runs);

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  bool open_file(const QString& path);         // shows a dialog on error (unless quiet) and returns false
  // Appends another file's runs to those shown, to compare experiments side by side; each is named
  // "<tag>/<run>", the tag its file's short name (short_tags, run_set.h), and keeps its own file.
  // Opens the file instead when nothing is open.
  bool add_file(const QString& path);
  // Gives the run shown as `name` a display name ("" = its group's name again), written into its file
  // (core/store/run_label.h: one attribute, the run's group untouched); refused while an experiment
  // runs, for a run without a file, for a name another run shows and for a bad name (a dialog unless
  // quiet). Returns whether it was renamed. The run list's and the Runs table's "Rename…" ask for it.
  bool rename_run(const QString& name, const QString& display);
  // The size exported figures get (an index into views::figure_sizes(), the View menu's choice, kept
  // across sessions): what File ▸ Export plot and Export every tab write.
  void set_figure_size(int index);
  int figure_size() const { return figure_size_; }
  // Runs the panel's spec into out_path (default: a new file). An existing out_path is replaced only
  // with `overwrite` or when the user says so (quiet: refused); until the run ends it stays as it was.
  void start_run(const QString& out_path = {}, bool overwrite = false);
  void cancel_run();
  bool running() const { return running_; }
  void set_dark(bool dark);
  bool save_screenshots(const QString& dir);    // every tab as PNG
  bool export_report(const QString& path);        // the open experiment file as one HTML page
  void set_quiet(bool q) { quiet_ = q; }         // no modal dialogs (tests, screenshots)
  // The window inside the available area of the screen it is on (a restored geometry too): on the
  // first start (no saved geometry) 90% of it, centred; docks get their shares (fit_run_list).
  void fit_to_screen(bool first_start);
  // The Runs dock tall enough to list every run without scrolling, up to 55% of the window.
  void fit_run_list();

  ExperimentPanel* panel() const { return panel_; }
  QTabWidget* tabs() const { return tabs_; }        // every view, one page each (its own tab bar hidden)
  TabGroups* tab_groups() const { return tab_groups_; }  // the two rows of tabs that choose the page
  QListView* run_list() const { return list_; }
  RunSet* run_set() const { return run_set_; }   // the runs shown (a Qt item model)
  const views::Runs& runs() const { return run_set_->runs(); }
  QString current_file() const { return file_; }
  QString last_message() const { return last_message_; }
  qint64 longest_stall_ms() const { return worst_gap_; }  // of the last run: longest event-loop gap
  QString longest_stall_phase() const { return worst_phase_; }
  QList<views::PlotWidget*> plots_in_tab(int index) const;
  // Writes every plot of tab `tab` to `path` (an image by its suffix, or CSV with `data`): one plot
  // to `path` itself, several to <base>_<part>.<suffix>, each part named by its plot ("curves",
  // "heatmap", ...). Returns the paths written; an error dialog names any that failed.
  QStringList export_tab_to(int tab, const QString& path, bool data);
  // Every tab that has plots into `folder`: <NN>_<tab>.png (and _<part>.png for several plots) with
  // their captions, and the same as .csv; tabs with nothing to show (each plot says why) left out;
  // the files written (File ▸ Export every tab).
  QStringList export_all_tabs_to(const QString& folder);
  bool accepts_drop(const QMimeData* m) const;  // an .h5 file among the URLs
  bool handle_drop(const QMimeData* m);         // opens the first .h5 file and adds the others' runs

 signals:
  void run_finished(bool ok);

 protected:
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void build_views();
  void build_menus();
  void refresh_views();        // marks every view stale and redraws the visible one
  void refresh_current();      // redraws the visible view if stale
  void refresh_loss();         // live training: only the loss view
  void set_running(bool running);
  void latency_tick();
  void on_progress(const Progress& p);
  void on_run_loaded(const views::RunData& r);
  void on_finished(bool ok, const QString& message);
  void export_tab(bool data);
  std::optional<views::Runs> read_runs(const QString& path);  // the visible tab's plots: images, or their data as CSV
  void save_as();
  void add_recent(const QString& path);
  void update_recent_menu();
  void about();
  void error(const QString& title, const QString& text);
  void ask_rename(const QString& name);  // a dialog for the run's display name, then rename_run
  void show_empty_page(int tab, const QString& why);

  ExperimentPanel* panel_;
  class QDockWidget* panel_dock_;
  class QDockWidget* runs_dock_;
  bool first_start_ = false, shown_ = false;
  RunSet* run_set_;
  QListView* list_;
  QTabWidget* tabs_;
  TabGroups* tab_groups_ = nullptr;
  std::vector<EmptyPage*> empty_pages_;  // per tab: why it has nothing to draw, over its view
  std::set<std::string> running_asks_;   // what the running experiment computes ("eval", "train", analyses)
  std::vector<views::RunsView*> views_;  // one per tab, in tab order
  views::LossView* loss_ = nullptr;      // also views_[loss_index_]: redrawn alone while training runs
  int loss_index_ = 0, table_index_ = 0;  // the tabs of the training loss and of the Runs table
  QStringList highlighted_;              // runs selected in the Runs table (stand out in every plot)
  QProgressBar* bar_;
  QElapsedTimer run_clock_;  // since the experiment started (the whole run's ETA)
  QLabel* status_;
  QMenu* recent_;
  QTimer* redraw_;
  QTimer* latency_;          // 10 ms precise timer while a run goes: measures event-loop stalls
  qint64 last_tick_ = 0, worst_gap_ = 0;
  QString phase_, worst_phase_;  // what the run was doing (for the stall report)
  struct JobProgress {
    qint64 done = 0, total = 0;
    QString text;
  };
  QMap<QString, JobProgress> jobs_;  // the running jobs' last progress, by run name
  QThread thread_;
  RunWorker* worker_;
  QString file_, last_message_;
  QStringList recent_files_;
  std::vector<bool> stale_;
  bool export_light_ = true;  // View ▸ Export figures on a light background
  int figure_size_ = 0;       // View ▸ Exported figure size: an index into views::figure_sizes()
  bool running_ = false, dirty_ = false, dirty_loss_ = false, dark_ = true, quiet_ = false;
};

}  // namespace statescope::gui
