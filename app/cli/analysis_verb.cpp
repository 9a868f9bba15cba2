// analysis_verb.cpp — the CLI's analysis verbs as one-analysis experiment runs (analysis_verb.h).
#include "app/cli/analysis_verb.h"

#include <chrono>
#include <cstdio>

#include "app/cli/finetune.h"  // stage_save, save_finetuned
#include "app/cli/interrupt.h"
#include "app/cli/progress.h"
#include "core/analyses/eval/evaluate.h"
#include "core/analyses/eval/record.h"
#include "core/base/constants.h"
#include "core/base/error.h"
#include "core/data/tokenizer.h"
#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/model/checkpoint.h"
#include "core/model/model_config.h"
#include "core/model/model_registry.h"

namespace statescope::cli {

std::vector<RunRecord> run_analysis_verb(const RunArgs& a, const std::string& command, const AnalysisVerb& v,
                                         const std::vector<VerbRun>& runs) {
  const AnalysisRecord* record = find_analysis_record(v.key);
  const AnalysisStep* step = find_analysis_step(v.key);
  if (!record || !step || !record->options) throw Error("'" + v.key + "' is not an analysis of core/analyses/list.h");
  // Every run's section checked as a spec's would be, before any file or model is touched.
  std::vector<nlohmann::json> sections;
  for (const auto& r : runs) sections.push_back(record->options(r.section, "statescope-cli " + v.key));

  const std::string dir = a.model.empty() ? std::string() : resolve_model(a.model);
  RecurrentLM model{nullptr};
  std::unique_ptr<Tokenizer> tok;
  ModelRecord rec;
  std::string architecture;
  if (!dir.empty()) {
    tok = load_tokenizer(dir);  // prompts in the model's tokens (bytes or its BPE)
    model = load_model_dir(dir, default_compute());
    if (tok->vocab_size() > model->vocab_size())
      throw Error(v.key + ": " + dir + "/tokenizer.json has " + std::to_string(tok->vocab_size()) +
                  " ids but the model's vocab_size is " + std::to_string(model->vocab_size()));
    rec = read_model_record(dir);
    architecture = architecture_line(model->model_config());
  }
  const int64_t T = v.T > 0 ? v.T : rec.T;
  const Corpus corpus = v.data.empty() ? Corpus{} : load_corpus(v.data, dir, model ? model->vocab_size() : 256);
  auto save = stage_save(v.save, a.overwrite, dir);  // refused before any work when it may not be written

  // The file: the model folder and the corpus read from disk are inputs it may not replace.
  const std::string data_input = v.data.empty() ? "" : v.data == "embedded" ? default_corpus_path() : v.data;
  WriteOptions w;
  w.overwrite = a.overwrite;
  w.inputs = {dir, data_input};
  for (const auto& r : runs) check_name(r.run.empty() ? a.run : r.run, "--run", "run name");  // before any file is made
  // Data parallel: ranks other than 0 write a scratch file that is thrown away (dist::rank_output).
  const std::string path = dist::rank_output(a.output);
  auto file = a.append && path == a.output ? ExperimentFile::open(path, w)
                                           : ExperimentFile::create(path, path == a.output ? w : WriteOptions{});
  std::vector<RunRecord> out;
  ProgressLine line;
  for (size_t i = 0; i < runs.size(); ++i) {
    const VerbRun& r = runs[i];
    RunArgs ra = a;
    ra.run = r.run.empty() ? a.run : r.run;
    nlohmann::json spec = r.recorded;
    spec["command"] = command;
    file->begin_run({ra.run, spec.dump(), dir.empty() ? "fresh " + v.key + " model" : dir, dir.empty() ? "" : weights_hash(dir),
                     r.intervention, r.seed, std::string(kVersionString) + ", " + runtime_summary(), compute_summary(),
                     architecture},
                    a.replace_run);
    // Progress as the experiment reports it: each phase's count, its rate and ETA from its own clock.
    using clk = std::chrono::steady_clock;
    std::string phase_now;
    clk::time_point phase_t0;
    auto progress = [&](const std::string& phase, int64_t done, int64_t total, double loss) {
      const auto now = clk::now();
      if (phase != phase_now) phase_now = phase, phase_t0 = now;
      const double el = std::chrono::duration<double>(now - phase_t0).count();
      const double rate = done > 0 && el > 0 ? done / el : 0;
      char buf[240];
      if (loss > 0)
        std::snprintf(buf, sizeof buf, "%s %s %lld/%lld  loss %.4f  ETA %s", ra.run.c_str(), phase.c_str(), (long long)done,
                      (long long)total, loss, fmt_eta(rate > 0 ? (total - done) / rate : -1).c_str());
      else
        std::snprintf(buf, sizeof buf, "%s %s %lld/%lld  ETA %s", ra.run.c_str(), phase.c_str(), (long long)done,
                      (long long)total, fmt_eta(rate > 0 ? (total - done) / rate : -1).c_str());
      line.update(buf, done == total);
      return !interrupted();
    };
    measure_run(*file, ra.run, [&] {
      AnalysisContext ctx;
      ctx.validation = &corpus.validation;
      ctx.train = &corpus.train;
      ctx.T = T;
      ctx.seed = r.seed;
      ctx.baseline = r.baseline;
      ctx.freeze_A_log = rec.freeze_A_log;
      ctx.policy = r.policy;
      ctx.tokenizer = tok.get();
      ctx.compute = default_compute();
      ctx.progress = progress;
      ctx.finetuned = [&](RecurrentLM& tuned) { save_finetuned(tuned, save); };
      EvalResult eval;
      if (v.evaluate) {  // the run's evaluation, as an experiment run has it (the detector correlates with it)
        EvalOptions e;
        e.T = T, e.length = v.eval_length > 0 ? v.eval_length : default_eval_length(T);
        e.sequences = v.eval_sequences, e.segment = v.eval_segment;
        eval = evaluate_positions(model, corpus.validation, e, [&](int64_t d, int64_t t) { return progress("eval", d, t, 0); });
        write_eval(*file, ra.run, eval);
        ctx.eval = &eval;
        ctx.eval_length = e.length, ctx.eval_sequences = e.sequences;
      }
      step->run(model, sections[i], ctx, *file, ra.run);
    });
    line.done();
    file->set_status(ra.run, "finished");
    RunRecord back;
    back.name = ra.run;
    record->read(file->file(), ra.run, back);
    out.push_back(std::move(back));
  }
  file->close();  // renamed into place here: a failure is this command's error
  return out;
}

}  // namespace statescope::cli
