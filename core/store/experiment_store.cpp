// experiment_store.cpp — writing and reading run groups.
#include "core/store/experiment_store.h"

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/names.h"
#include "core/base/version.h"
#include "core/store/group_io.h"

namespace statescope {

std::string iso8601_now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}


ExperimentFile::ExperimentFile(std::unique_ptr<H5File> f, std::unique_ptr<StagedOutput> out, std::string path)
    : out_(std::move(out)), f_(std::move(f)), path_(std::move(path)), uncaught_(std::uncaught_exceptions()) {}

ExperimentFile::~ExperimentFile() {
  if (closed_) return;
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "statescope: %s\n", e.what());
  }
}

std::string ExperimentFile::close() {
  if (closed_) return path_;
  closed_ = true;
  const bool write_failed = f_->failed();
  std::string close_error;
  try {
    f_->close();
  } catch (const Error& e) {
    close_error = e.what();
  }
  f_.reset();
  if (!out_) {
    if (!close_error.empty()) throw Error(close_error);
    return path_;
  }
  using Outcome = StagedOutput::Outcome;
  if (write_failed || !close_error.empty()) {
    out_->finish(Outcome::Discard);
    const std::string what = out_->replaces() ? " was left as it was" : " was not written";
    if (!close_error.empty()) throw Error(close_error + "; " + path_ + what);
    std::fprintf(stderr, "statescope: a write failed: %s%s (the unfinished copy was removed)\n", path_.c_str(), what.c_str());
    return "";
  }
  const bool unwinding = std::uncaught_exceptions() > uncaught_;
  bool all_finished = !unwinding;
  std::lock_guard<std::mutex> g(begun_mu_);
  if (unwinding && begun_.empty()) return out_->finish(Outcome::Discard);  // refused before any run began
  for (const auto& [run, status] : begun_) all_finished = all_finished && status == "finished";
  return out_->finish(all_finished ? Outcome::Replace : Outcome::KeepNew);
}

std::unique_ptr<ExperimentFile> ExperimentFile::create(const std::string& path, const WriteOptions& w) {
  std::unique_ptr<StagedOutput> out;
  if (w.in_place) {
    check_output(path, OutputRule{w.overwrite, w.inputs, false});
  } else {
    out = std::make_unique<StagedOutput>(path, OutputRule{w.overwrite, w.inputs, false});
  }
  auto f = std::make_unique<H5File>(out ? out->staging() : path, H5File::Mode::Create);
  f->set_attr("/", "format", kFormatName);
  f->set_attr_i64("/", "format_version", std::strtol(kFormatVersion, nullptr, 10));
  f->set_attr("/", "NX_class", "NXroot");
  f->set_attr("/", "creator", kVersionString);
  f->set_attr("/", "created", iso8601_now());
  f->flush();
  return std::unique_ptr<ExperimentFile>(new ExperimentFile(std::move(f), std::move(out), path));
}

void check_experiment_file(const H5File& f) {
  std::string fmt, version;
  try {
    fmt = f.attr("/", "format");
    version = f.attr("/", "format_version");
  } catch (const Error&) {
  }
  if (fmt != kFormatName)
    throw Error(f.path() + ": not a statescope experiment file (root attribute 'format' is '" + fmt + "')");
  char* end = nullptr;
  const long v = std::strtol(version.c_str(), &end, 10);
  if (version.empty() || *end != '\0' || v < 1)
    throw Error(f.path() + ": root attribute 'format_version' is '" + version + "', not a version number");
  if (v > std::strtol(kFormatVersion, nullptr, 10))
    throw Error(f.path() + ": written by a newer statescope (format_version " + version + "; this one reads up to " +
                kFormatVersion + ")");
}

std::vector<std::string> run_names(const H5File& f) {
  std::vector<std::string> out;
  for (auto& name : f.children("/"))
    if (f.is_group(name)) {
      const auto attrs = f.attr_names(name);
      if (std::find(attrs.begin(), attrs.end(), "status") != attrs.end()) out.push_back(name);
    }
  return out;
}

std::unique_ptr<ExperimentFile> ExperimentFile::open(const std::string& path, const WriteOptions& w) {
  {  // refused before a copy is made: not ours, or from a newer version
    require_regular_file(path, "the experiment file to append to");
    H5File probe(path, H5File::Mode::Read);
    check_experiment_file(probe);
  }
  std::unique_ptr<StagedOutput> out;
  if (!w.in_place) out = std::make_unique<StagedOutput>(path, OutputRule{true, w.inputs, false}, StagedOutput::Start::CopyTarget);
  auto f = std::make_unique<H5File>(out ? out->staging() : path, H5File::Mode::ReadWrite);
  return std::unique_ptr<ExperimentFile>(new ExperimentFile(std::move(f), std::move(out), path));
}

void ExperimentFile::begin_run(const RunInfo& i, bool replace) {
  check_name(i.name, path_, "run name");
  if (!replace && f_->has(i.name))
    throw Error(path_ + ": already holds a run '" + i.name + "'; choose another --run or pass --replace-run");
  const std::string g = i.name;
  for (const char* d : {"step", "loss", "lr", "grad_norm"})
    f_->create_growable(g + "/train/" + d, std::string(d) == "step");
  f_->set_attr(g, "spec", i.spec_json);
  f_->set_attr(g, "model", i.model);
  f_->set_attr(g, "checkpoint_hash", i.checkpoint_hash);
  if (!i.architecture.empty()) f_->set_attr(g, "architecture", i.architecture);
  f_->set_attr(g, "intervention", i.intervention);
  f_->set_attr_i64(g, "seed", static_cast<int64_t>(i.seed));
  if (i.order >= 0) f_->set_attr_i64(g, "order", i.order);
  f_->set_attr(g, "versions", i.versions);
  f_->set_attr(g, "device", i.device);
  f_->set_attr(g, "started", iso8601_now());
  nx_data(*f_, g + "/train", "loss", {"step"});
  f_->set_attr(g, "NX_class", "NXentry");
  f_->set_attr(g, "default", "train");  // until a result with a better plot arrives (prefer_default)
  f_->set_attr(g, "status", "running");
  {
    std::lock_guard<std::mutex> g_(begun_mu_);
    begun_[g] = "running";
  }
  // The file's plot is its first run's (by name, so the same whatever order parallel jobs start in).
  f_->set_attr("/", "default", run_names(*f_).front());
  f_->flush();
}

void ExperimentFile::append_train(const std::string& run, const StepInfo& s) {
  const int64_t step = s.step;
  if (!f_->has(run + "/train/step")) {  // a nested training record, e.g. run/copying/train
    for (const char* d : {"step", "loss", "lr", "grad_norm"})
      f_->create_growable(run + "/train/" + d, std::string(d) == "step");
    nx_data(*f_, run + "/train", "loss", {"step"});
  }
  f_->append(run + "/train/step", &step, 1);
  f_->append(run + "/train/loss", &s.loss, 1);
  f_->append(run + "/train/lr", &s.lr, 1);
  f_->append(run + "/train/grad_norm", &s.grad_norm, 1);
  f_->flush();
}

void ExperimentFile::set_status(const std::string& run, const std::string& status, const std::string& message) {
  f_->set_attr(run, "finished", iso8601_now());
  f_->set_attr(run, "message", message);
  f_->set_attr(run, "status", status);  // last
  std::lock_guard<std::mutex> g(begun_mu_);
  if (auto it = begun_.find(run); it != begun_.end()) it->second = status;
  f_->flush();
}

}  // namespace statescope
