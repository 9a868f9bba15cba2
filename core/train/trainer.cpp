// trainer.cpp — the training loop.
#include "core/train/trainer.h"
#include "core/base/constants.h"

#include <cerrno>
#include <cstring>
#include <stdio.h>
#include <fcntl.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/model/checkpoint.h"
#include "core/base/error.h"
#include "core/compute/runtime.h"
#include "core/dist/comm.h"
#include "core/train/samplers.h"
#include "core/base/file_io.h"

namespace statescope {
namespace fs = std::filesystem;
namespace {

// Data parallelism: every rank draws the whole batch (same samplers, same seeds) and keeps rows
// [rank * b, (rank + 1) * b), b = batch / world; one process keeps them all.
int64_t local_rows(int64_t batch) { return batch / dist::world(); }
torch::Tensor my_rows(const torch::Tensor& t, int64_t batch) {
  if (!t.defined() || !dist::group()) return t;
  const int64_t b = local_rows(batch);
  return t.narrow(0, dist::rank() * b, b);
}
ModelState my_rows(const ModelState& s, int64_t batch) {
  if (!dist::group()) return s;
  ModelState out = s;
  for (auto& l : out) {
    l.ssm = my_rows(l.ssm, batch);
    if (l.conv.defined()) l.conv = my_rows(l.conv, batch);
  }
  return out;
}

}  // namespace

double learning_rate(const TrainOptions& o, int64_t step) {
  if (o.warmup > 0 && step <= o.warmup) return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup);
  const double span = static_cast<double>(std::max<int64_t>(1, o.steps - o.warmup));
  const double progress = std::clamp(static_cast<double>(step - o.warmup) / span, 0.0, 1.0);
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return o.lr * (o.min_lr_ratio + (1.0 - o.min_lr_ratio) * cosine);
}

void calibrate_policy(RecurrentLM& model, const std::vector<Document>& docs, InitialStatePolicy& policy,
                      WindowSampler& windows, int64_t batch, int64_t T, uint64_t seed) {
  torch::NoGradGuard ng;
  const int64_t L = policy.spec().fit_length;
  std::unique_ptr<WindowSampler> own;
  if (L > 0) {
    try {
      own = std::make_unique<WindowSampler>(docs, L, SeedStreams::fit_windows(seed));
    } catch (const Error& e) {
      throw Error("fitted noise fit_length " + std::to_string(L) + ": " + e.what());
    }
  }
  WindowSampler& sampler = own ? *own : windows;
  const int64_t len = L > 0 ? L : T;
  for (int64_t i = 0; i < policy.spec().calibration_batches; ++i) {
    auto tokens = my_rows(sampler.next(batch).narrow(1, 0, len), batch);  // [B, len] (this rank's rows)
    policy.observe(detach_state(model->forward(tokens).final_state), {0, {}, model->state_layout().groups});
  }
}

namespace {

// One training run's moving parts, each step of train() a method: the optimizer over the trainable
// parameters, the samplers, checkpoints, the fitted-noise calibration, one optimizer step.
class TrainLoop {
 public:
  TrainLoop(RecurrentLM& model, const std::vector<Document>& docs, InitialStatePolicy& policy, const TrainOptions& opt,
            const StatesSeenFn& seen)
      : model_(model), docs_(docs), policy_(policy), opt_(opt), seen_(seen),
        windows_(docs, opt.T, SeedStreams::windows(opt.seed)) {
    make_optimizer();
    if (policy_.wants_stream()) streams_ = std::make_unique<StreamSampler>(docs, opt.T, opt.batch, SeedStreams::streams(opt.seed));
  }

  // AdamW in two groups (no weight decay on what the architecture names: A_log, dt biases, D, norms,
  // biases); A_log frozen on request.
  void make_optimizer() {
    std::vector<torch::Tensor> decay, plain;
    const auto exempt = model_->no_weight_decay();
    const std::set<std::string> no_decay(exempt.begin(), exempt.end());
    for (auto& p : model_->named_parameters()) {
      const bool frozen =
          opt_.freeze_A_log && p.key().size() >= 5 && p.key().compare(p.key().size() - 5, 5, "A_log") == 0;
      p.value().set_requires_grad(!frozen);
      if (frozen) continue;
      (no_decay.count(p.key()) ? plain : decay).push_back(p.value());
    }
    std::vector<torch::optim::OptimizerParamGroup> groups;
    auto make_opts = [&](double wd) {
      return std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(opt_.lr).betas({opt_.beta1, opt_.beta2}).weight_decay(wd).eps(1e-8));
    };
    groups.emplace_back(decay, make_opts(opt_.weight_decay));
    groups.emplace_back(plain, make_opts(0.0));
    optimizer_ = std::make_unique<torch::optim::AdamW>(groups);
    trainable_ = decay;
    trainable_.insert(trainable_.end(), plain.begin(), plain.end());
    bind_flat_grads();
  }

  // Data parallel: every trainable parameter's gradient is a view into one flat buffer (with one
  // slot more, for the loss sum), so backward accumulates into it in place and the all-reduce runs
  // on it directly: no gathering copy before and no scattering copy after (PyTorch DDP's
  // "gradient as bucket view"). Each step zeroes the buffer instead of dropping the gradients.
  void bind_flat_grads() {
    if (!dist::group() || trainable_.empty()) return;
    int64_t n = 0;
    for (auto& p : trainable_) n += p.numel();
    flat_grad_ = torch::zeros({n + 1}, trainable_[0].options());  // [sum of numels + 1]
    int64_t at = 0;
    for (auto& p : trainable_) {
      p.mutable_grad() = flat_grad_.narrow(0, at, p.numel()).view(p.sizes());
      at += p.numel();
    }
  }

  // Restores model, optimizer, policy and data order from dir; returns the step to continue with.
  int64_t resume(const fs::path& dir) {
    nlohmann::json st;
    std::ifstream(dir / "trainer.json") >> st;
    const int64_t made_by = st.value("world", int64_t{1});
    if (st.at("steps").get<int64_t>() != opt_.steps || st.at("batch").get<int64_t>() != opt_.batch ||
        st.at("T").get<int64_t>() != opt_.T || st.at("policy").get<std::string>() != policy_.spec().label())
      throw Error((dir / "trainer.json").string() + ": checkpoint was made with other options (steps, batch, T or policy)");
    load_state_dict(*model_, read_weights_file((dir / "model.safetensors").string()), (dir / "model.safetensors").string());
    torch::load(*optimizer_, (dir / "optimizer.pt").string());
    policy_.load_state(policy_state(dir, made_by));
    windows_.set_rng_state(st.at("windows").get<std::string>());
    if (streams_) streams_->set_state(st.at("streams").get<std::string>());
    return st.at("step").get<int64_t>() + 1;
  }

  // torch::save straight to a file ends the process when a write fails (its zip writer throws from a
  // destructor: std::terminate). The archive is made in memory and written by FileWriter instead,
  // so a full disk is an Error naming the file.
  template <class T>
  static void save_checked(const T& value, const fs::path& path) {
    std::ostringstream bytes;
    torch::save(value, bytes);
    FileWriter out(path.string());
    out.write(bytes.str());
    out.close();
  }

  // Writes a checkpoint after `step` into dir, atomically: dir is either the old one or the new one.
  // Data parallel: rank 0 writes all but the policy state, which each rank writes for its rows
  // (policy.rank<r>.pt; the folder must be shared by the ranks, as OUT is on one machine).
  void save(const fs::path& dir, int64_t step) {
    const fs::path tmp = dir.string() + ".tmp";
    auto* g = dist::group();
    if (dist::is_root()) {
      fs::remove_all(tmp);
      fs::create_directories(tmp);
    }
    if (g) g->barrier();
    auto ps = policy_.save_state();
    for (auto& t : ps)
      if (!t.defined()) t = torch::empty({0});
    save_checked(ps, tmp / policy_file());
    if (g) g->barrier();
    if (!dist::is_root()) return;
    save_model_dir(model_, tmp.string());
    save_checked(*optimizer_, tmp / "optimizer.pt");
    nlohmann::json st{{"step", step}, {"steps", opt_.steps}, {"batch", opt_.batch}, {"T", opt_.T},
                      {"policy", policy_.spec().label()}, {"windows", windows_.rng_state()},
                      {"streams", streams_ ? streams_->state() : std::string()}, {"world", dist::world()}};
    FileWriter tj((tmp / "trainer.json").string());
    tj.write(st.dump(2));
    tj.close();
    // The new checkpoint takes the old one's place in one step (renameat2 exchange), then the old goes.
    std::error_code ec;
    if (fs::exists(dir, ec)) {
      if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0)
        throw Error(dir.string() + ": cannot replace the checkpoint (" + std::strerror(errno) + ")");
      fs::remove_all(tmp, ec);
    } else if (::rename(tmp.c_str(), dir.c_str()) != 0) {
      throw Error(dir.string() + ": cannot put the checkpoint in place (" + std::strerror(errno) + ")");
    }
  }
  // One number per trainable parameter tensor (its sum in float64): equal on every rank when the
  // ranks hold identical parameters.
  std::vector<double> fingerprint() const {
    std::vector<double> sums;
    for (auto& p : trainable_) sums.push_back(p.detach().to(torch::kFloat64).sum().item<double>());
    return sums;
  }
  static std::string policy_file(int64_t rank = dist::rank(), int64_t world = dist::world()) {
    return world > 1 ? "policy.rank" + std::to_string(rank) + ".pt" : "policy.pt";
  }

  // This rank's policy state from a checkpoint made by `made_by` processes. The same world size:
  // its own file. Another: a per-row policy's tensors (state passing, TBTT: [rows, ...], the
  // global batch's rows split in rank order) are joined over the old ranks' files and split again
  // for this job; other policies' state (generator, fitted moments) is the same on every rank.
  std::vector<torch::Tensor> policy_state(const fs::path& dir, int64_t made_by) const {
    auto load = [&](int64_t r) {
      const fs::path f = dir / policy_file(r, made_by);
      if (!fs::exists(f))
        throw Error(f.string() + ": missing (the checkpoint was made by " + std::to_string(made_by) +
                    " processes, each writing its rows' policy state; the folder must hold them all)");
      std::vector<torch::Tensor> ps;
      torch::load(ps, f.string());
      return ps;
    };
    if (made_by == dist::world()) return load(dist::rank());
    if (!policy_.per_row()) return load(0);
    std::vector<std::vector<torch::Tensor>> parts;
    for (int64_t r = 0; r < made_by; ++r) parts.push_back(load(r));
    std::vector<torch::Tensor> out;
    const int64_t b = local_rows(opt_.batch);
    for (size_t i = 0; i < parts[0].size(); ++i) {
      std::vector<torch::Tensor> rows;
      for (auto& p : parts) {
        if (p.size() != parts[0].size())
          throw Error((dir / policy_file(0, made_by)).string() + ": the ranks' policy files hold different tensors");
        rows.push_back(p[i]);
      }
      if (parts[0][i].numel() == 0) {  // an absent tensor (no conv state kept)
        out.push_back(parts[0][i]);
        continue;
      }
      auto all = torch::cat(rows, 0);  // [batch, ...]
      if (all.size(0) != opt_.batch)
        throw Error((dir / policy_file(0, made_by)).string() + ": the policy state holds " +
                    std::to_string(all.size(0)) + " rows, the batch is " + std::to_string(opt_.batch));
      out.push_back(all.narrow(0, dist::rank() * b, b).clone());
    }
    return out;
  }

  // Fitted noise: final states of zero-state batches before step 1 (windows of fit_length tokens
  // from their own sampler, so the training draws stay as they were; else training windows).
  void calibrate() { calibrate_policy(model_, docs_, policy_, windows_, opt_.batch, opt_.T, opt_.seed); }

  // One optimizer step. Fills loss, lr and grad_norm of `info`; returns "" or why the run failed.
  std::string step(int64_t step, StepInfo& info) {
    const double lr = learning_rate(opt_, step);
    for (auto& g : optimizer_->param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
    PolicyStep ps{step, {}, model_->state_layout().groups};
    torch::Tensor tokens, mask;  // [B, T+1] int64, [B, T+1] float (undefined: every target counts)
    if (streams_) {
      auto b = streams_->next();
      tokens = b.tokens;
      mask = b.mask;
      ps.fresh = b.fresh;
    } else {
      tokens = windows_.next(opt_.batch, &mask);
    }
    if (!opt_.loss_mask) mask = torch::Tensor();
    const int64_t b = local_rows(opt_.batch);  // this process's rows (the whole batch in one process)
    tokens = my_rows(tokens, opt_.batch).to(model_->output_weight().device());  // [b, T+1] on the model's device
    mask = my_rows(mask, opt_.batch);
    PolicyStep mine{ps.step, my_rows(ps.fresh, opt_.batch), ps.groups};
    // Per-row policies hold this rank's rows; the others draw the whole batch, this rank keeps its rows.
    ModelState init = policy_.per_row() ? policy_.initial(model_, b, mine)
                                        : my_rows(policy_.initial(model_, opt_.batch, ps), opt_.batch);
    auto out = model_->forward(tokens.narrow(1, 0, opt_.T), init.empty() ? nullptr : &init);  // logits [b, T, V]
    const int64_t V = model_->vocab_size();
    auto logits = out.logits.reshape({-1, V}).to(torch::kFloat32);  // [b*T, V]
    auto targets = tokens.narrow(1, 1, opt_.T).reshape({-1});        // [b*T]
    torch::Tensor loss;
    double loss_v = 0;
    torch::Tensor loss_sum;  // data parallel: this rank's summed loss, added over the ranks with the gradients
    double count = 0;
    if (auto* g = dist::group()) {
      // The whole batch's mean: each rank's sum over the global count, gradients summed below. The
      // count is known without asking unless a mask decides it.
      auto ce = torch::nn::functional::cross_entropy(
          logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));  // [b*T]
      if (mask.defined()) {
        auto m = mask.narrow(1, 1, opt_.T).reshape({-1}).to(logits.device());  // [b*T]
        loss_sum = (ce * m).sum();
        std::vector<torch::Tensor> c{m.sum().to(torch::kCPU, torch::kFloat64).reshape({1})};
        g->all_reduce(c);
        count = std::max(1.0, c[0].item<double>());
      } else {
        loss_sum = ce.sum();
        count = static_cast<double>(opt_.batch * opt_.T);
      }
      loss = loss_sum / count;
      loss_v = 0;  // known after the all-reduce below: every rank then fails at the same step, or none
    } else if (mask.defined()) {  // mean over the marked targets only (a batch with none: loss 0, no update)
      auto m = mask.narrow(1, 1, opt_.T).reshape({-1}).to(logits.device());  // [B*T]
      auto ce = torch::nn::functional::cross_entropy(
          logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));  // [B*T]
      loss = (ce * m).sum() / m.sum().clamp_min(1.0);
      loss_v = loss.item<double>();
    } else {
      loss = torch::nn::functional::cross_entropy(logits, targets);
      loss_v = loss.item<double>();
    }
    if (!std::isfinite(loss_v)) return "loss became " + std::to_string(loss_v) + " at step " + std::to_string(step);
    if (flat_grad_.defined()) flat_grad_.zero_();  // the views stay (LibTorch's zero_grad(false) detach_()es them: refused for views)
    else optimizer_->zero_grad();
    loss.backward();
    if (auto* g = dist::group()) {  // the whole batch's gradient (and loss) on every rank: one all-reduce
      for (auto& p : trainable_)  // backward accumulated in place: every gradient still a view of the buffer
        if (p.grad().defined() && !p.grad().is_alias_of(flat_grad_))
          return "internal: a gradient left its data-parallel buffer at step " + std::to_string(step);
      const int64_t last = flat_grad_.numel() - 1;
      flat_grad_.narrow(0, last, 1).copy_(loss_sum.detach().reshape({1}));
      std::vector<torch::Tensor> buf{flat_grad_};
      g->all_reduce(buf);
      loss_v = flat_grad_[last].item<double>() / count;
      if (!std::isfinite(loss_v)) return "loss became " + std::to_string(loss_v) + " at step " + std::to_string(step);
    }
    double gn = 0;
    if (opt_.grad_clip > 0) {
      gn = torch::nn::utils::clip_grad_norm_(trainable_, opt_.grad_clip);
    } else {
      for (auto& p : trainable_)
        if (p.grad().defined()) gn += p.grad().square().sum().item<double>();
      gn = std::sqrt(gn);
    }
    if (!std::isfinite(gn)) return "gradient norm became " + std::to_string(gn) + " at step " + std::to_string(step);
    optimizer_->step();
    if (seen_) seen_(init.empty() ? model_->zero_state(b) : init, detach_state(out.final_state));
    policy_.observe(detach_state(out.final_state), mine);
    info.loss = loss_v;
    info.lr = lr;
    info.grad_norm = gn;
    return {};
  }

 private:
  RecurrentLM& model_;
  const std::vector<Document>& docs_;
  InitialStatePolicy& policy_;
  const TrainOptions& opt_;
  const StatesSeenFn& seen_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::vector<torch::Tensor> trainable_;
  torch::Tensor flat_grad_;  // data parallel only: [all trainable numels + 1], the gradients' storage
  WindowSampler windows_;
  std::unique_ptr<StreamSampler> streams_;
};

}  // namespace

TrainResult train(RecurrentLM& model, const std::vector<Document>& docs, InitialStatePolicy& policy,
                  const TrainOptions& opt, const ProgressFn& progress, const CheckpointOptions& ckpt,
                  const StatesSeenFn& states_seen) {
  check_train_options(opt);  // every knob in range, NaN included, before anything moves
  if (opt.batch % dist::world() != 0)
    throw Error("batch " + std::to_string(opt.batch) + " is not divisible by the " + std::to_string(dist::world()) +
                " processes of the job (each takes batch / processes rows)");
  torch::manual_seed(opt.seed);
  model->train();
  TrainLoop loop(model, docs, policy, opt, states_seen);
  const fs::path cdir = ckpt.dir;
  int64_t first = 1;
  if (!ckpt.dir.empty() && ckpt.resume && fs::exists(cdir / "trainer.json")) first = loop.resume(cdir);
  if (first == 1 && policy.wants_calibration()) loop.calibrate();

  TrainResult result;
  result.resumed_from = first - 1;
  result.steps_done = first - 1;
  using clk = std::chrono::steady_clock;
  const auto t_start = clk::now();
  for (int64_t step = first; step <= opt.steps; ++step) {
    StepInfo info;
    if (std::string why = loop.step(step, info); !why.empty()) {
      result.status = "failed";
      result.message = why;
      break;
    }
    info.step = step;
    info.steps = opt.steps;
    info.elapsed_s = std::chrono::duration<double>(clk::now() - t_start).count();
    const double done_here = static_cast<double>(step - first + 1);
    info.tokens_per_s = done_here * static_cast<double>(opt.batch * opt.T) / std::max(1e-9, info.elapsed_s);
    info.eta_s = info.elapsed_s / done_here * static_cast<double>(opt.steps - step);
    result.history.push_back(info);
    result.steps_done = step;
    if (!ckpt.dir.empty() && ckpt.every > 0 && step % ckpt.every == 0 && step < opt.steps) loop.save(cdir, step);
    bool stop = progress && !progress(info);
    if (dist::group()) {
      // One collective: every rank stops at the same step when any of them is cancelled, and the
      // ranks' parameters are checked identical after every step.
      stop = dist::agree_and_check(stop, loop.fingerprint(), "parameters after step " + std::to_string(step));
    }
    if (stop) {
      result.status = "cancelled";
      result.message = "cancelled after step " + std::to_string(step);
      break;
    }
  }
  if (!ckpt.dir.empty() && result.status != "failed" && result.steps_done >= first) loop.save(cdir, result.steps_done);
  for (auto& p : model->parameters()) p.set_requires_grad(true);
  model->eval();
  return result;
}

}  // namespace statescope
