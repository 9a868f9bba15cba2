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

#include "app/cli/interrupt.h"
#include "core/base/constants.h"
#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "app/cli/progress.h"
#include "core/model/checkpoint.h"
#include "core/model/gdn/model.h"
#include "core/model/gla/model.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"
#include "core/data/corpus.h"
#include "core/base/error.h"
#include "core/base/output_rule.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/dist/comm.h"
#include "core/train/trainer.h"
#include "core/base/version.h"
#include "core/experiment/spec.h"

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
  std::error_code ec;
  const fs::path r = fs::weakly_canonical(fs::absolute(record), ec);
  for (const std::string& dir : {out, staging_name(out)}) {
    const fs::path d = fs::weakly_canonical(fs::absolute(dir), ec);
    auto [i, j] = std::mismatch(d.begin(), d.end(), r.begin(), r.end());
    if (i == d.end() && j != r.end())
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
  struct O : CommonTrain {
    std::string arch = "mamba2";
    Mamba2Config c;
    int64_t expand = 2, d_conv = 4, dt_rank = 0;
    double a_min = 1.0, a_max = 16.0, dt_limit = 0;
    bool freeze_A = false;
    GLAConfig g;  // GLA's own sizes (d_model, n_layer, d_conv come from the shared options)
    int64_t head_dim = 16, v_heads = 0;  // Gated DeltaNet's (heads, expand-v, mlp-size shared with GLA)
    bool no_short_conv = false;
  };
  auto o = std::make_shared<O>();
  o->c.d_model = 64; o->c.n_layer = 2; o->c.d_state = 32; o->c.headdim = 16; o->c.chunk_size = 64;
  o->c.vocab_size = 256; o->c.tie_embeddings = true;
  add_train_options(app, *o);
  app.add_option("--arch", o->arch,
                 "architecture: mamba2 (Mamba-2), mamba1 (Mamba-1, selective scan), gla (gated linear attention) or "
                 "gated_deltanet (Gated DeltaNet); the last two in fla's layout")
      ->check(CLI::IsMember({"mamba2", "mamba1", "gla", "gated_deltanet"}))->capture_default_str();
  app.add_option("--d-model", o->c.d_model)->capture_default_str();
  app.add_option("--n-layer", o->c.n_layer)->capture_default_str();
  app.add_option("--d-conv", o->d_conv, "causal conv width (GLA, Gated DeltaNet: the short convolutions')")->capture_default_str();
  // Mamba-1 and Mamba-2:
  auto* d_state = app.add_option("--d-state", o->c.d_state, "Mamba: state size per channel (default 32; Mamba-1's usual is 16)")->capture_default_str();
  auto* expand = app.add_option("--expand", o->expand, "Mamba: d_inner = expand x d_model")->capture_default_str();
  auto* dt_min = app.add_option("--dt-min", o->c.dt_min, "Mamba: dt initialisation range (log-uniform)")->capture_default_str();
  auto* dt_max = app.add_option("--dt-max", o->c.dt_max)->capture_default_str();
  auto* freeze = app.add_flag("--freeze-A", o->freeze_A, "Mamba, Gated DeltaNet: keep A_log at its initial value (e.g. A = 1 with --a-min 1 --a-max 1)");
  // Mamba-2 only:
  auto* headdim = app.add_option("--headdim", o->c.headdim, "Mamba-2: channels per head")->capture_default_str();
  auto* ngroups = app.add_option("--ngroups", o->c.ngroups, "Mamba-2: groups of B and C")->capture_default_str();
  auto* chunk = app.add_option("--chunk-size", o->c.chunk_size, "Mamba-2: the chunked scan's chunk")->capture_default_str();
  auto* dt_limit = app.add_option("--dt-limit", o->dt_limit,
                                  "Mamba-2: clamp dt to at most this after softplus (time_step_limit; 0: none)")
                       ->capture_default_str();
  auto* a_min = app.add_option("--a-min", o->a_min, "Mamba-2, Gated DeltaNet: A initialised uniform in [a-min, a-max]")->capture_default_str();
  auto* a_max = app.add_option("--a-max", o->a_max)->capture_default_str();
  // Mamba-1 only:
  auto* dt_rank = app.add_option("--dt-rank", o->dt_rank, "Mamba-1: rank of dt's projection (0: ceil(d_model/16))")
                      ->capture_default_str();
  // GLA and Gated DeltaNet (fla's models):
  auto* heads = app.add_option("--heads", o->g.num_heads, "GLA, Gated DeltaNet: (query/key) heads")->capture_default_str();
  auto* expand_v = app.add_option("--expand-v", o->g.expand_v,
                                  "GLA: value dim = expand-v x d_model (default 1); Gated DeltaNet: value dim per head = "
                                  "expand-v x head-dim (default 2)");
  auto* mlp = app.add_option("--mlp-size", o->g.intermediate_size,
                             "GLA, Gated DeltaNet: the gated MLP's width (0: fla's 2/3 x 4 x d_model rounded up to 256)")
                  ->capture_default_str();
  // GLA only:
  auto* expand_k = app.add_option("--expand-k", o->g.expand_k, "GLA: key dim = expand-k x d_model")->capture_default_str();
  auto* short_conv = app.add_flag("--short-conv", o->g.use_short_conv, "GLA: causal short convolutions on q, k, v (width --d-conv)");
  auto* clamp_min = app.add_option("--clamp-min", o->g.clamp_min,
                                   "GLA: floor of the log gate (fla's clamp_min, < 0): no key forgets faster than exp(clamp-min) per "
                                   "token; e.g. -0.02 keeps every memory longer than 50 tokens (a provoked failure past T)");
  // Gated DeltaNet only:
  auto* head_dim = app.add_option("--head-dim", o->head_dim, "Gated DeltaNet: key dim per head")->capture_default_str();
  auto* v_heads = app.add_option("--v-heads", o->v_heads, "Gated DeltaNet: value heads (0: --heads; more: grouped value attention)")
                      ->capture_default_str();
  auto* no_conv = app.add_flag("--no-short-conv", o->no_short_conv, "Gated DeltaNet: no short convolutions (SiLU alone on q, k, v)");
  return [o, command, d_state, expand, dt_min, dt_max, freeze, headdim, ngroups, chunk, dt_limit, a_min, a_max, dt_rank,
          heads, expand_k, expand_v, short_conv, clamp_min, mlp, head_dim, v_heads, no_conv]() {
    // An option of another architecture is named, never ignored.
    const bool fla = o->arch == "gla" || o->arch == "gated_deltanet", gdn = o->arch == "gated_deltanet";
    auto refuse = [&](const std::vector<CLI::Option*>& opts, const std::string& whose) {
      for (auto* opt : opts)
        if (opt->count() > 0)
          throw Error(opt->get_name() + " is " + whose + " option; --arch " + o->arch + " has no such setting");
    };
    if (o->arch != "mamba2") refuse({headdim, ngroups, chunk, dt_limit}, "a Mamba-2");
    if (o->arch != "mamba2" && !gdn) refuse({a_min, a_max}, "a Mamba-2 and Gated DeltaNet");
    if (fla) refuse({d_state, expand, dt_min, dt_max}, "a Mamba");
    if (o->arch == "gla") refuse({freeze}, "a Mamba and Gated DeltaNet");
    if (o->arch != "mamba1") refuse({dt_rank}, "a Mamba-1");
    if (!fla) refuse({heads, expand_v, mlp}, "a GLA and Gated DeltaNet");
    if (o->arch != "gla") refuse({expand_k, short_conv, clamp_min}, "a GLA");
    if (!gdn) refuse({head_dim, v_heads, no_conv}, "a Gated DeltaNet");
    if (o->dt_limit > 0) o->c.dt_limit_hi = o->dt_limit;
    o->c.dt_init_floor = std::min(o->c.dt_init_floor, o->c.dt_min);
    o->c.expand = o->expand;
    o->c.d_conv = o->d_conv;
    RecurrentLM model{nullptr};
    if (o->arch == "mamba2") {
      o->c.validate("pretrain options");
      if (!(o->a_min > 0) || !(o->a_max >= o->a_min) || !(o->a_max <= 1e4))  // NaN and Inf fail too
        throw Error("--a-min/--a-max: need 0 < a-min <= a-max <= 10000, got " + std::to_string(o->a_min) + " and " +
                    std::to_string(o->a_max));
      if (!(o->dt_limit >= 0 && o->dt_limit <= 1e3)) throw Error("--dt-limit: need 0 <= dt-limit <= 1000 (0: none)");
      model = Mamba2LM(o->c);
    } else if (o->arch == "mamba1") {
      Mamba1Config m;
      m.d_model = o->c.d_model, m.n_layer = o->c.n_layer, m.d_state = o->c.d_state, m.expand = o->expand;
      m.d_conv = o->d_conv, m.dt_rank = o->dt_rank, m.vocab_size = o->c.vocab_size, m.tie_embeddings = true;
      m.dt_min = o->c.dt_min, m.dt_max = o->c.dt_max, m.dt_init_floor = o->c.dt_init_floor;
      if (o->dt_rank < 0) throw Error("--dt-rank: need 0 (auto) or a positive rank, got " + std::to_string(o->dt_rank));
      m.validate("pretrain options");
      model = Mamba1LM(m);
    } else if (gdn) {
      GatedDeltaNetConfig d;
      d.d_model = o->c.d_model, d.n_layer = o->c.n_layer, d.num_heads = o->g.num_heads, d.num_v_heads = o->v_heads;
      d.head_dim = o->head_dim, d.expand_v = expand_v->count() > 0 ? o->g.expand_v : 2.0;
      d.intermediate_size = o->g.intermediate_size, d.use_short_conv = !o->no_short_conv, d.conv_size = o->d_conv;
      d.vocab_size = o->c.vocab_size, d.tie_embeddings = true;
      if (d.intermediate_size < 0) throw Error("--mlp-size: need 0 (fla's default) or a positive width");
      if (d.num_v_heads < 0) throw Error("--v-heads: need 0 (as --heads) or a positive count");
      if (!(o->a_min > 0) || !(o->a_max >= o->a_min) || !(o->a_max <= 1e4))
        throw Error("--a-min/--a-max: need 0 < a-min <= a-max <= 10000, got " + std::to_string(o->a_min) + " and " +
                    std::to_string(o->a_max));
      d.validate("pretrain options");
      model = GatedDeltaNetLM(d);
    } else {
      GLAConfig g = o->g;
      g.has_clamp_min = clamp_min->count() > 0;
      if (g.has_clamp_min && !(g.clamp_min < 0 && g.clamp_min >= -100))
        throw Error("--clamp-min: need a log-gate floor in [-100, 0), got " + std::to_string(g.clamp_min));
      g.d_model = o->c.d_model, g.n_layer = o->c.n_layer, g.conv_size = o->d_conv, g.vocab_size = o->c.vocab_size;
      g.tie_embeddings = true;
      if (g.intermediate_size < 0) throw Error("--mlp-size: need 0 (fla's default) or a positive width");
      g.validate("pretrain options");
      model = GLALM(g);
    }
    model->reset_parameters(o->t.seed, o->a_min, o->a_max);  // GLA refuses a changed A range by name
    place_model(model);
    o->t.freeze_A_log = o->freeze_A;
    ModelRecord rec;
    rec.freeze_A_log = o->freeze_A;
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
    auto model = load_model_dir(dir);
    ModelRecord rec = read_model_record(dir);
    if (o->t.T <= 0) o->t.T = rec.T;
    if (o->t.T <= 0) throw Error("--T is required: " + dir + " records no training context");
    o->t.freeze_A_log = rec.freeze_A_log;
    rec.notes = "post-trained from " + dir + " with policy " + o->ps.label();
    return run_training(model, *o, o->ps, "posttrain", rec, command, dir);
  };
}

}  // namespace statescope::cli
