// trainer.cpp — the training loop.
#include "core/train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/model/checkpoint.h"
#include "core/base/error.h"
#include "core/compute/runtime.h"
#include "core/train/samplers.h"

namespace statescope {
namespace {

bool no_decay(const std::string& name) {
  auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends("A_log") || ends("dt_bias") || ends(".D") || name.find("norm") != std::string::npos || ends(".bias");
}

}  // namespace

double learning_rate(const TrainOptions& o, int64_t step) {
  if (o.warmup > 0 && step <= o.warmup) return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup);
  const double span = static_cast<double>(std::max<int64_t>(1, o.steps - o.warmup));
  const double progress = std::clamp(static_cast<double>(step - o.warmup) / span, 0.0, 1.0);
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return o.lr * (o.min_lr_ratio + (1.0 - o.min_lr_ratio) * cosine);
}

TrainResult train(Mamba2LM& model, const std::vector<Document>& docs, InitialStatePolicy& policy,
                  const TrainOptions& opt, const ProgressFn& progress, const CheckpointOptions& ckpt) {
  if (opt.steps < 0 || opt.batch <= 0 || opt.T <= 0)
    throw Error("train: steps must be >= 0, batch and T positive");
  if (!(opt.lr > 0)) throw Error("train: learning rate must be positive");
  torch::manual_seed(opt.seed);
  model->train();

  std::vector<torch::Tensor> decay, plain;
  for (auto& p : model->named_parameters()) {
    const bool frozen = opt.freeze_A_log && p.key().size() >= 5 && p.key().compare(p.key().size() - 5, 5, "A_log") == 0;
    p.value().set_requires_grad(!frozen);
    if (frozen) continue;
    (no_decay(p.key()) ? plain : decay).push_back(p.value());
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto make_opts = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(opt.lr).betas({opt.beta1, opt.beta2}).weight_decay(wd).eps(1e-8));
  };
  groups.emplace_back(decay, make_opts(opt.weight_decay));
  groups.emplace_back(plain, make_opts(0.0));
  torch::optim::AdamW optimizer(groups);
  std::vector<torch::Tensor> trainable = decay;
  trainable.insert(trainable.end(), plain.begin(), plain.end());

  const bool stream = policy.wants_stream();
  WindowSampler windows(docs, opt.T, opt.seed * 7919 + 1);
  std::unique_ptr<StreamSampler> streams;
  if (stream) streams = std::make_unique<StreamSampler>(docs, opt.T, opt.batch, opt.seed * 7919 + 2);
  const int64_t V = model->config().vocab_size;

  int64_t first = 1;
  namespace fs = std::filesystem;
  const fs::path cdir = ckpt.dir;
  if (!ckpt.dir.empty() && ckpt.resume && fs::exists(cdir / "trainer.json")) {
    nlohmann::json st;
    std::ifstream(cdir / "trainer.json") >> st;
    if (st.at("steps").get<int64_t>() != opt.steps || st.at("batch").get<int64_t>() != opt.batch ||
        st.at("T").get<int64_t>() != opt.T || st.at("policy").get<std::string>() != policy.spec().label())
      throw Error((cdir / "trainer.json").string() + ": checkpoint was made with other options (steps, batch, T or policy)");
    load_state_dict(model, read_weights_file((cdir / "model.safetensors").string()), (cdir / "model.safetensors").string());
    torch::load(optimizer, (cdir / "optimizer.pt").string());
    std::vector<torch::Tensor> ps;
    torch::load(ps, (cdir / "policy.pt").string());
    policy.load_state(ps);
    windows.set_rng_state(st.at("windows").get<std::string>());
    if (streams) streams->set_state(st.at("streams").get<std::string>());
    first = st.at("step").get<int64_t>() + 1;
  }
  auto save_checkpoint = [&](int64_t step) {
    if (ckpt.dir.empty()) return;
    const fs::path tmp = cdir.string() + ".tmp";
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    save_model_dir(model, tmp.string());
    torch::save(optimizer, (tmp / "optimizer.pt").string());
    auto ps = policy.save_state();
    for (auto& t : ps)
      if (!t.defined()) t = torch::empty({0});
    torch::save(ps, (tmp / "policy.pt").string());
    nlohmann::json st{{"step", step}, {"steps", opt.steps}, {"batch", opt.batch}, {"T", opt.T},
                      {"policy", policy.spec().label()}, {"windows", windows.rng_state()},
                      {"streams", streams ? streams->state() : std::string()}};
    std::ofstream(tmp / "trainer.json") << st.dump(2);
    fs::remove_all(cdir);
    fs::rename(tmp, cdir);  // a checkpoint is either the old one or the new one, never half
  };

  if (first == 1 && policy.wants_calibration()) {  // fitted noise: measure final states before step 1
    torch::NoGradGuard ng;
    const int64_t L = policy.spec().fit_length;
    if (L > 0) {  // windows of L tokens from their own sampler: the training draws stay as they were
      std::unique_ptr<WindowSampler> cal;
      try {
        cal = std::make_unique<WindowSampler>(docs, L, opt.seed * 7919 + 3);
      } catch (const Error& e) {
        throw Error("fitted noise fit_length " + std::to_string(L) + ": " + e.what());
      }
      for (int64_t i = 0; i < policy.spec().calibration_batches; ++i) {
        auto tokens = cal->next(opt.batch).narrow(1, 0, L);  // [B, L]
        policy.observe(detach_state(model->forward(tokens).final_state), {0, {}});
      }
    } else {
      for (int64_t i = 0; i < policy.spec().calibration_batches; ++i) {
        auto tokens = windows.next(opt.batch).narrow(1, 0, opt.T);  // [B, T]
        policy.observe(detach_state(model->forward(tokens).final_state), {0, {}});
      }
    }
  }

  TrainResult result;
  result.resumed_from = first - 1;
  result.steps_done = first - 1;
  using clk = std::chrono::steady_clock;
  const auto t_start = clk::now();
  for (int64_t step = first; step <= opt.steps; ++step) {
    const double lr = learning_rate(opt, step);
    for (auto& g : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
    PolicyStep ps{step, {}};
    torch::Tensor tokens;  // [B, T+1]
    if (stream) {
      auto b = streams->next();
      tokens = b.tokens;
      ps.fresh = b.fresh;
    } else {
      tokens = windows.next(opt.batch);
    }
    tokens = tokens.to(model->output_weight().device());  // [B, T+1] on the model's device
    ModelState init = policy.initial(model, opt.batch, ps);
    ForwardOptions fo;
    fo.scan = fused_scan_requested() ? ScanImpl::Fused : ScanImpl::Chunked;  // runtime.h
    auto out = model->forward(tokens.narrow(1, 0, opt.T), init.empty() ? nullptr : &init, fo);  // logits [B, T, V]
    auto loss = torch::nn::functional::cross_entropy(out.logits.reshape({-1, V}).to(torch::kFloat32),
                                                     tokens.narrow(1, 1, opt.T).reshape({-1}));
    const double loss_v = loss.item<double>();
    if (!std::isfinite(loss_v)) {
      result.status = "failed";
      result.message = "loss became " + std::to_string(loss_v) + " at step " + std::to_string(step);
      break;
    }
    optimizer.zero_grad();
    loss.backward();
    double gn = 0;
    if (opt.grad_clip > 0) gn = torch::nn::utils::clip_grad_norm_(trainable, opt.grad_clip);
    else {
      for (auto& p : trainable) if (p.grad().defined()) gn += p.grad().square().sum().item<double>();
      gn = std::sqrt(gn);
    }
    if (!std::isfinite(gn)) {
      result.status = "failed";
      result.message = "gradient norm became " + std::to_string(gn) + " at step " + std::to_string(step);
      break;
    }
    optimizer.step();
    policy.observe(detach_state(out.final_state), ps);

    StepInfo info;
    info.step = step;
    info.steps = opt.steps;
    info.loss = loss_v;
    info.lr = lr;
    info.grad_norm = gn;
    info.elapsed_s = std::chrono::duration<double>(clk::now() - t_start).count();
    const double done_here = static_cast<double>(step - first + 1);
    info.tokens_per_s = done_here * static_cast<double>(opt.batch * opt.T) / std::max(1e-9, info.elapsed_s);
    info.eta_s = info.elapsed_s / done_here * static_cast<double>(opt.steps - step);
    result.history.push_back(info);
    result.steps_done = step;
    if (ckpt.every > 0 && step % ckpt.every == 0 && step < opt.steps) save_checkpoint(step);
    if (progress && !progress(info)) {
      result.status = "cancelled";
      result.message = "cancelled after step " + std::to_string(step);
      break;
    }
  }
  if (result.status != "failed" && result.steps_done >= first) save_checkpoint(result.steps_done);
  for (auto& p : model->parameters()) p.set_requires_grad(true);
  model->eval();
  return result;
}

}  // namespace statescope
