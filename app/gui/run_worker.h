// run_worker.h — runs an experiment spec on a worker thread (never the GUI thread). Progress and
// finished runs arrive as queued signals; cancel() is honoured at the next training step or
// evaluation batch (well under a second on the models we run here), leaving a valid file.
#pragma once
#include <QObject>
#include <QString>
#include <atomic>

#include "views/run_data.h"

namespace statescope::gui {

struct Progress {
  QString run, phase;
  qint64 done = 0, total = 0;
  double rate = 0, eta_s = 0, loss = 0;
};

class RunWorker : public QObject {
  Q_OBJECT
 public:
  void cancel() { cancel_ = true; }

 public slots:
  void start(const QString& spec_json, const QString& out_path, bool overwrite = false, int jobs = 1);

 signals:
  void progress(const statescope::gui::Progress& p);
  void run_loaded(const statescope::views::RunData& run);
  void finished(bool ok, const QString& message);

 private:
  std::atomic<bool> cancel_{false};
};

}  // namespace statescope::gui

Q_DECLARE_METATYPE(statescope::gui::Progress)
Q_DECLARE_METATYPE(statescope::views::RunData)
