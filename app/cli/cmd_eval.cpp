// cmd_eval.cpp — `eval` (per-position loss, excess and state norms of one model into an experiment
// file) and `run` (a whole experiment spec).
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/interrupt.h"
#include "core/base/constants.h"
#include "app/cli/commands.h"
#include "core/base/file_io.h"
#include "app/cli/common.h"
#include "app/cli/progress.h"
#include "core/experiment/sweep.h"
#include "core/model/checkpoint.h"
#include "core/data/corpus.h"
#include "core/base/error.h"
#include "core/analyses/eval/evaluate.h"
#include "core/experiment/experiment.h"
#include "core/store/experiment_store.h"
#include "core/store/group_io.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/analyses/eval/record.h"

namespace statescope::cli {
namespace fs = std::filesystem;

Runner add_eval(CLI::App& app, const std::string& command) {
  struct O : MeasureArgs {
    EvalOptions e;
  };
  auto o = std::make_shared<O>();
  o->e.T = 0;
  o->e.length = 0;
  add_measure_options(app, *o, "eval");
  app.add_option("--T", o->e.T, "training context (default: the model's record)")->check(token_count());
  app.add_option("--length", o->e.length, "positions per sequence (default 64T)");
  app.add_option("--sequences", o->e.sequences, "sequences averaged")->capture_default_str();
  app.add_option("--segment", o->e.segment, "tokens per forward; state carried between segments")->capture_default_str();
  app.add_option("--batch", o->e.batch, "sequences per forward")->capture_default_str();
  app.add_flag("--no-reference{false}", o->e.windowed,
               "score the full-context pass only: no state-reset reference and so no excess (a third of the work)");
  app.add_flag("--no-state-norms{false}", o->e.norms,
               "record no per-position state norms (their tables, 8 x layers x (heads + 1) bytes per position, are "
               "what grows with --length)");
  return [o, command]() {
    const std::string dir = resolve_model(o->model);
    auto rec = read_model_record(dir);
    if (o->e.T <= 0) o->e.T = rec.T;
    if (o->e.T <= 0) throw Error("--T is required: " + dir + " records no training context");
    if (o->e.length <= 0) o->e.length = 64 * o->e.T;
    auto model = load_model_dir(dir, default_compute());
    const Corpus corpus = load_corpus(o->data, dir, model->vocab_size());
    nlohmann::json spec{{"command", command}, {"T", o->e.T}, {"length", o->e.length}, {"sequences", o->e.sequences}, {"reference", o->e.windowed}, {"state_norms", o->e.norms}};
    auto file = start_run(*o, spec.dump(), dir, "none (evaluation only)", 0, o->data);
    ProgressLine line;
    const auto t0 = std::chrono::steady_clock::now();
    const EvalResult r = measure_run(*file, o->run, [&] {
      return evaluate_positions(model, corpus.validation, o->e, [&](int64_t d, int64_t t) {
        line.update("eval forward " + std::to_string(d) + "/" + std::to_string(t), d == t);
        return !interrupted();
      });
    });
    line.done();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_eval(*file, o->run, r);
    file->set_status(o->run, "finished");
    std::cout << format_summary_table({summarize(r, o->run, "none")});
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    std::cout << "evaluated " << o->e.sequences << " x " << o->e.length << " positions (segment " << o->e.segment
              << (o->e.windowed ? ", with the state-reset reference" : ", full pass only")
              << (o->e.norms ? "" : ", no state norms") << "); peak resident memory " << ru.ru_maxrss / 1024
              << " MiB; " << seconds << " s, " << o->e.sequences * o->e.length / seconds << " positions/s\n";
    file->close();  // renamed into place here: a failure is this command's error
    return 0;
  };
}

Runner add_run(CLI::App& app, const std::string&) {
  struct O {
    std::string spec, output, from;
    std::vector<std::string> only;
    bool overwrite = false, yes = false;
    std::optional<uint64_t> seed;
    int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  };
  auto o = std::make_shared<O>();
  auto* spec_opt = app.add_option("spec", o->spec, "experiment spec (JSON), e.g. data/experiments/demo.json");
  auto* from_opt = app.add_option("--from", o->from,
                                  "instead of a spec: the spec an experiment file (.h5) was made from (with --only: "
                                  "reproduce some of its runs)");
  spec_opt->excludes(from_opt);
  app.add_option("--only", o->only,
                 "run only these runs of the plan (by name, e.g. 'passing@seed=1'; repeatable), with the pretraining "
                 "each uses: each with the seeds and yardstick it has in the whole experiment");
  app.add_option("--jobs,-j", o->jobs,
                 "runs at once, each on its own thread with --threads intra-op threads (default: the number of cores; "
                 "more jobs than runs: one per run). Each run's numbers are the serial run's")
      ->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--seed", o->seed, "replace the spec's seed (the file records the spec as run)");
  app.add_option("--output,-o", o->output, "experiment file (HDF5) to write (a new file; see --overwrite)")->required();
  app.add_flag("--overwrite", o->overwrite,
               "replace an existing output file (written beside it and renamed when the experiment ends)");
  app.add_flag("--yes,-y", o->yes, "run a sweep of more than " + std::to_string(kSweepConfirmRuns) + " runs");
  return [o]() {
    std::stringstream ss;
    if (o->spec.empty() && o->from.empty()) throw Error("run: give a spec (JSON) or --from an experiment file");
    if (!o->from.empty()) {  // the spec the file was made from, as it recorded it
      H5File f(o->from, H5File::Mode::Read);
      check_experiment_file(f);
      if (!has_attr(f, "/", "spec")) throw Error(o->from + ": records no spec (attribute 'spec' of '/')");
      ss << f.attr("/", "spec");
      o->spec = o->from;  // the source named in messages, and an input the output may not be
    } else {
      ss << read_file_bounded(o->spec, kMaxJsonBytes, "experiment spec");
    }
    if (o->seed) {  // the spec as run, with the seed replaced; a spec that is not JSON is left to the parser's message
      try {
        auto j = nlohmann::json::parse(ss.str());
        if (j.is_object()) {
          j["seed"] = *o->seed;
          ss.str(j.dump(2));
        }
      } catch (const nlohmann::json::exception&) {
      }
    }
    const size_t planned = plan_runs(check_spec(ss.str(), o->spec)).size();
    if (const size_t n = o->only.empty() ? planned : o->only.size(); n > kSweepConfirmRuns && !o->yes)
      throw Error(o->spec + ": the sweep makes " + std::to_string(n) + " runs (more than " +
                  std::to_string(kSweepConfirmRuns) + "); add --yes to run them");
    ProgressBoard board;  // one entry per running job
    std::string written;
    auto runs = run_experiment(
        ss.str(), o->spec, o->output,
        [&](const ExperimentProgress& p) {
          if (p.phase == "queued") return !interrupted();
          char buf[200];
          if (p.phase == "train")
            std::snprintf(buf, sizeof buf, "%s train %lld/%lld  %.3f bits/token  %.0f tok/s  ETA %s", p.run.c_str(),
                          (long long)p.done, (long long)p.total, p.loss * kBitsPerNat, p.rate, fmt_eta(p.eta_s).c_str());
          else
            std::snprintf(buf, sizeof buf, "%s %s %lld/%lld  ETA %s", p.run.c_str(), p.phase.c_str(), (long long)p.done,
                          (long long)p.total, fmt_eta(p.eta_s).c_str());
          board.update(p.run, buf);
          return !interrupted();
        },
        [&](const std::string& run, const H5File&) { board.remove(run); }, o->overwrite, o->jobs, &written, o->only);
    board.done();
    std::cout << format_summary_table(runs) << format_sweep_table(runs);
    std::cout << "wrote " << written << (written == o->output ? "" : " (" + o->output + " was left as it was)") << "\n";
    std::string failed;
    for (const auto& r : runs)
      if (r.status != "finished") failed += (failed.empty() ? "" : ", ") + r.name + " (" + r.status + ")";
    if (!failed.empty()) {
      std::cerr << "statescope-cli: not every run finished: " << failed << "; see their 'message' attributes in "
                << written << "\n";
      return 1;
    }
    return 0;
  };
}

}  // namespace statescope::cli
