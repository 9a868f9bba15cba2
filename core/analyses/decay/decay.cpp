// decay.cpp — decay timescales: forward the evaluation sequences in segments (state carried), take
// the model's per-token log decay dt_t A per layer and group (ForwardOutput::log_decay), and count
// the memory lengths -1 / (dt_t A) into log-spaced bins within T and far past it.
#include "core/analyses/decay/decay.h"

#include <torch/torch.h>

#include <cmath>

#include "core/analyses/eval/evaluate.h"
#include "core/base/error.h"

namespace statescope {

double histogram_median(const double* h, const std::vector<double>& edges) {
  const size_t bins = edges.size() - 1;
  double total = 0;
  for (size_t k = 0; k < bins; ++k) total += h[k];
  if (!(total > 0)) return NAN;
  double below = 0;
  for (size_t k = 0; k < bins; ++k) {
    if (below + h[k] >= 0.5 * total && h[k] > 0) {
      const double frac = (0.5 * total - below) / h[k];
      return std::pow(10.0, edges[k] + frac * (edges[k + 1] - edges[k]));
    }
    below += h[k];
  }
  return std::pow(10.0, edges.back());
}

DecayResult decay_timescales(RecurrentLM& model, const std::vector<Document>& docs, const DecayOptions& o0,
                             const std::function<bool(int64_t, int64_t)>& progress) {
  DecayOptions o = o0;
  if (o.T < 1) throw Error("decay: T must be >= 1");
  if (o.length <= 0) o.length = 16 * o.T;
  if (o.sequences < 1 || o.bins < 4 || o.segment < 1) throw Error("decay: sequences >= 1, bins >= 4, segment >= 1");
  const auto& lay = model->state_layout();
  DecayResult r;
  r.T = o.T, r.length = o.length, r.sequences = o.sequences, r.n_layer = lay.n_layer, r.groups = lay.groups;
  r.group_name = lay.group_name;
  constexpr double lo = -1.0, hi = 7.0;  // memory lengths 0.1 .. 10^7 tokens; outside: the edge bins
  for (int64_t k = 0; k <= o.bins; ++k) r.bin_edges.push_back(lo + (hi - lo) * double(k) / double(o.bins));
  const int64_t far_from = std::max(o.T, o.length / 2);

  torch::NoGradGuard ng;
  model->eval();
  const auto seqs = eval_sequences(docs, o.length - 1, o.sequences);  // o.length tokens each
  const auto dev = model->output_weight().device();
  auto toks = torch::empty({o.sequences, o.length}, torch::kInt64);  // [S, length]
  for (int64_t i = 0; i < o.sequences; ++i)
    for (int64_t t = 0; t < o.length; ++t) toks[i][t] = seqs[i][t];
  toks = toks.to(dev);
  const int64_t NL = lay.n_layer, G = lay.groups, nb = o.bins;
  auto near = torch::zeros({NL, G, nb}, torch::kFloat64), far = torch::zeros({NL, G, nb}, torch::kFloat64);
  ModelState st;
  const int64_t n_seg = (o.length + o.segment - 1) / o.segment;
  for (int64_t s = 0; s < n_seg; ++s) {
    const int64_t a = s * o.segment, b = std::min(o.length, a + o.segment);
    ForwardOptions fo = model->forward_options(a);
    fo.log_decay = true;
    auto out = model->forward(toks.narrow(1, a, b - a), s ? &st : nullptr, fo);
    st = std::move(out.final_state);
    // [NL, S, Ls, G] -> bin index of log10(-1 / ld), clamped to the edge bins
    auto ld = out.log_decay.to(torch::kCPU, torch::kFloat64);
    auto m = torch::log10(-1.0 / ld.clamp_max(-1e-300));
    auto bin = ((m - lo) / (hi - lo) * double(nb)).floor().clamp(0, double(nb - 1)).to(torch::kInt64);
    auto pos = torch::arange(a, b, torch::kInt64).view({1, 1, b - a, 1}).expand_as(bin);
    auto one = torch::ones_like(ld);
    const auto idx = (torch::arange(NL).view({NL, 1, 1, 1}) * G + torch::arange(G).view({1, 1, 1, G})) * nb + bin;
    auto count = [&](torch::Tensor& into, const torch::Tensor& mask) {  // into[l, g, bin] += 1 where mask
      into.view({-1}).index_add_(0, idx.masked_select(mask), one.masked_select(mask));
    };
    count(near, pos < o.T);
    count(far, pos >= far_from);
    if (progress && !progress(s + 1, n_seg)) throw Error("decay cancelled");
  }
  // Fractions per (layer, group).
  near = near / near.sum(-1, true).clamp_min(1);
  far = far / far.sum(-1, true).clamp_min(1);
  auto nc = near.contiguous(), fc = far.contiguous();
  r.near.assign(nc.data_ptr<double>(), nc.data_ptr<double>() + nc.numel());
  r.far.assign(fc.data_ptr<double>(), fc.data_ptr<double>() + fc.numel());
  for (int64_t i = 0; i < NL * G; ++i) {
    r.median_near.push_back(histogram_median(r.near.data() + i * nb, r.bin_edges));
    r.median_far.push_back(histogram_median(r.far.data() + i * nb, r.bin_edges));
  }
  return r;
}

}  // namespace statescope
