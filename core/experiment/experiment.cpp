// experiment.cpp — spec -> runs -> experiment file -> summary table.
#include "core/experiment/experiment.h"
#include "core/experiment/capability_check.h"
#include "core/base/constants.h"

#include "core/data/dataset.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <unistd.h>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <map>
#include <thread>
#include <tuple>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/experiment/analyses.h"
#include "core/experiment/sweep.h"
#include "core/model/checkpoint.h"
#include "core/model/model_config.h"
#include "core/model/model_factory.h"
#include "core/data/corpus.h"
#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/analyses/eval/evaluate.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/data/tokenizer.h"
#include "core/train/trainer.h"
#include "core/train/intervention_calibration.h"
#include "core/base/version.h"
#include "core/analyses/eval/record.h"
#include "core/analyses/unexplored/record.h"  // unexplored_options

namespace statescope {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A training-free run's intervention as resolved for its model: `run`/intervention holds the factors
// per layer and dt channel, the clip's bounds per layer and group, LongMamba's thresholds (float64),
// with the kind, label, dt_from and reset_period as attributes.
void write_intervention(ExperimentFile& file, const std::string& run, const Intervention& iv) {
  const std::string g = run + "/intervention";
  auto stack = [&](auto get) {  // [n_layer, ...] or undefined when no layer has it
    std::vector<torch::Tensor> rows;
    for (const auto& l : iv.layers)
      if (get(l).defined()) rows.push_back(get(l).to(torch::kCPU, torch::kFloat64));
    return rows.size() == iv.layers.size() && !rows.empty() ? torch::stack(rows).contiguous() : torch::Tensor();
  };
  auto put = [&](const char* name, const torch::Tensor& t) {
    if (t.defined()) file.file().write(g + "/" + name, t.data_ptr<double>(), t.sizes().vec());
  };
  put("dt_factor", stack([](const LayerIntervention& l) { return l.dt_factor; }));
  put("dt_threshold", stack([](const LayerIntervention& l) { return l.dt_threshold; }));
  put("max_norm", stack([](const LayerIntervention& l) { return l.max_norm; }));
  std::vector<double> a;
  for (const auto& l : iv.layers) a.push_back(l.a_factor);
  file.file().write(g + "/a_factor", a.data(), {static_cast<int64_t>(a.size())});
  file.file().set_attr(g, "NX_class", "NXcollection");
  file.file().set_attr(g, "kind", iv.kind);
  file.file().set_attr(g, "label", iv.label);
  file.file().set_attr_i64(g, "dt_from", iv.dt_from);
  file.file().set_attr_i64(g, "reset_period", iv.reset_period);
  if (iv.attention_window > 0) file.file().set_attr_i64(g, "attention_window", iv.attention_window);
  file.file().set_attr(g, "definition",
                       "training-free intervention applied in every forward of this run: dt_factor [layer, dt channel] "
                       "(from position dt_from), a_factor [layer], max_norm [layer, group] (state norm clip), "
                       "dt_threshold [layer, dt channel] (LongMamba token filter; 0: local channel)");
}

}  // namespace

namespace {

// One experiment in progress: the resolved spec, the model directory, the data, the open file,
// and the progress callback (which may cancel). run_experiment() prepares it, then runs each run.
class ExperimentRunner {
 public:
  ExperimentRunner(const std::string& spec_text, const std::string& src, const ExperimentProgressFn& progress,
                   const RunDoneFn& run_done)
      : spec_text_(spec_text), src_(src), progress_(progress), run_done_(run_done) {}
  ~ExperimentRunner() {
    std::error_code ec;  // the pretrained models nobody asked to keep
    if (!scratch_.empty()) fs::remove_all(scratch_, ec);
  }

  // Resolves the model and T, loads (tokenizes) the data, checks it is long enough; writes nothing.
  void prepare(ExperimentSpec spec) {
    spec_ = std::move(spec);
    // The spec's device, precision and scan hold for its runs only; the process default stays.
    compute_ = make_compute(spec_.device, spec_.precision, spec_.scan, default_compute());
    if (spec_.pretrain) {  // no model to load: each cell pretrains its own (run_pretrain)
      record_.T = spec_.T;
      for (const auto& [field, values] : spec_.sweep)
        if (field == "T" && record_.T <= 0) record_.T = static_cast<int64_t>(values.front());
      record_.freeze_A_log = spec_.pretrain->freeze_A;
    } else {
      model_dir_ = resolve_model(spec_.model);
      record_ = read_model_record(model_dir_);
    }
    if (spec_.T <= 0) spec_.T = record_.T;
    if (spec_.T <= 0) throw Error(src_ + ": field 'T' is required (the model directory records no training context)");
    if (!spec_.freeze_set) spec_.posttrain.freeze_A_log = record_.freeze_A_log;
    const int64_t given_length = spec_.eval.length;  // 0: 64T of each run's T
    // Every run's own spec (a sweep cell's seed, T, posttrain), resolved as the spec's would be; in a
    // multi-model spec every run name starts with its model's label.
    plan_ = plan_runs(spec_);
    for (auto& r : plan_) {
      r.name = prefix_ + r.name;
      r.group = prefix_ + r.group;
      planned_names_.push_back(r.name);
    }
    if (!only_.empty()) {  // these runs alone, and the pretraining each uses; their seeds as in the whole plan
      std::set<std::string> models;
      for (const auto& r : plan_)
        if (only_.count(r.name) && !r.model_key.empty()) models.insert(r.model_key);
      std::vector<PlannedRun> kept;
      for (auto& r : plan_)
        if (only_.count(r.name) || (r.kind == RunKind::Pretrain && models.count(r.name))) kept.push_back(std::move(r));
      plan_ = std::move(kept);
    }
    int64_t longest = 0;
    for (auto& r : plan_) {
      ExperimentSpec& rs = r.spec;
      rs.posttrain.T = rs.T;
      rs.posttrain.seed = rs.seed;
      rs.eval.T = rs.T;
      rs.eval.length = given_length > 0 ? given_length : default_eval_length(rs.T);
      longest = std::max(longest, rs.eval.length);
    }
    spec_.posttrain.T = spec_.T;
    spec_.posttrain.seed = spec_.seed;
    spec_.eval.T = spec_.T;
    spec_.eval.length = given_length > 0 ? given_length : default_eval_length(spec_.T);
    for (const auto& r : plan_)
      if (r.kind == RunKind::Pretrain) pretrained_[r.name] = std::make_shared<Pretrained>();
    if (spec_.pretrain) {  // where the pretrained models go unless the spec keeps them (save_models)
      static std::atomic<int> made{0};
      scratch_ = (fs::temp_directory_path() / ("statescope-pretrain-" + std::to_string(::getpid()) + "-" +
                                               std::to_string(made++))).string();
    }
    const ModelConfig model_config =
        spec_.pretrain ? spec_.pretrain->config(src_) : load_model_config((fs::path(model_dir_) / "config.json").string());
    check_capabilities(spec_, model_config, src_);  // what the architecture cannot take, before any work
    const int64_t vocab = spec_.pretrain ? 256 : vocab_size(model_config);
    const auto t0 = std::chrono::steady_clock::now();
    DataOptions data_options;
    data_options.text_field = spec_.text_field;
    corpus_ = load_model_data(spec_.data, model_dir_, vocab, data_options, [&](int64_t done, int64_t total) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ExperimentProgress p{"data", "tokenize", done, total, done / std::max(1e-9, el),
                           el / std::max<int64_t>(done, 1) * (total - done), 0};
      return !progress_ || progress_(p);
    });
    eval_sequences(corpus_.validation, longest, spec_.eval.sequences);  // fails early if too short
    // passkey and bAbI prompts in the model's tokens (a pretrained model's are bytes)
    tokenizer_ = spec_.pretrain ? std::make_unique<ByteTokenizer>() : load_tokenizer(model_dir_);
    if (!spec_.pretrain) hash_ = weights_hash(model_dir_);
  }

  // Creates the experiment file and runs the baseline (if any) and every policy: in order with one
  // job, else `jobs` at a time on threads (each run's numbers do not depend on which thread or when).
  std::vector<RunSummary> run_all(const std::string& out_path, bool overwrite, int jobs) {
    WriteOptions w;
    w.overwrite = overwrite;
    w.inputs = {spec_.data, src_};
    if (!model_dir_.empty()) w.inputs.push_back(model_dir_);  // the spec's source is a file name when it came from one
    use_file(create_file(out_path, w, spec_text_, src_));
    return run_planned(jobs);
  }

  // The experiment file, made once for every model of a spec. Data parallel: every rank runs every
  // run (training and evaluation split over the ranks, the analyses repeated on each), one run at a
  // time; only rank 0's file is the experiment's.
  static std::shared_ptr<ExperimentFile> create_file(const std::string& out_path, const WriteOptions& w,
                                                     const std::string& spec_text, const std::string& src) {
    std::shared_ptr<ExperimentFile> f = ExperimentFile::create(dist::rank_output(out_path), dist::is_root() ? w : WriteOptions{});
    f->file().set_attr("/", "spec", spec_text);
    f->file().set_attr("/", "spec_source", src);
    return f;
  }
  void use_file(std::shared_ptr<ExperimentFile> f) { file_ = std::move(f); }
  void set_prefix(std::string p) { prefix_ = std::move(p); }
  // Only these runs of the plan (by name), with the pretraining each uses: set before prepare.
  void set_only(const std::vector<std::string>& names) { only_ = std::set<std::string>(names.begin(), names.end()); }
  const std::vector<std::string>& planned_names() const { return planned_names_; }  // the whole plan's, after prepare
  const std::string& model_dir() const { return model_dir_; }
  bool cancelled() const { return cancelled_; }

  // Runs the baseline (if any) and every policy into the file: in order with one job, else `jobs` at
  // a time on threads (each run's numbers do not depend on which thread or when).
  std::vector<RunSummary> run_planned(int jobs) {
    if (dist::group()) jobs = 1;
    const std::vector<PlannedRun>& runs = plan_;
    std::vector<RunSummary> out;
    // Every run is announced in spec order first, so a live list shows them all in that order
    // whichever finishes first.
    for (const auto& r : runs)
      if (!report(ExperimentProgress{r.name, "queued", 0, 0, 0, -1, 0})) return out;
    jobs = static_cast<int>(std::min<size_t>(std::max(jobs, 1), runs.size()));
    if (jobs <= 1) {
      for (size_t i = 0; i < runs.size() && !cancelled_; ++i) {
        RunSummary s = run_one(runs[i]);
        if (runs[i].kind != RunKind::Pretrain) out.push_back(std::move(s));
      }
      return out;
    }
    // Parallel: workers take the next run in spec order. A run that fails stops the others (they
    // end "cancelled") and its error is rethrown once all have stopped, as the serial loop would.
    std::vector<RunSummary> slots(runs.size());
    std::vector<char> ran(runs.size(), 0);
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mu;
    const int intra_op = torch::get_num_threads();  // OpenMP's count is per thread: each worker sets it
    auto worker = [&] {
      torch::set_num_threads(intra_op);
      for (size_t i; !cancelled_ && (i = next++) < runs.size();) {
        try {
          slots[i] = run_one(runs[i]);
          ran[i] = 1;
        } catch (...) {
          std::lock_guard<std::mutex> g(error_mu);
          if (!error) error = std::current_exception();
          cancelled_ = true;
        }
      }
    };
    std::vector<std::thread> pool;
    for (int k = 0; k < jobs; ++k) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    for (size_t i = 0; i < runs.size(); ++i)
      if (ran[i] && runs[i].kind != RunKind::Pretrain) out.push_back(std::move(slots[i]));
    return out;
  }

  // Ends the experiment file under the output rule (output_rule.h): returns where the results are.
  std::string close_file() { return file_ ? file_->close() : std::string(); }

 private:
  // Progress for run `name`; remembers a cancel. With several jobs the callback is still called
  // by one thread at a time. A cancel (or another run's failure) stops every run at its next report.
  bool report(const ExperimentProgress& p) {
    if (cancelled_) return false;
    std::lock_guard<std::mutex> g(callback_mu_);
    if (progress_ && !progress_(p)) {
      cancelled_ = true;
      return false;
    }
    return true;
  }

  void run_finished(const std::string& name) {
    std::lock_guard<std::mutex> g(callback_mu_);
    if (run_done_) run_done_(name, file_->file());
  }

  // The model a run starts from: the spec's, or its cell's pretrained one. `name` is what the file
  // records as the run's model: the folder, or the pretraining run when its folder is not kept.
  struct ModelRef {
    std::string dir, hash, name;
  };
  // One pretraining run's model, handed to the runs of its cell (which wait for it with jobs > 1).
  struct Pretrained {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    ModelRef ref;
    std::string error;  // done without a model: why
    void finish(ModelRef r, std::string why) {
      {
        std::lock_guard<std::mutex> g(mu);
        done = true, ref = std::move(r), error = std::move(why);
      }
      cv.notify_all();
    }
  };

  ModelRef model_of(const PlannedRun& run) {
    if (!spec_.pretrain) return {model_dir_, hash_, model_dir_};
    Pretrained& p = *pretrained_.at(run.model_key);
    std::unique_lock<std::mutex> g(p.mu);
    while (!p.done) {
      if (cancelled_) throw Error(run.name + ": cancelled while waiting for " + run.model_key);
      p.cv.wait_for(g, std::chrono::milliseconds(100));
    }
    if (!p.error.empty()) throw Error(run.name + ": its model (" + run.model_key + ") was not made: " + p.error);
    return p.ref;
  }

  RunInfo info_for(const PlannedRun& run, const std::string& label, json extra, const ModelRef& model) const {
    json js = json::parse(spec_text_);
    if (!run.cell.empty()) {  // this run's sweep cell, by field
      json cell = json::object();
      for (auto& [k, v] : run.cell) cell[k] = v;
      extra["sweep_cell"] = cell;
      extra["sweep_group"] = run.group;
    }
    js["run"] = extra;
    std::string arch;  // what the run's model is, recorded so the file says it without the model at hand
    try {
      arch = architecture_line(load_model_config((std::filesystem::path(model.dir) / "config.json").string()));
    } catch (const Error&) {
    }
    RunInfo info{run.name, js.dump(), model.name, model.hash, label, run.spec.seed,
                 std::string(kVersionString) + ", " + runtime_summary(), compute_.summary(), arch};
    for (size_t i = 0; i < plan_.size(); ++i)  // its place in the plan: the app's order and colour
      if (plan_[i].name == run.name) info.order = static_cast<int64_t>(i);
    return info;
  }

  RunSummary ended(const std::string& name, const std::string& label, const std::string& status,
                   const std::string& message) {
    // After a failed write the file is not written to again: the write's own error goes on.
    if (file_->file().failed()) throw Error(message.empty() ? file_->path() + ": a write failed" : message);
    file_->set_status(name, status, message);
    run_finished(name);
    RunSummary rs;
    rs.name = name;
    rs.intervention = label;
    rs.status = status;
    return rs;
  }

  // A pretraining run: a fresh model of its cell trained from scratch with a zero initial state, as
  // `statescope-cli pretrain` with the command it records would; saved (save_models/<run>, else a
  // scratch folder) for the runs of its cell.
  RunSummary run_pretrain(const PlannedRun& run) {
    Pretrained& slot = *pretrained_.at(run.name);
    const PretrainSpec& ps = *run.spec.pretrain;
    const bool keep = !spec_.save_models.empty() && dist::is_root();
    const std::string dir = (fs::path(keep ? spec_.save_models : scratch_) / run.name).string();
    const std::string command = ps.command(run.spec.T, run.spec.seed, spec_.data, dir);
    const std::string label = "pretraining (zero state)";
    file_->begin_run(info_for(run, label, json{{"pretrain", true}, {"command", command}}, {}));
    try {
      RecurrentLM model = pretrain_model(ps, run.spec.seed, src_);  // the CLI's pretrain builds it the same way
      place_model(model, compute_);
      TrainOptions t = ps.train;
      t.T = run.spec.T, t.seed = run.spec.seed, t.freeze_A_log = ps.freeze_A;
      auto policy = make_policy(PolicySpec{}, SeedStreams::pretrain_policy(t.seed));  // as the CLI (zero draws nothing)
      const TrainResult tr = train(model, corpus_.train, *policy, t, [&](const StepInfo& s) {
        file_->append_train(run.name, s);
        return report(ExperimentProgress{run.name, "train", s.step, s.steps, s.tokens_per_s, s.eta_s, s.loss});
      });
      if (tr.status != "finished") {
        slot.finish({}, tr.status + (tr.message.empty() ? "" : ": " + tr.message));
        return ended(run.name, label, tr.status, tr.message);
      }
      save_model_dir(model, dir);
      ModelRecord rec;
      rec.T = t.T, rec.seed = t.seed, rec.freeze_A_log = ps.freeze_A, rec.command = command;
      rec.notes = "pretrained by statescope from scratch with a zero initial state (experiment " + src_ + ", run " + run.name + ")";
      write_model_record(dir, rec);
      slot.finish({dir, weights_hash(dir), keep ? dir : run.name}, "");
      file_->set_status(run.name, "finished");
      run_finished(run.name);
      RunSummary s;
      s.name = run.name, s.status = "finished";
      return s;
    } catch (const std::exception& e) {  // ours, LibTorch's, or an allocation that failed: never left "running"
      const std::string what = error_line(e);
      slot.finish({}, what);
      if (file_->file().failed()) throw;
      RunSummary s = ended(run.name, label, cancelled_ ? "cancelled" : "failed", what);
      if (!cancelled_) throw Error(what);
      return s;
    }
  }

  // Post-trains a copy of the model with `ps` (not the baseline), evaluates it, runs the analyses.
  RunSummary run_one(const PlannedRun& run) {
    if (run.kind == RunKind::Pretrain) return run_pretrain(run);
    const std::string& name = run.name;
    ModelRef model_ref;
    try {
      model_ref = model_of(run);
    } catch (const Error&) {
      if (!cancelled_) throw;
      RunSummary s;  // never begun: its model was not made
      s.name = name, s.status = "cancelled";
      return s;
    }
    const PolicySpec& ps = run.policy;
    const bool is_baseline = run.baseline;
    const bool training_free = run.kind == RunKind::TrainingFree;
    const ExperimentSpec& rs = run.spec;
    // posttrain.steps 0 (a task study): the policy acts only in the analyses that train, and says so.
    const std::string label = is_baseline      ? "none (baseline)"
                              : training_free ? run.intervention.label() + " (training-free)"
                                              : ps.label() + (rs.posttrain.steps > 0 ? "" : " (tasks only)");
    json extra = is_baseline      ? json{{"posttrain", false}}
                 : training_free ? json{{"posttrain", false}, {"training_free", true}, {"intervention", run.intervention.kind}}
                                 : json{{"policy", ps.kind}};
    file_->begin_run(info_for(run, label, extra, model_ref));
    try {
      auto model = load_model_dir(model_ref.dir, compute_);
      if (training_free) {  // calibrated on training windows with the run's own seed
        report(ExperimentProgress{name, "calibrate", 0, 1, 0, -1, 0});
        model->intervention = resolve_intervention(run.intervention, model, corpus_.train, rs.T,
                                                   SeedStreams::intervention(rs.seed, run.index), rs.eval.length);
        write_intervention(*file_, name, *model->intervention);
      }
      // The detector's envelope includes the states post-training actually met (each step's start
      // and end, with that step's weights).
      std::unique_ptr<StateReservoir> met;
      if (rs.analyses.has("unexplored") && !is_baseline && !training_free && rs.posttrain.steps > 0) {
        const auto& c = model->state_layout();
        const int64_t samples = unexplored_options(rs.analyses.section("unexplored"), "spec").samples;
        met = std::make_unique<StateReservoir>(c.n_layer, c.groups, c.group_numel(), reservoir_capacity(c, samples),
                                               SeedStreams::met_states(rs.seed));
      }
      std::vector<torch::Tensor> met_states;
      // Wall time of each phase, seconds, as attributes of the run's group (seconds_posttrain,
      // seconds_eval, seconds_reference where this run made the one yardstick, seconds_analyses).
      using clk = std::chrono::steady_clock;
      auto since = [](clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); };
      if (!is_baseline && !training_free && rs.posttrain.steps > 0) {
        const auto t0 = clk::now();
        const TrainResult tr = posttrain(model, run, met.get(), model_ref);
        if (tr.status != "finished") return ended(name, label, tr.status, tr.message);
        if (met) met->gather(), met_states = met->states();  // data parallel: every rank's rows
        file_->file().set_attr_f64(name, "seconds_posttrain", since(t0));
      }
      EvalResult eval;
      const auto t_eval = clk::now();
      RunSummary summary = evaluate(model, run, label, eval, is_baseline, model_ref);
      file_->file().set_attr_f64(name, "seconds_eval", since(t_eval));
      const auto t_analyses = clk::now();
      summary.group = run.group;
      summary.cell = run.cell;
      if (spec_.analyses.any() && !cancelled_) {
        std::string phase_now;
        clk::time_point phase_t0;
        // A training-free run is measured as loaded (no task fine-tuning), its intervention applied.
        AnalysisContext ctx{&corpus_.validation, &corpus_.train, rs.T, rs.seed, is_baseline || training_free,
                            rs.posttrain.freeze_A_log, is_baseline || training_free ? PolicySpec{} : ps, tokenizer_.get(), compute_,
                            [&](const std::string& phase, int64_t done, int64_t total, double loss) {
                              // rate (units per second) and ETA from the phase's own clock
                              const auto now = clk::now();
                              if (phase != phase_now) phase_now = phase, phase_t0 = now;
                              const double el = std::chrono::duration<double>(now - phase_t0).count();
                              const double rate = done > 0 && el > 0 ? done / el : 0;
                              const double eta = rate > 0 ? (total - done) / rate : -1;
                              return report(ExperimentProgress{name, phase, done, total, rate, eta, loss});
                            }};
        ctx.eval = &eval;
        ctx.training_free = training_free;
        ctx.recorded_states = met ? &met_states : nullptr;
        ctx.posttrain_steps = rs.posttrain.steps, ctx.posttrain_batch = rs.posttrain.batch;
        ctx.eval_length = rs.eval.length, ctx.eval_sequences = rs.eval.sequences;
        ctx.common_envelopes = [&, dir = model_ref.dir, seed = SeedStreams::envelope(rs.seed)](const UnexploredOptions& o) {
          return common_envelopes(o, dir, seed, name);  // the baseline's own envelope
        };
        run_analyses(model, spec_.analyses, ctx, *file_, name);
        file_->file().set_attr_f64(name, "seconds_analyses", since(t_analyses));
      }
      file_->set_status(name, "finished");
      run_finished(name);
      return summary;
    } catch (const std::exception& e) {  // ours, LibTorch's, or an allocation that failed: never left "running"
      if (file_->file().failed()) throw;  // the write's error, as it was
      const std::string what = error_line(e);
      RunSummary rs = ended(name, label, cancelled_ ? "cancelled" : "failed", what);
      if (!cancelled_) throw Error(what);
      return rs;
    }
  }

  // Post-training with the run's policy; the fitted-noise statistics and (on request) the model are saved.
  TrainResult posttrain(RecurrentLM& model, const PlannedRun& run, StateReservoir* met, const ModelRef& from) {
    const std::string& name = run.name;
    auto policy = make_policy(run.policy, SeedStreams::posttrain_policy(run.spec.seed, run.index));
    StatesSeenFn seen;
    if (met) seen = [met](const ModelState& initial, const ModelState& final_state) {
      met->offer_share(initial);  // this rank's rows of the step's batch (all of them in one process)
      met->offer_share(final_state);
    };
    auto tr = train(model, corpus_.train, *policy, run.spec.posttrain, [&](const StepInfo& s) {
      file_->append_train(name, s);
      return report(ExperimentProgress{name, "train", s.step, s.steps, s.tokens_per_s, s.eta_s, s.loss});
    }, {}, seen);
    if (tr.status != "finished") return tr;
    if (auto m = policy->fitted_mean(); m.defined()) {
      auto mc = m.contiguous(), sc = policy->fitted_std().contiguous();  // [n_layer, nheads] float64
      file_->file().write(name + "/policy/fitted_mean", mc.data_ptr<double>(), mc.sizes().vec());
      file_->file().write(name + "/policy/fitted_std", sc.data_ptr<double>(), sc.sizes().vec());
      file_->file().set_attr(name + "/policy", "NX_class", "NXcollection");
      file_->file().set_attr(name + "/policy", "definition",
                             "fitted-noise statistics [layer, head] at the end of post-training (EMA of final states)");
    }
    if (!spec_.save_models.empty()) {
      const std::string dir = (fs::path(spec_.save_models) / name).string();
      save_model_dir(model, dir);
      ModelRecord r = spec_.pretrain ? read_model_record(from.dir) : record_;
      r.command = "posttrain via experiment spec " + src_ + " (run " + name + ")";
      write_model_record(dir, r);
    }
    return tr;
  }

  // Per-position loss and state norms far past T, written to the run's groups.
  RunSummary evaluate(RecurrentLM& model, const PlannedRun& run, const std::string& label, EvalResult& r,
                      bool is_baseline, const ModelRef& from) {
    const std::string& name = run.name;
    using clk = std::chrono::steady_clock;
    const auto t0 = clk::now();
    // The excess is measured against the one yardstick (fixed_reference): the baseline's own state-reset
    // reference is it; a run that changed the model scores its own only on request (eval.own_reference).
    EvalOptions eo = run.spec.eval;
    eo.windowed = eo.windowed && (is_baseline || eo.own_reference);
    r = evaluate_positions(model, corpus_.validation, eo, [&](int64_t done, int64_t total) {
      const double el = std::chrono::duration<double>(clk::now() - t0).count();
      return report(ExperimentProgress{name, "eval", done, total, done / std::max(1e-9, el), el / done * (total - done), 0});
    });
    r.fixed_seq = fixed_reference(run.spec.eval, name, is_baseline ? &r : nullptr, from.dir);
    write_eval(*file_, name, r);
    auto s = summarize(r, name, label);
    s.status = "finished";
    return s;
  }

  // The one yardstick (EvalResult::fixed_seq): the loaded model's state-reset loss on the
  // evaluation's bytes, made once per evaluation setting (T, length, sequences) and shared by every
  // run, so no run is measured against a reference its own post-training moved. The baseline run's
  // own reference is it (the same model on the same bytes): taken from `baseline` when that run gets
  // here first, else computed from a fresh copy of the loaded model.
  std::vector<float> fixed_reference(const EvalOptions& eo, const std::string& name, const EvalResult* baseline,
                                     const std::string& model_dir) {
    if (!eo.windowed) return {};
    std::lock_guard<std::mutex> g(reference_mu_);  // a second run needing it waits for the first
    const auto key = std::make_tuple(model_dir, eo.T, eo.length, eo.sequences);
    if (auto it = references_.find(key); it != references_.end()) return it->second;
    if (baseline) return references_[key] = baseline->windowed_seq;
    auto base = load_model_dir(model_dir, compute_);
    EvalOptions o = eo;
    o.norms = false;
    using clk = std::chrono::steady_clock;
    const auto t0 = clk::now();
    auto r = evaluate_positions(base, corpus_.validation, o, [&](int64_t done, int64_t total) {
      const double el = std::chrono::duration<double>(clk::now() - t0).count();
      return report(ExperimentProgress{name, "reference", done, total, done / std::max(1e-9, el),
                                       el / done * (total - done), 0});
    });
    file_->file().set_attr_f64(name, "seconds_reference", std::chrono::duration<double>(clk::now() - t0).count());
    return references_[key] = std::move(r.windowed_seq);
  }

  // The detector's one yardstick: the loaded model's envelopes of zero-state training windows, as
  // the baseline run of that seed fits them, made once per (model, knobs, seed) for every run.
  const std::vector<StateEnvelope>* common_envelopes(const UnexploredOptions& o, const std::string& model_dir,
                                                     uint64_t seed, const std::string& name) {
    std::lock_guard<std::mutex> g(envelope_mu_);  // a second run needing them waits for the first
    const auto key = std::make_tuple(model_dir, o.T, o.train_steps, o.train_batch, o.samples, o.components,
                                     o.quantile, seed);
    auto& slot = envelopes_[key];
    if (!slot) {
      report(ExperimentProgress{name, "unexplored (common envelope)", 0, 1, 0, -1, 0});
      auto base = load_model_dir(model_dir, compute_);
      slot = std::make_unique<std::vector<StateEnvelope>>(zero_state_envelopes(base, corpus_.train, o, seed));
    }
    return slot.get();
  }

  std::mutex envelope_mu_;
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, double, uint64_t>,
           std::unique_ptr<std::vector<StateEnvelope>>> envelopes_;
  std::mutex reference_mu_;
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, std::vector<float>> references_;
  // A pretraining spec's models by pretraining run (made in prepare, filled by run_pretrain), and the
  // folder they go to unless save_models keeps them (removed with the runner).
  std::map<std::string, std::shared_ptr<Pretrained>> pretrained_;
  std::string scratch_;
  const std::string& spec_text_;
  const std::string& src_;
  const ExperimentProgressFn& progress_;
  const RunDoneFn& run_done_;
  ExperimentSpec spec_;
  std::vector<PlannedRun> plan_;  // every run with its own resolved spec (sweep cells)
  Compute compute_;  // the spec's device, precision and scan over the process default
  std::string model_dir_, hash_;
  ModelRecord record_;
  Corpus corpus_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::shared_ptr<ExperimentFile> file_;  // thread-safe: every HDF5 call holds hdf5_mutex(); shared by the models of a spec
  std::string prefix_;                     // "<model label>:" in a multi-model spec
  std::set<std::string> only_;             // run only these (empty: every run of the plan)
  std::vector<std::string> planned_names_; // every run of the plan, before `only_` kept some
  std::atomic<bool> cancelled_{false};
  std::mutex callback_mu_;  // progress_ and run_done_ are called by one thread at a time
};

}  // namespace

namespace {

// Every name of `only` is a run of the plans `names` (Error naming it and listing the runs).
void check_only(const std::vector<std::string>& only, const std::vector<std::string>& names, const std::string& src) {
  for (const auto& n : only)
    if (std::find(names.begin(), names.end(), n) == names.end()) {
      std::string all;
      for (const auto& m : names) all += (all.empty() ? "" : ", ") + m;
      throw Error(src + ": '" + n + "' is no run of this experiment (--only); its runs: " + all);
    }
}

}  // namespace

std::vector<RunSummary> run_experiment(const std::string& spec_text, const std::string& src, const std::string& out_path,
                                       const ExperimentProgressFn& progress, const RunDoneFn& run_done, bool overwrite,
                                       int jobs, std::string* written_to, const std::vector<std::string>& only) {
  if (jobs < 1) throw Error("jobs must be >= 1, got " + std::to_string(jobs));
  const ExperimentSpec spec = check_spec(spec_text, src);  // every field, the compute names included, before anything is read
  if (!spec.models.empty()) {
    // Several models side by side: each prepared (its T, data, tokenizer) before the file is made, then
    // each model's runs in turn into one file.
    std::vector<std::unique_ptr<ExperimentRunner>> runners;
    WriteOptions w;
    w.overwrite = overwrite;
    w.inputs = {spec.data, src};
    for (const auto& m : spec.models) {
      ExperimentSpec one = spec;
      one.model = m;
      one.models.clear();
      runners.push_back(std::make_unique<ExperimentRunner>(spec_text, src, progress, run_done));
      runners.back()->set_prefix(model_label(m) + ":");
      runners.back()->set_only(only);
      runners.back()->prepare(one);
      w.inputs.push_back(runners.back()->model_dir());
    }
    std::vector<std::string> names;
    for (const auto& r : runners) names.insert(names.end(), r->planned_names().begin(), r->planned_names().end());
    check_only(only, names, src);
    auto file = ExperimentRunner::create_file(out_path, w, spec_text, src);
    std::vector<RunSummary> runs;
    for (auto& r : runners) {
      r->use_file(file);
      auto got = r->run_planned(jobs);
      runs.insert(runs.end(), got.begin(), got.end());
      if (r->cancelled()) break;
    }
    runners.clear();
    const std::string where = file->close();
    if (written_to) *written_to = where;
    return runs;
  }
  ExperimentRunner runner(spec_text, src, progress, run_done);
  runner.set_only(only);
  runner.prepare(spec);
  check_only(only, runner.planned_names(), src);
  auto runs = runner.run_all(out_path, overwrite, jobs);
  const std::string where = runner.close_file();
  if (written_to) *written_to = where;
  return runs;
}

}  // namespace statescope
