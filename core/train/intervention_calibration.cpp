// intervention_calibration.cpp — resolving an intervention for a model (intervention_calibration.h).
#include "core/train/intervention_calibration.h"

#include <torch/torch.h>

#include <sstream>

#include "core/base/error.h"
#include "core/train/samplers.h"

namespace statescope {
namespace {

// Zero-state training windows [windows, T] int64 on the model's device, drawn with `seed`.
torch::Tensor calibration_windows(RecurrentLM& model, const std::vector<Document>& train, int64_t T, int64_t n,
                                  uint64_t seed) {
  WindowSampler sampler(train, T, seed);
  return sampler.next(n).narrow(1, 0, T).to(model->device());
}

// The dt factors [n_layer, dt channels] float64 from the spec's one / per-layer / per-head values.
torch::Tensor expand_factors(const InterventionSpec& s, const StateLayout& lay, int64_t channels) {
  const int64_t NL = lay.n_layer, G = lay.groups;
  auto f = torch::tensor(s.factors, torch::kFloat64);
  const std::string what = s.kind + " intervention: factor ";
  if (s.per == "model") return f.expand({NL, channels}).clone();
  if (f.numel() % NL != 0 || (s.per == "layer" && f.numel() != NL) || (s.per == "head" && f.numel() != NL * G)) {
    std::ostringstream m;
    m << what << "has " << f.numel() << " values per " << s.per << ", the model has " << NL << (NL == 1 ? " layer" : " layers")
      << (s.per == "head" ? " of " + std::to_string(G) + " " + lay.group_name + "s" : "");
    throw Error(m.str());
  }
  if (s.per == "layer") return f.view({NL, 1}).expand({NL, channels}).clone();
  return f.view({NL, G}).repeat_interleave(channels / G, 1);  // a group's factor on each of its channels
}

// The clip's bounds [n_layer, groups]: margin x the largest per-group state norm over the windows'
// positions (all within T).
torch::Tensor calibrate_clip(RecurrentLM& model, const torch::Tensor& windows, double margin) {
  torch::NoGradGuard ng;
  torch::Tensor best;
  for (int64_t i = 0; i < windows.size(0); i += 16) {
    ForwardOptions fo = model->forward_options();
    fo.intervention = nullptr;
    fo.state_norms = true;
    auto out = model->forward(windows.narrow(0, i, std::min<int64_t>(16, windows.size(0) - i)), nullptr, fo);
    auto m = out.norm_per_head.to(torch::kCPU, torch::kFloat64).amax({1, 2});  // [NL, groups]
    best = best.defined() ? torch::maximum(best, m) : m;
  }
  return best * margin;
}

// Per layer, the scan's dt [windows, T, channels] and A's decay rate per channel [channels] (Mamba-2:
// -A per head; Mamba-1: the channel's slowest state entry, -max_n A[c, n]) on zero-state windows.
struct LayerDt {
  torch::Tensor dt, rate;
};
std::vector<LayerDt> calibration_dt(RecurrentLM& model, const torch::Tensor& windows) {
  torch::NoGradGuard ng;
  if (!model->capabilities().longmamba)
    throw Error("longmamba intervention: written for Mamba-2's heads and Mamba-1's channels; this model is " +
                model->architecture());
  std::vector<LayerDt> out(static_cast<size_t>(model->n_layer()));
  for (int64_t i = 0; i < windows.size(0); i += 16) {
    ForwardOptions fo = model->forward_options();
    fo.intervention = nullptr;
    fo.mixer_inputs = true;
    auto w = windows.narrow(0, i, std::min<int64_t>(16, windows.size(0) - i));
    auto f = model->forward(w, nullptr, fo);
    for (int64_t l = 0; l < model->n_layer(); ++l) {
      const SelectiveScanTerms in = model->scan_terms(f.mixer_inputs[l], l, nullptr);
      // Mamba-2: dt [b, T, H], rate -A [H]; Mamba-1: dt [b, T, d_inner], the channel's slowest entry -max_n A [d_inner]
      torch::Tensor dt = in.dt, rate = in.per_channel_A ? -std::get<0>(in.A.max(1)) : -in.A;
      auto& o = out[static_cast<size_t>(l)];
      dt = dt.to(torch::kCPU, torch::kFloat64);
      o.dt = o.dt.defined() ? torch::cat({o.dt, dt}, 0) : dt;
      o.rate = rate.to(torch::kCPU, torch::kFloat64);
    }
  }
  return out;
}

// LongMamba's thresholds per layer [channels] (intervention_spec.h; load_align_target.py of its
// code): 0 in local channels. Per channel, dt over the windows [windows, T] with its top clamp_top
// fraction capped at the smallest of them; global when exp(-rate sum_t dt), mean over the windows,
// exceeds global_threshold; its threshold g: the windows' dt sorted descending and stretched (linear
// interpolation) to `length` values scaled to one window's worth (x T / (windows x T)), the value at
// the first place where their running sum exceeds one window's sum (what T tokens carry).
std::vector<torch::Tensor> calibrate_longmamba(const std::vector<LayerDt>& layers, int64_t T, int64_t length,
                                               double global_threshold, double clamp_top) {
  std::vector<torch::Tensor> thr;
  for (const auto& l : layers) {
    const int64_t W = l.dt.size(0), C = l.dt.size(2);
    auto t = torch::zeros({C}, torch::kFloat64);
    for (int64_t c = 0; c < C; ++c) {
      auto d = l.dt.select(2, c).reshape({-1});                                 // [W x T]
      auto v = std::get<0>(d.sort(0, /*descending=*/true));
      const int64_t capped = static_cast<int64_t>(clamp_top * double(v.size(0)));
      if (capped > 0) v = v.clamp_max(v[capped - 1].item<double>());            // the top fraction capped
      const double per_window = v.sum().item<double>() / double(W);             // what T tokens carry
      const double memory = torch::exp(-l.rate[c] * d.view({W, T}).clamp_max(v[0].item<double>()).sum(1)).mean().item<double>();
      if (memory <= global_threshold || length <= T) continue;                  // local, or no longer than T
      // `length` values spread over the sorted calibration values (one window's worth of mass per T).
      auto at = torch::linspace(0, double(v.size(0) - 1), length, torch::kFloat64);
      auto lo = at.floor().to(torch::kInt64), hi = at.ceil().to(torch::kInt64);
      auto w = at - lo.to(torch::kFloat64);
      auto s = v.index_select(0, lo) * (1 - w) + v.index_select(0, hi) * w;     // [length] descending
      auto run = s.cumsum(0);
      const int64_t k = torch::searchsorted(run, per_window, /*out_int32=*/false, /*right=*/true).item<int64_t>();
      t[c] = s[std::min<int64_t>(k, length - 1)];
    }
    thr.push_back(t);
  }
  return thr;
}

}  // namespace

std::shared_ptr<const Intervention> resolve_intervention(const InterventionSpec& spec, RecurrentLM& model,
                                                         const std::vector<Document>& train, int64_t T, uint64_t seed,
                                                         int64_t target_length) {
  check_intervention(spec);
  const StateLayout& lay = model->state_layout();
  const int64_t NL = lay.n_layer, channels = lay.ssm.front().size;  // Mamba-2: heads; Mamba-1: d_inner
  auto iv = std::make_shared<Intervention>();
  iv->kind = spec.kind;
  iv->label = spec.label();
  iv->layers.resize(static_cast<size_t>(NL));
  if (spec.kind == "dt_scale") {
    auto f = expand_factors(spec, lay, channels);  // [NL, channels]
    for (int64_t l = 0; l < NL; ++l) iv->layers[l].dt_factor = f[l].clone();
    iv->dt_from = spec.from_T ? T : spec.from;
  } else if (spec.kind == "a_scale") {
    auto f = expand_factors(spec, lay, 1);  // [NL, 1]
    for (int64_t l = 0; l < NL; ++l) iv->layers[l].a_factor = f[l][0].item<double>();
  } else if (spec.kind == "reset") {
    iv->reset_period = spec.period;
  } else if (spec.kind == "attention_window") {
    iv->attention_window = spec.period;
  } else if (spec.kind == "clip") {
    auto bound = calibrate_clip(model, calibration_windows(model, train, T, spec.windows, seed), spec.margin);
    for (int64_t l = 0; l < NL; ++l) iv->layers[l].max_norm = bound[l].clone();  // [groups]
  } else if (spec.kind == "longmamba") {
    const int64_t length = spec.length > 0 ? spec.length : target_length > 0 ? target_length : 64 * T;
    auto thr = calibrate_longmamba(calibration_dt(model, calibration_windows(model, train, T, spec.windows, seed)), T,
                                   length, spec.global_threshold, spec.clamp_top);
    for (int64_t l = 0; l < NL; ++l) iv->layers[l].dt_threshold = thr[l];  // [channels]
  }
  return iv;
}

}  // namespace statescope
