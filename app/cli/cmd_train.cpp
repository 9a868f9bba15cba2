// cmd_train.cpp — `pretrain` (a new model from scratch) and `posttrain` (continue a model with an
// initial-state policy). Both write a model directory with statescope.json recording the exact
// command, and a training record (HDF5 experiment file with one run).
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <iostream>
#include <map>

#include "app/cli/interrupt.h"
#include "core/base/constants.h"
#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "app/cli/progress.h"
#include "core/model/checkpoint.h"
#include "core/data/corpus.h"
#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/output_rule.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/dist/comm.h"
#include "core/train/trainer.h"
#include "core/base/version.h"
#include "core/experiment/spec.h"
#include "core/model/model_factory.h"

namespace statescope::cli {
namespace fs = std::filesystem;
namespace {

struct CommonTrain {
  std::string out, data = "embedded", record;
  TrainOptions t;
  int64_t checkpoint_every = 0, stop_after = 0;
  bool resume = false, overwrite = false;
};

void add_train_options(CLI::App& app, CommonTrain& o) {
  app.add_option("--out", o.out, "model directory to write (a new one; see --overwrite). It is written as OUT.partial "
                 "and renamed when training ends")->required();
  app.add_flag("--overwrite", o.overwrite, "replace an existing model directory when training ends (never the model "
               "being trained)");
  app.add_option("--data", o.data, "'embedded' (Austen), a folder, .jsonl, .u16/.u32 token file or text file (.gz/.xz/.zst too) (see 'data')")->capture_default_str();
  app.add_option("--record", o.record, "training record HDF5 (default: OUT/training.h5)");
  app.add_option("--T", o.t.T, "training context in tokens")->capture_default_str()->check(token_count());
  app.add_option("--steps", o.t.steps, "optimizer steps")->capture_default_str();
  app.add_option("--batch", o.t.batch, "sequences per step")->capture_default_str();
  app.add_option("--lr", o.t.lr, "peak learning rate")->capture_default_str();
  app.add_option("--warmup", o.t.warmup, "linear warmup steps")->capture_default_str();
  app.add_option("--min-lr-ratio", o.t.min_lr_ratio, "cosine floor as a fraction of --lr")->capture_default_str();
  app.add_option("--weight-decay", o.t.weight_decay, "AdamW weight decay (not on A_log, dt_bias, D, norms)")
      ->capture_default_str();
  app.add_option("--grad-clip", o.t.grad_clip, "gradient norm clip (0: off)")->capture_default_str();
  app.add_option("--seed", o.t.seed, "seed for data order, noise and initialisation")->capture_default_str();
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "write OUT/checkpoint every N steps, at the end and on cancel (0: no checkpoints)")
      ->capture_default_str();
  app.add_flag("--resume", o.resume, "continue from OUT/checkpoint (same options, any number of processes) and "
               "append to the record");
  app.add_option("--stop-after", o.stop_after, "stop after this step, writing OUT/checkpoint, and exit 0 (a job "
                 "that must end within a time limit); continue with --resume")
      ->check(token_count());
}

// Runs `f`; an error (a failed collective of a data-parallel job, say) marks the run "failed" with
// its message before it goes on, so the record never says "running" for a run that died.
template <class F>
auto measure_or_fail(ExperimentFile* file, const std::string& run, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    if (file && !file->file().failed()) file->set_status(run, status_after("failed"), e.what());
    throw;
  }
}

// On an error, the work folder stays for a look or a --resume unless a write of it failed (then it
// may be damaged and goes).
struct KeepWorkOnError {
  StagedOutput* staged;
  ExperimentFile* file;
  int before = std::uncaught_exceptions();
  ~KeepWorkOnError() {
    if (!staged || std::uncaught_exceptions() <= before) return;
    const bool damaged = file && file->file().failed();
    try {
      staged->finish(damaged ? StagedOutput::Outcome::Discard : StagedOutput::Outcome::KeepStaging);
    } catch (...) {
    }
  }
};

// A --record inside OUT (or its staging folder) would be lost when the finished folder replaces OUT.
void check_record_outside_model(const std::string& record, const std::string& out) {
  const fs::path r = resolved(record);
  for (const std::string& dir : {out, staging_name(out)}) {
    if (const fs::path d = resolved(dir); path_within(r, d) && r != d)
      throw Error("--record " + record + ": is inside the model folder being written (" + dir +
                  "), which is replaced when training ends; choose a record outside it, or leave --record out "
                  "for OUT/training.h5 (nothing was written)");
  }
}

int run_training(RecurrentLM& model, const CommonTrain& o, const PolicySpec& ps, const std::string& run_name,
                 ModelRecord rec, const std::string& command, const std::string& source_model) {
  const Corpus corpus = load_corpus(o.data, source_model, model->vocab_size());
  // The model folder follows the output rule (core/base/output_rule.h): the work goes to OUT.partial
  // (checkpoints included) and is renamed onto OUT when training finished; an existing OUT is
  // replaced only with --overwrite, never the model being read. A stopped or cancelled run leaves
  // OUT.partial for --resume; one stopped by an older statescope continues in OUT itself.
  const bool root = dist::is_root();  // data parallel: only rank 0 writes the record, the model and the progress
  const OutputRule rule{o.overwrite, {source_model, o.data == "embedded" ? std::string() : o.data}, true};
  const std::string staging = staging_name(o.out);
  auto has_checkpoint = [](const std::string& dir) { return fs::exists(fs::path(dir) / "checkpoint" / "trainer.json"); };
  const bool resume_staged = o.resume && has_checkpoint(staging);
  const bool resume_in_place = o.resume && !resume_staged && has_checkpoint(o.out);
  const std::string work = resume_in_place ? o.out : staging;
  std::unique_ptr<StagedOutput> staged;
  if (root && !resume_in_place)
    staged = std::make_unique<StagedOutput>(o.out, rule, resume_staged ? StagedOutput::Start::Reuse : StagedOutput::Start::Empty);
  const std::string record = o.record.empty() ? (fs::path(work) / "training.h5").string() : o.record;
  const std::string ckdir = (fs::path(work) / "checkpoint").string();
  const bool resuming = (resume_staged || resume_in_place) && fs::exists(record);
  // The record lives in the staged folder (written in place there); one given by --record follows the rule itself.
  WriteOptions w;
  w.in_place = true;
  w.overwrite = o.record.empty() || o.overwrite;
  w.inputs = rule.inputs;  // a --record that is the model being read, its training.h5 or the data is refused
  if (!o.record.empty()) check_record_outside_model(o.record, o.out);
  std::unique_ptr<ExperimentFile> file;
  if (root) file = resuming ? ExperimentFile::open(record, w) : ExperimentFile::create(record, w);
  nlohmann::json spec{{"command", command}, {"T", o.t.T}, {"steps", o.t.steps}, {"batch", o.t.batch}, {"lr", o.t.lr},
                      {"seed", o.t.seed}, {"policy", ps.label()}, {"data", o.data}, {"processes", dist::world()}};
  if (file && resuming) file->file().set_attr(run_name, "status", "running");
  else if (file)
    file->begin_run({run_name, spec.dump(), source_model, source_model.empty() ? "" : weights_hash(source_model),
                     ps.label(), o.t.seed, std::string(kVersionString) + ", " + runtime_summary(),
                     compute_summary() + (dist::group() ? ", " + std::to_string(dist::world()) + " processes (" +
                                                             dist::group()->backend() + ")" : std::string())});
  auto policy = make_policy(ps, SeedStreams::pretrain_policy(o.t.seed));
  ProgressLine line;
  const bool checkpoints = o.checkpoint_every > 0 || o.resume || o.stop_after > 0;
  auto stop_now = [&](const StepInfo& s) {
    return interrupted() || (o.stop_after > 0 && s.step >= o.stop_after && s.step < s.steps);
  };
  const KeepWorkOnError keep_work{staged.get(), file.get()};
  auto result = measure_or_fail(file.get(), run_name, [&] { return train(model, corpus.train, *policy, o.t, [&](const StepInfo& s) {
    if (!file) return !stop_now(s);
    file->append_train(run_name, s);
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s step %lld/%lld  loss %.4f (%.3f bits/token)  lr %.2e  %.0f tok/s  ETA %s",
                  run_name.c_str(), (long long)s.step, (long long)s.steps, s.loss, s.loss * kBitsPerNat, s.lr,
                  s.tokens_per_s, fmt_eta(s.eta_s).c_str());
    line.update(buf, s.step == s.steps);
    return !stop_now(s);
  }, {checkpoints ? ckdir : std::string(), o.checkpoint_every, o.resume}); });
  line.done();
  const bool planned_stop = result.status == "cancelled" && !interrupted() && o.stop_after > 0 &&
                            result.steps_done >= o.stop_after;
  if (planned_stop) result.message = "stopped after step " + std::to_string(result.steps_done) +
                                     " (--stop-after); continue with --resume";
  if (file) file->set_status(run_name, result.status, result.message);
  if (planned_stop) {
    if (file) file->close();
    if (staged) staged->finish(StagedOutput::Outcome::KeepStaging);
    if (root) std::cout << run_name << ": " << result.message << " (checkpoint " << ckdir << ")\n";
    return 0;
  }
  if (result.status != "finished") {
    if (file) file->close();
    // Nothing replaces OUT; the record (and any checkpoint) stays in the work folder.
    if (staged) staged->finish(StagedOutput::Outcome::KeepStaging);
    throw Error(run_name + " " + result.status + ": " + result.message + " (" + o.out + " was not written; the record is in " +
                record + ")");
  }
  if (!root) return 0;
  save_model_dir(model, work);
  rec.T = o.t.T;
  rec.seed = o.t.seed;
  rec.command = command;
  write_model_record(work, rec);
  file->close();
  if (staged) staged->finish(StagedOutput::Outcome::Replace);
  const std::string final_record = o.record.empty() ? (fs::path(o.out) / "training.h5").string() : o.record;
  std::cout << run_name << ": " << result.steps_done << " steps, final loss "
            << result.history.back().loss * kBitsPerNat << " bits/token -> " << o.out << " (record " << final_record << ")\n";
  if (auto* g = dist::group()) {  // rank 0's time inside collectives: sending, and waiting for the slower rank
    const double total = result.history.back().elapsed_s;
    std::printf("data parallel: %d processes (%s), %.0f tokens/s; rank 0 spent %.2f s of %.2f s in collectives (%.0f%%)\n",
                g->world(), g->backend().c_str(), result.history.back().tokens_per_s, g->comm_seconds(), total,
                100.0 * g->comm_seconds() / std::max(total, 1e-9));
  }
  return 0;
}

}  // namespace

Runner add_pretrain(CLI::App& app, const std::string& command) {
  // The flags fill a PretrainSpec, the same a spec's pretrain section parses into, and the model is
  // built by the one builder (pretrain_model): the CLI and a spec make the same weights.
  struct O : CommonTrain {
    PretrainSpec ps;
  };
  auto o = std::make_shared<O>();
  PretrainSpec& ps = o->ps;
  std::vector<std::string> archs;
  for_each_architecture([&](auto t) { archs.push_back(Arch<typename decltype(t)::type>::names.key); });
  add_train_options(app, *o);
  std::map<std::string, CLI::Option*> given;  // an architecture's own flags, by spec name (pretrain_fields)
  app.add_option("--arch", ps.arch, "architecture: " + known_architectures() + "; GLA and Gated DeltaNet in fla's layout")
      ->check(CLI::IsMember(archs))->capture_default_str();
  app.add_option("--d-model", ps.d_model)->capture_default_str();
  app.add_option("--n-layer", ps.n_layer)->capture_default_str();
  app.add_option("--d-conv", ps.d_conv, "causal conv width (GLA, Gated DeltaNet: the short convolutions')")->capture_default_str();
  // Mamba-1 and Mamba-2:
  given["d_state"] = app.add_option("--d-state", ps.d_state, "Mamba: state size per channel (default 32; Mamba-1's usual is 16)")->capture_default_str();
  given["expand"] = app.add_option("--expand", ps.expand, "Mamba: d_inner = expand x d_model")->capture_default_str();
  given["dt_min"] = app.add_option("--dt-min", ps.dt_min, "Mamba: dt initialisation range (log-uniform)")->capture_default_str();
  given["dt_max"] = app.add_option("--dt-max", ps.dt_max)->capture_default_str();
  given["freeze_A"] = app.add_flag("--freeze-A", ps.freeze_A, "Mamba, Gated DeltaNet: keep A_log at its initial value (e.g. A = 1 with --a-min 1 --a-max 1)");
  // Mamba-2 only:
  given["headdim"] = app.add_option("--headdim", ps.headdim, "Mamba-2: channels per head")->capture_default_str();
  given["ngroups"] = app.add_option("--ngroups", ps.ngroups, "Mamba-2: groups of B and C")->capture_default_str();
  given["chunk_size"] = app.add_option("--chunk-size", ps.chunk_size, "Mamba-2: the chunked scan's chunk")->capture_default_str();
  given["dt_limit"] = app.add_option("--dt-limit", ps.dt_limit, "Mamba-2: clamp dt to at most this after softplus (time_step_limit; 0: none)")
                          ->capture_default_str();
  given["a_min"] = app.add_option("--a-min", ps.a_min, "Mamba-2, Gated DeltaNet: A initialised uniform in [a-min, a-max]")->capture_default_str();
  given["a_max"] = app.add_option("--a-max", ps.a_max)->capture_default_str();
  // Mamba-1 only:
  given["dt_rank"] = app.add_option("--dt-rank", ps.dt_rank, "Mamba-1: rank of dt's projection (0: ceil(d_model/16))")->capture_default_str();
  // GLA and Gated DeltaNet (fla's models):
  given["num_heads"] = app.add_option("--heads", ps.num_heads, "GLA, Gated DeltaNet: (query/key) heads")->capture_default_str();
  given["expand_v"] = app.add_option("--expand-v", ps.expand_v,
                                     "GLA: value dim = expand-v x d_model (default 1); Gated DeltaNet: value dim per head = "
                                     "expand-v x head-dim (default 2)");
  given["mlp_size"] = app.add_option("--mlp-size", ps.mlp_size,
                                     "GLA, Gated DeltaNet: the gated MLP's width (0: fla's 2/3 x 4 x d_model rounded up to 256)")
                          ->capture_default_str();
  // GLA only:
  given["expand_k"] = app.add_option("--expand-k", ps.expand_k, "GLA: key dim = expand-k x d_model")->capture_default_str();
  given["short_conv"] = app.add_flag("--short-conv", ps.short_conv, "GLA: causal short convolutions on q, k, v (width --d-conv)");
  given["clamp_min"] = app.add_option("--clamp-min", ps.clamp_min,
                                      "GLA: floor of the log gate (fla's clamp_min, < 0): no key forgets faster than exp(clamp-min) "
                                      "per token; e.g. -0.02 keeps every memory longer than 50 tokens (a provoked failure past T)");
  // Gated DeltaNet only:
  given["head_dim"] = app.add_option("--head-dim", ps.head_dim, "Gated DeltaNet: key dim per head")->capture_default_str();
  given["v_heads"] = app.add_option("--v-heads", ps.v_heads, "Gated DeltaNet: value heads (0: --heads; more: grouped value attention)")
                         ->capture_default_str();
  given["no_short_conv"] = app.add_flag("--no-short-conv", ps.no_short_conv, "Gated DeltaNet: no short convolutions (SiLU alone on q, k, v)");
  // The hybrids (Nemotron-H, Qwen3.5, Granite 4.0-H):
  given["layers"] = app.add_option("--layers", ps.layers,
                                   "hybrid: one letter per layer (nemotron_h: M Mamba-2, * attention, - MLP; qwen3_5: G Gated "
                                   "DeltaNet, * attention; granite_h: M Mamba-2, * attention), e.g. 'M-*-M-'");
  given["attention_heads"] = app.add_option("--attention-heads", ps.attention_heads, "hybrid: attention heads")->capture_default_str();
  given["kv_heads"] = app.add_option("--kv-heads", ps.kv_heads, "hybrid: attention key/value heads")->capture_default_str();
  given["attention_head_dim"] = app.add_option("--attention-head-dim", ps.attention_head_dim, "hybrid: attention head dim")
                                    ->capture_default_str();
  return [o, command, given]() {
    PretrainSpec& ps = o->ps;
    // A flag of another architecture is named, never ignored (the owners: pretrain_fields, as a spec's).
    for (const auto& f : pretrain_fields())
      if (auto it = given.find(f.spec); it != given.end() && it->second->count() > 0 && !f.owned_by(ps.arch))
        throw Error(std::string(f.flag) + " is a " + f.whose + " option; --arch " + ps.arch + " has no such setting");
    ps.expand_v_set = given.at("expand_v")->count() > 0;
    if (given.at("clamp_min")->count() > 0 && !(ps.clamp_min < 0 && ps.clamp_min >= -100))
      throw Error("--clamp-min: need a log-gate floor in [-100, 0), got " + std::to_string(ps.clamp_min));
    ps.train = o->t;
    ps.train.freeze_A_log = ps.freeze_A;
    try {
      ps.check("pretrain options");
    } catch (const Error& e) {  // the spec's field names, said as this command's flags
      std::string m = e.what();
      auto flag_for = [](const std::string& field) {
        for (const auto& f : pretrain_fields())
          if (field == f.spec) return std::string(f.flag);
        std::string flag = "--" + field;
        std::replace(flag.begin(), flag.end(), '_', '-');
        return flag;
      };
      const std::string mark = "field 'pretrain.";
      if (auto at = m.find(mark); at != std::string::npos) {
        const auto close = m.find('\'', at + mark.size());
        m.replace(at, close + 1 - at, flag_for(m.substr(at + mark.size(), close - at - mark.size())));
      }
      throw Error(m);
    }
    RecurrentLM model = pretrain_model(ps, o->t.seed, "pretrain options");
    place_model(model, default_compute());
    o->t.freeze_A_log = ps.freeze_A;
    ModelRecord rec;
    rec.freeze_A_log = ps.freeze_A;
    rec.notes = "pretrained by statescope from scratch with a zero initial state";
    return run_training(model, *o, PolicySpec{}, "pretrain", rec, command, "");
  };
}

Runner add_posttrain(CLI::App& app, const std::string& command) {
  struct O : CommonTrain {
    std::string model;
    PolicySpec ps;
    int pass_conv = -1;
  };
  auto o = std::make_shared<O>();
  o->t = ExperimentSpec::default_posttrain();  // the same defaults as a spec's posttrain section
  o->t.T = 0;                                  // T: the model's record unless given
  app.add_option("--model", o->model, "model directory, 'embedded', or a Hugging Face id (owner/name[@revision]) in the local cache ('models' lists them)")->required();
  add_train_options(app, *o);
  app.add_option("--policy", o->ps.kind, "initial-state policy")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kPolicyKinds), std::end(kPolicyKinds))))->capture_default_str();
  app.add_option("--sigma", o->ps.sigma, "random: std of the initial SSM state")->capture_default_str();
  app.add_option("--ema", o->ps.ema, "fitted: EMA decay of the fitted statistics")->capture_default_str();
  app.add_option("--fit-length", o->ps.fit_length,
                 "fitted: fit to final states of zero-state windows of this many tokens, then keep the fit "
                 "fixed (0: the training windows, updated by EMA, the paper's)")->capture_default_str();
  app.add_option("--pass-conv", o->pass_conv, "pass the conv state too (1/0; default: 1 for passing/tbtt, 0 for noise)");
  return [o, command]() {
    o->ps.pass_conv = o->pass_conv;
    const std::string dir = resolve_model(o->model);
    auto model = load_model_dir(dir, default_compute());
    ModelRecord rec = read_model_record(dir);
    if (o->t.T <= 0) o->t.T = rec.T;
    if (o->t.T <= 0) throw Error("--T is required: " + dir + " records no training context");
    o->t.freeze_A_log = rec.freeze_A_log;
    rec.notes = "post-trained from " + dir + " with policy " + o->ps.label();
    return run_training(model, *o, o->ps, "posttrain", rec, command, dir);
  };
}

}  // namespace statescope::cli
