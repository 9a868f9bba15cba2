// effrem.cpp — Effective Remembrance curves and heatmap.
#include "core/analyses/effrem/effrem.h"

#include <torch/torch.h>

#include <cmath>
#include <set>

#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/analyses/eval/evaluate.h"

namespace statescope {

torch::Tensor total_variation(const torch::Tensor& p, const torch::Tensor& q) {
  return 0.5 * (p.to(torch::kFloat64) - q.to(torch::kFloat64)).abs().sum(-1);
}

std::vector<int64_t> effrem_grid(int64_t max_T, int64_t points, bool log_grid) {
  std::set<int64_t> g{0};
  const int64_t hi = max_T - 1;
  for (int64_t i = 0; i < points && hi >= 1; ++i) {
    const double f = points == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(points - 1);
    const double v = log_grid ? std::exp(f * std::log(static_cast<double>(hi))) : 1.0 + f * static_cast<double>(hi - 1);
    g.insert(std::clamp<int64_t>(std::llround(v), 1, hi));
  }
  return {g.begin(), g.end()};
}

EffRemResult effective_remembrance(RecurrentLM& model, const std::vector<Document>& docs, const EffRemOptions& o,
                                   const std::function<bool(int64_t, int64_t)>& progress) {
  if (o.Ts.empty() || o.sequences <= 0 || o.points <= 0) throw Error("effrem: need at least one T, sequences and points");
  for (auto T : o.Ts)
    if (T < 2) throw Error("effrem: every T must be at least 2, got " + std::to_string(T));
  torch::NoGradGuard ng;
  model->eval();
  EffRemResult r;
  r.T = o.Ts;
  r.sequences = o.sequences;
  r.t = effrem_grid(*std::max_element(o.Ts.begin(), o.Ts.end()), o.points, o.log_grid);
  const int64_t nT = static_cast<int64_t>(r.T.size()), nt = static_cast<int64_t>(r.t.size()), N = o.sequences;
  // NaN where t >= T (no value there); 0 until computed elsewhere (a data-parallel job sums them).
  for (int64_t i = 0; i < nT; ++i)
    for (int64_t j = 0; j < nt; ++j) {
      r.value.push_back(r.t[j] < r.T[i] ? 0.0 : NAN);
      r.stderr_.push_back(r.value.back());
    }
  const auto dev = model->output_weight().device();
  // Data parallel: the (T, t) items, in order, go to the ranks in turn (item k to rank k mod N);
  // each item's value is computed exactly as one process computes it, and the values are summed
  // over the ranks at the end (each entry from one rank). forward_tokens counts what one process
  // would run: a T's full-context pass is counted by the rank owning its first item.
  int64_t done = 0, total = 0, items = 0;
  for (auto T : r.T)
    for (auto t : r.t)
      if (t < T && dist::mine(items++)) ++total;

  // Next-token distributions after tokens [start, T) of every sequence: [N, V] float64.
  auto next_dist = [&](const torch::Tensor& toks, int64_t start, int64_t T, bool counted = true) {
    const int64_t len = T - start, per = std::max<int64_t>(1, o.max_batch_tokens / len);
    std::vector<torch::Tensor> out;
    for (int64_t i = 0; i < N; i += per) {
      const int64_t b = std::min(per, N - i);
      auto logits = model->forward(toks.narrow(0, i, b).narrow(1, start, len)).logits.select(1, len - 1);  // [b, V]
      out.push_back(torch::softmax(logits.to(torch::kFloat64), -1).cpu());
      if (counted) r.forward_tokens += b * len;
    }
    return torch::cat(out, 0);
  };

  int64_t item = 0;
  for (int64_t i = 0; i < nT; ++i) {
    const int64_t T = r.T[i];
    const int64_t first = item;  // this T's first item
    int64_t mine = 0;
    for (int64_t j = 0; j < nt; ++j)
      if (r.t[j] < T && dist::mine(item++)) ++mine;
    if (mine == 0) continue;  // all of this T's items are other ranks'
    auto seqs = eval_sequences(docs, T - 1, N);  // N sequences of T tokens
    auto toks = torch::empty({N, T}, torch::kInt64);
    for (int64_t s = 0; s < N; ++s)
      for (int64_t k = 0; k < T; ++k) toks[s][k] = seqs[s][k];
    toks = toks.to(dev);
    auto full = next_dist(toks, 0, T, dist::mine(first));
    for (int64_t j = 0, k = first; j < nt; ++j) {
      const int64_t t = r.t[j];
      if (t >= T) continue;
      if (!dist::mine(k++)) continue;
      auto tv = total_variation(full, next_dist(toks, t, T));  // [N]; t = 0 recomputed as a check
      r.value[i * nt + j] = tv.mean().item<double>();
      r.stderr_[i * nt + j] = N > 1 ? (tv.std(/*unbiased=*/true) / std::sqrt(static_cast<double>(N))).item<double>() : 0.0;
      if (progress && !progress(++done, total)) throw Error("effrem cancelled");
    }
  }
  std::vector<double> tokens{static_cast<double>(r.forward_tokens)};
  dist::sum_over_ranks({&r.value, &r.stderr_, &tokens});  // each entry from its one rank
  r.forward_tokens = static_cast<int64_t>(tokens[0]);
  return r;
}

}  // namespace statescope
