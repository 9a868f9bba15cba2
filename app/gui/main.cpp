// main.cpp — `statescope [FILE.h5 [MORE.h5 ...]] [--run SPEC.json] [--screenshots DIR]`.
// Several files: the first opens, the others' runs are added beside its runs (MainWindow::add_file).
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>

#include "core/base/file_io.h"
#include <QIcon>
#include <QTimer>
#include <cstdio>

#include "app/gui/experiment_panel.h"
#include "app/gui/main_window.h"
#include "core/base/memory_tuning.h"
#include "core/base/version.h"

int main(int argc, char** argv) {
  statescope::tune_malloc_for_tensors();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("statescope");
  QApplication::setApplicationName("statescope");
  QApplication::setApplicationVersion(statescope::kVersion);
  QGuiApplication::setDesktopFileName("org.statescope.Statescope");  // packaging/: desktop entry and icon
  QApplication::setWindowIcon(QIcon::fromTheme("org.statescope.Statescope"));
  QCommandLineParser cli;
  cli.setApplicationDescription("statescope: length generalization lab for recurrent language models");
  cli.addHelpOption();
  cli.addVersionOption();
  cli.addPositionalArgument("files", "experiment files (.h5): the first opens, the runs of the others are added to compare",
                            "[file.h5 [more.h5 ...]]");
  QCommandLineOption run({"r", "run"}, "load this experiment spec into the panel and run it", "spec.json");
  QCommandLineOption out({"o", "output"}, "experiment file the run writes", "file.h5");
  QCommandLineOption overwrite("overwrite", "with --run: replace an existing output file without asking");
  QCommandLineOption shots("screenshots", "render every view to PNG files in DIR and quit", "DIR");
  QCommandLineOption quit("quit-when-done", "with --run: print the summary and the longest UI stall, then quit");
  cli.addOptions({run, out, overwrite, shots, quit});
  cli.process(app);
  statescope::gui::MainWindow w;
  if (cli.isSet(shots)) w.set_quiet(true);
  for (const QString& f : cli.positionalArguments()) {
    if (!(w.current_file().isEmpty() ? w.open_file(f) : w.add_file(f))) {
      if (cli.isSet(shots)) {  // no dialog in this mode: the reason goes to stderr
        qCritical("%s: %s", qPrintable(f), qPrintable(w.last_message()));
        return 1;
      }
      break;
    }
  }
  if (cli.isSet(run)) {
    std::string text;
    try {  // a FIFO or a device is refused before it is opened; a spec is bounded in size
      text = statescope::read_file_bounded(cli.value(run).toStdString(), statescope::kMaxJsonBytes, "experiment spec");
    } catch (const std::exception& e) {
      qCritical("%s", e.what());
      return 2;
    }
    if (const QString why = w.panel()->load_spec(QString::fromStdString(text)); !why.isEmpty()) {
      qCritical("%s: %s", qPrintable(cli.value(run)), qPrintable(why));
      return 2;
    }
    QTimer::singleShot(0, &w, [&] { w.start_run(cli.value(out), cli.isSet(overwrite)); });
    if (cli.isSet(quit)) {
      w.set_quiet(true);
      QObject::connect(&w, &statescope::gui::MainWindow::run_finished, &w, [&w](bool ok) {
        std::printf("%s\nlongest event-loop stall during the run: %lld ms (after: %s)\n", qPrintable(w.last_message()),
                    static_cast<long long>(w.longest_stall_ms()), qPrintable(w.longest_stall_phase()));
        QApplication::exit(ok ? 0 : 1);
      });
    }
  }
  w.show();
  if (cli.isSet(shots)) {
    const QString dir = cli.value(shots);
    QTimer::singleShot(300, &w, [&w, dir] { QApplication::exit(w.save_screenshots(dir) ? 0 : 1); });
  }
  return app.exec();
}
