// run_worker.cpp — the experiment runner behind the GUI (core/experiment/experiment.h is LibTorch-free).
#include "app/gui/run_worker.h"

#include "app/gui/file_loader.h"
#include "core/base/error.h"
#include "core/experiment/experiment.h"
#include "core/compute/runtime.h"

namespace statescope::gui {

void RunWorker::start(const QString& spec_json, const QString& out_path, bool overwrite, int jobs) {
  cancel_ = false;
  // On this thread: OpenMP thread counts are per thread. One intra-op thread unless
  // $STATESCOPE_THREADS says otherwise, so the GUI thread keeps a core (more threads than cores
  // starve the event loop: 250-360 ms stalls were measured with LibTorch's default of all cores).
  configure_threads(0);
  try {
    std::string written;
    auto sums = run_experiment(
        spec_json.toStdString(), "experiment panel", out_path.toStdString(),
        [this](const ExperimentProgress& p) {
          emit progress(Progress{QString::fromStdString(p.run), QString::fromStdString(p.phase), p.done, p.total, p.rate,
                                 p.eta_s, p.loss});
          return !cancel_.load();
        },
        [this](const std::string& run, const H5File& f) { emit run_loaded(read_run(f, run)); }, overwrite, jobs,
        &written);
    // A replaced file stays as it was unless every run finished (the output rule): say where the results went.
    const QString where = written == out_path.toStdString()
                              ? QString()
                              : tr(" %1 was left as it was; these results are in %2").arg(out_path, QString::fromStdString(written));
    bool cancelled = false;
    QStringList failed;
    for (auto& s : sums) {
      cancelled |= s.status == "cancelled";
      if (s.status == "failed") failed << QString::fromStdString(s.name);
    }
    if (!failed.isEmpty())
      emit finished(false, tr("runs failed: %1 (their 'message' attributes in the file say why).").arg(failed.join(", ")) + where);
    else
      emit finished(!cancelled, cancelled ? tr("cancelled; the file keeps every finished step.") + where
                                          : QString::fromStdString(format_summary_table(sums)));
  } catch (const std::exception& e) {
    emit finished(false, QString::fromStdString(error_line(e)));  // one line: no LibTorch stack trace
  }
}

}  // namespace statescope::gui
