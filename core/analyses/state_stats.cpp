// state_stats.cpp — state histograms at chosen positions, fitted Gaussians, state change norms.
#include "core/analyses/state_stats.h"

#include <torch/torch.h>

#include <map>
#include <set>

#include "core/base/error.h"
#include "core/analyses/evaluate.h"

namespace statescope {

// One pass over the sequences gathering three things at once (histograms at the chosen positions,
// fitted moments at T-1, per-token state change), so the long scan is paid once; ~90 lines on purpose.
StateStatsResult state_statistics(Mamba2LM& model, const std::vector<Document>& docs, const StateStatsOptions& o0) {
  StateStatsOptions o = o0;
  const auto& c = model->config();
  if (o.T < 2 || o.sequences <= 0 || o.bins <= 0 || o.segment <= 0) throw Error("state stats: bad options");
  if (o.length <= 0) o.length = 64 * o.T;
  if (o.positions.empty())
    for (int64_t p : {o.T / 2, o.T - 1, 2 * o.T, 8 * o.T, 32 * o.T, 64 * o.T - 1})
      if (p < o.length) o.positions.push_back(p);
  if (o.layers.empty())
    for (int64_t l = 0; l < c.n_layer; ++l) o.layers.push_back(l);
  std::set<int64_t> pos_set(o.positions.begin(), o.positions.end());
  pos_set.insert(o.T - 1);  // the fit
  for (auto p : pos_set)
    if (p < 0 || p >= o.length)
      throw Error("state stats: position " + std::to_string(p) + " outside [0, " + std::to_string(o.length) + ")");
  for (auto l : o.layers)
    if (l < 0 || l >= c.n_layer) throw Error("state stats: layer " + std::to_string(l) + " does not exist");

  torch::NoGradGuard ng;
  model->eval();
  auto seqs = eval_sequences(docs, o.length - 1, o.sequences);  // o.length tokens each
  auto toks = torch::empty({o.sequences, o.length}, torch::kInt64);
  for (int64_t s = 0; s < o.sequences; ++s)
    for (int64_t t = 0; t < o.length; ++t) toks[s][t] = seqs[s][t];
  toks = toks.to(model->output_weight().device());

  // Segment boundaries: every o.segment tokens and right after each requested position, so the
  // final state of a segment is the state after that position.
  std::set<int64_t> cuts;
  for (int64_t p = o.segment; p < o.length; p += o.segment) cuts.insert(p);
  for (auto p : pos_set) cuts.insert(p + 1);
  cuts.insert(o.length);
  std::map<int64_t, std::vector<torch::Tensor>> states;  // position -> per layer [N, H, P, Ns]
  auto delta = torch::zeros({c.n_layer, o.length}, torch::kFloat64);
  ModelState st;
  int64_t start = 0;
  for (int64_t end : cuts) {
    if (end <= start) continue;
    ForwardOptions fo = model->forward_options();
    fo.state_norms = true;
    auto out = model->forward(toks.narrow(1, start, end - start), st.empty() ? nullptr : &st, fo);
    delta.narrow(1, start, end - start).copy_(out.delta_norm.mean(1).to(torch::kCPU, torch::kFloat64));
    st = out.final_state;
    if (pos_set.count(end - 1)) {
      auto& v = states[end - 1];
      for (auto& l : st) v.push_back(l.ssm.to(torch::kCPU, torch::kFloat64));
    }
    start = end;
  }

  StateStatsResult r;
  r.positions = o.positions;
  r.layers = o.layers;
  r.nheads = c.nheads();
  r.length = o.length;
  r.sequences = o.sequences;
  r.T = o.T;
  r.n_layer = c.n_layer;
  const int64_t H = c.nheads(), nb = o.bins;
  double range = o.range;
  if (!(range > 0)) {
    for (auto p : o.positions)
      for (auto l : o.layers) range = std::max(range, states[p][l].abs().max().item<double>());
    if (!(range > 0)) range = 1.0;
  }
  for (int64_t i = 0; i <= nb; ++i) r.bin_edges.push_back(-range + 2.0 * range * static_cast<double>(i) / nb);
  const double width = 2.0 * range / nb;
  for (auto l : o.layers) {
    for (auto p : o.positions) {
      auto x = states[p][l].transpose(0, 1).reshape({H, -1});  // [H, N*P*Ns]
      for (int64_t h = 0; h < H; ++h) {
        auto counts = torch::histc(x[h], nb, -range, range);   // entries outside the range are dropped
        auto dens = counts / (static_cast<double>(x.size(1)) * width);
        auto d = dens.contiguous();
        r.histogram.insert(r.histogram.end(), d.data_ptr<double>(), d.data_ptr<double>() + nb);
      }
      auto m = x.mean(1), sd = x.std(1, /*unbiased=*/false);
      for (int64_t h = 0; h < H; ++h) {
        r.mean.push_back(m[h].item<double>());
        r.std.push_back(sd[h].item<double>());
      }
    }
    auto fit = states[o.T - 1][l].transpose(0, 1).reshape({H, -1});
    auto fm = fit.mean(1), fs = fit.std(1, false);
    for (int64_t h = 0; h < H; ++h) {
      r.fitted_mean.push_back(fm[h].item<double>());
      r.fitted_std.push_back(fs[h].item<double>());
    }
  }
  auto dc = delta.contiguous();
  r.delta_norm.assign(dc.data_ptr<double>(), dc.data_ptr<double>() + dc.numel());
  return r;
}

}  // namespace statescope
