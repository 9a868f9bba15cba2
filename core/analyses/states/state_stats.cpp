// state_stats.cpp — state histograms at chosen positions, fitted Gaussians, state change norms.
#include "core/analyses/states/state_stats.h"
#include "core/base/constants.h"

#include <torch/torch.h>

#include <map>
#include <set>

#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/analyses/eval/evaluate.h"

namespace statescope {

namespace {

// Sequences per forward, and the unit a data-parallel job hands out (group k to rank k mod N). One
// process runs the same groups, so its numbers do not depend on how many ranks there are.
constexpr int64_t kGroup = 4;

}  // namespace

// One pass over the sequences gathering three things at once (states at the chosen positions,
// fitted moments at T-1, per-token state change), so the long scan is paid once. The statistics
// are then reduced in a fixed order: per-sequence sums (mean, then squared deviations from it) added
// in sequence order, histogram counts as integers, so a job of N ranks writes one process's numbers.
StateStatsResult state_statistics(RecurrentLM& model, const std::vector<Document>& docs, const StateStatsOptions& o0) {
  StateStatsOptions o = o0;
  const auto& lay = model->state_layout();
  if (o.T < 2 || o.sequences <= 0 || o.bins <= 0 || o.segment <= 0) throw Error("state stats: bad options");
  if (o.length <= 0) o.length = default_eval_length(o.T);
  if (o.positions.empty())
    for (int64_t p : {o.T / 2, o.T - 1, 2 * o.T, 8 * o.T, 32 * o.T, 64 * o.T - 1})
      if (p < o.length) o.positions.push_back(p);
  if (o.layers.empty())
    for (int64_t l = 0; l < lay.n_layer; ++l) o.layers.push_back(l);
  std::set<int64_t> pos_set(o.positions.begin(), o.positions.end());
  pos_set.insert(o.T - 1);  // the fit
  for (auto p : pos_set)
    if (p < 0 || p >= o.length)
      throw Error("state stats: position " + std::to_string(p) + " outside [0, " + std::to_string(o.length) + ")");
  for (auto l : o.layers)
    if (l < 0 || l >= lay.n_layer) throw Error("state stats: layer " + std::to_string(l) + " does not exist");

  torch::NoGradGuard ng;
  model->eval();
  const int64_t S = o.sequences, NL = lay.n_layer, H = lay.groups, nb = o.bins;
  const int64_t G = (S + kGroup - 1) / kGroup;
  const auto seqs = eval_sequences(docs, o.length - 1, S);  // o.length tokens each
  const auto dev = model->output_weight().device();
  std::map<int64_t, int64_t> slot;  // position -> index into the kept states
  for (auto p : pos_set) slot.emplace(p, static_cast<int64_t>(slot.size()));

  // Segment boundaries: every o.segment tokens and right after each requested position, so the
  // final state of a segment is the state after that position.
  std::set<int64_t> cuts;
  for (int64_t p = o.segment; p < o.length; p += o.segment) cuts.insert(p);
  for (auto p : pos_set) cuts.insert(p + 1);
  cuts.insert(o.length);

  // This rank's groups: their states, [slot][layer] -> [b, layout.ssm...] float32 as the model made them.
  struct Held {
    int64_t s0 = 0, b = 0;
    std::vector<std::vector<torch::Tensor>> at;
  };
  std::vector<Held> held;
  auto delta = torch::zeros({G, NL, o.length}, torch::kFloat64);  // per group: sum over its sequences
  for (int64_t g = 0; g < G; ++g) {
    if (!dist::mine(g)) continue;  // another rank's group
    Held h{g * kGroup, std::min(kGroup, S - g * kGroup), std::vector<std::vector<torch::Tensor>>(slot.size())};
    auto toks = torch::empty({h.b, o.length}, torch::kInt64);  // [b, length]
    for (int64_t i = 0; i < h.b; ++i)
      for (int64_t t = 0; t < o.length; ++t) toks[i][t] = seqs[h.s0 + i][t];
    toks = toks.to(dev);
    ModelState st;
    int64_t start = 0;
    for (int64_t end : cuts) {
      if (end <= start) continue;
      ForwardOptions fo = model->forward_options(start);
      fo.state_norms = true;
      auto out = model->forward(toks.narrow(1, start, end - start), st.empty() ? nullptr : &st, fo);
      // delta_norm [NL, b, len] -> summed over the group's sequences [NL, len]
      delta[g].narrow(1, start, end - start).copy_(out.delta_norm.to(torch::kCPU, torch::kFloat64).sum(1));
      st = out.final_state;
      if (auto it = slot.find(end - 1); it != slot.end())
        for (auto& l : st) h.at[it->second].push_back(l.ssm.to(torch::kCPU, torch::kFloat32));
      start = end;
    }
    held.push_back(std::move(h));
  }
  auto x_of = [&](const Held& h, int64_t p, int64_t l) {  // [b, H, group entries] float64
    return h.at[slot.at(p)][l].to(torch::kFloat64).reshape({h.b, H, -1});
  };

  // The histogram range: the largest |entry| at the requested positions, over every rank.
  double range = o.range;
  if (!(range > 0)) {
    auto m = torch::zeros({1}, torch::kFloat64);
    for (auto& h : held)
      for (auto p : o.positions)
        for (auto l : o.layers) m = torch::maximum(m, x_of(h, p, l).abs().max().reshape({1}));
    dist::reduce_over_ranks({m}, dist::Op::Max);
    range = m.item<double>();
    if (!(range > 0)) range = 1.0;
  }
  const double width = 2.0 * range / nb;

  // Per (slot, layer): per-sequence sums [S, H], then per-sequence squared deviations from the mean.
  const int64_t K = static_cast<int64_t>(slot.size());
  auto sums = torch::zeros({K, NL, S, H}, torch::kFloat64);
  auto counts = torch::zeros({K, NL, H, nb}, torch::kFloat64);  // histogram counts (integers)
  for (auto& h : held)
    for (auto [p, k] : slot)
      for (auto l : o.layers) {
        auto x = x_of(h, p, l);
        sums[k][l].narrow(0, h.s0, h.b).copy_(x.sum(2));
        auto per_head = x.transpose(0, 1).reshape({H, -1});  // [H, b * group entries]
        for (int64_t hh = 0; hh < H; ++hh) counts[k][l][hh] += torch::histc(per_head[hh], nb, -range, range);
      }
  dist::reduce_over_ranks({sums, counts, delta});
  const int64_t per_seq = lay.group_numel();  // entries of one head's (group's) state
  const double entries = static_cast<double>(S * per_seq);
  auto mean = sums.sum(2) / entries;  // [K, NL, H]
  auto sq = torch::zeros({K, NL, S, H}, torch::kFloat64);
  for (auto& h : held)
    for (auto [p, k] : slot)
      for (auto l : o.layers)
        sq[k][l].narrow(0, h.s0, h.b).copy_((x_of(h, p, l) - mean[k][l].view({1, H, 1})).square().sum(2));
  dist::reduce_over_ranks({sq});
  auto sd = (sq.sum(2) / entries).sqrt();  // [K, NL, H]

  StateStatsResult r;
  r.positions = o.positions;
  r.layers = o.layers;
  r.nheads = H;
  r.group_name = lay.group_name;
  r.length = o.length;
  r.sequences = S;
  r.T = o.T;
  r.n_layer = NL;
  for (int64_t i = 0; i <= nb; ++i) r.bin_edges.push_back(-range + 2.0 * range * static_cast<double>(i) / nb);
  for (auto l : o.layers) {
    for (auto p : o.positions) {
      const int64_t k = slot.at(p);
      auto dens = (counts[k][l] / (entries * width)).contiguous();  // entries outside the range are dropped
      r.histogram.insert(r.histogram.end(), dens.data_ptr<double>(), dens.data_ptr<double>() + H * nb);
      for (int64_t h = 0; h < H; ++h) {
        r.mean.push_back(mean[k][l][h].item<double>());
        r.std.push_back(sd[k][l][h].item<double>());
      }
    }
    const int64_t k = slot.at(o.T - 1);
    for (int64_t h = 0; h < H; ++h) {
      r.fitted_mean.push_back(mean[k][l][h].item<double>());
      r.fitted_std.push_back(sd[k][l][h].item<double>());
    }
  }
  auto dc = (delta.sum(0) / static_cast<double>(S)).contiguous();  // [NL, length]
  r.delta_norm.assign(dc.data_ptr<double>(), dc.data_ptr<double>() + dc.numel());
  return r;
}

}  // namespace statescope
