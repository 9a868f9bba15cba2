// unexplored.cpp — the unexplored-states detector (see unexplored.h).
#include "core/analyses/unexplored/unexplored.h"
#include "core/base/eval_reference.h"
#include "core/base/constants.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>

#include "core/analyses/eval/evaluate.h"
#include "core/dist/comm.h"
#include "core/base/error.h"
#include "core/train/samplers.h"
#include "core/train/state_policy.h"
#include "core/train/trainer.h"

namespace statescope {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The envelope's samples: every 10th sample from the 9th on calibrates the threshold, from the
// 10th on checks it; the rest fit.
enum class Part { Fit, Calibrate, Check };
Part part_of(int64_t i) { return i % 10 == 8 ? Part::Calibrate : i % 10 == 9 ? Part::Check : Part::Fit; }

torch::Tensor rows_of(const torch::Tensor& x, Part p) {  // x [M, ...] -> the rows of part p
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < x.size(0); ++i)
    if (part_of(i) == p) idx.push_back(i);
  return x.index_select(0, torch::tensor(idx, torch::kInt64));
}

void check_options(const UnexploredOptions& o) {
  auto bad = [](const std::string& what) { throw Error("unexplored: " + what); };
  if (o.T < 2) bad("T must be >= 2");
  if (o.length < 1 || o.sequences < 1) bad("length and sequences must be >= 1");
  if (o.stride < 1 || o.stride > o.length) bad("stride must be in [1, length]");
  if (o.train_steps < 1 || o.train_batch < 1) bad("train_steps and train_batch must be >= 1");
  if (o.samples < 50) bad("samples must be >= 50 (the envelope holds 1/10 of them out twice)");
  if (o.components < 1) bad("components must be >= 1");
  if (!(o.quantile > 0 && o.quantile < 1)) bad("quantile must be in (0, 1)");
  if (o.bootstrap < 0) bad("bootstrap must be >= 0");
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * static_cast<double>(i + j) + 1.0;  // ties: mean rank
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 3) return kNaN;
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size()), m = (n + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - m) * (ry[i] - m);
    sxx += (rx[i] - m) * (rx[i] - m);
    syy += (ry[i] - m) * (ry[i] - m);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : kNaN;
}

// Principal components an envelope of M samples of D values keeps (its fit rows less one at most).
static int64_t envelope_components(int64_t M, int64_t D, int64_t components) {
  int64_t n = 0;
  for (int64_t i = 0; i < M; ++i) n += part_of(i) == Part::Fit;
  return std::min({components, D, n - 1});
}

StateEnvelope StateEnvelope::unfitted(int64_t M, int64_t H, int64_t D, int64_t components) {
  StateEnvelope e;
  e.k_ = envelope_components(M, D, components);
  const auto f64 = torch::kFloat64;
  e.mean_ = torch::zeros({H, D}, f64), e.basis_ = torch::zeros({H, D, e.k_}, f64);
  e.lambda_ = torch::zeros({H, e.k_}, f64), e.q_mean_ = torch::zeros({H}, f64);
  e.threshold_ = torch::zeros({H}, f64), e.checked_ = torch::zeros({H}, f64);
  return e;
}

StateEnvelope::StateEnvelope(const torch::Tensor& states, int64_t components, double quantile) {
  if (states.dim() != 3 || states.size(0) < 50) throw Error("state envelope: need states [M >= 50, H, D]");
  auto x = states.to(torch::kCPU, torch::kFloat64);  // [M, H, D]
  auto fit = rows_of(x, Part::Fit), cal = rows_of(x, Part::Calibrate), chk = rows_of(x, Part::Check);
  const int64_t n = fit.size(0), H = x.size(1), D = x.size(2);
  k_ = envelope_components(x.size(0), D, components);
  mean_ = fit.mean(0);                                              // [H, D]
  basis_ = torch::empty({H, D, k_}, torch::kFloat64);
  lambda_ = torch::empty({H, k_}, torch::kFloat64);
  q_mean_ = torch::empty({H}, torch::kFloat64);
  for (int64_t h = 0; h < H; ++h) {
    auto xc = fit.select(1, h) - mean_[h];                          // [n, D]
    auto [U, S, Vh] = at::linalg_svd(xc, /*full_matrices=*/false);  // S [min(n, D)], Vh [min(n, D), D]
    const double total = S.square().sum().item<double>() / static_cast<double>(n - 1);
    const double floor = 1e-12 * total + 1e-300;                    // a flat direction must not divide by 0
    lambda_[h] = (S.narrow(0, 0, k_).square() / static_cast<double>(n - 1)).clamp_min(floor);
    basis_[h] = Vh.narrow(0, 0, k_).t();
    auto z = xc.matmul(basis_[h]);                                  // [n, k]
    q_mean_[h] = std::max((xc.square().sum(1) - z.square().sum(1)).clamp_min(0).mean().item<double>(), floor);
  }
  auto thr_scores = score(cal);                                     // [n_cal, H]
  threshold_ = torch::quantile(thr_scores, quantile, /*dim=*/0);    // [H]
  checked_ = (score(chk) > threshold_).to(torch::kFloat64).mean(0); // [H]
}

torch::Tensor StateEnvelope::score(const torch::Tensor& states) const {
  auto xc = states.to(torch::kCPU, torch::kFloat64) - mean_;        // [b, H, D]
  auto z = torch::einsum("bhd,hdk->bhk", {xc, basis_});              // [b, H, k]
  auto t2 = (z.square() / lambda_).sum(-1) / static_cast<double>(k_);
  auto q = (xc.square().sum(-1) - z.square().sum(-1)).clamp_min(0) / q_mean_;
  return t2 + q;                                                     // [b, H]
}

int64_t reservoir_capacity(const StateLayout& c, int64_t samples) {
  return std::min(samples, (int64_t{1} << 28) / std::max<int64_t>(1, c.n_layer * c.ssm_numel()));
}

StateReservoir::StateReservoir(int64_t n_layer, int64_t nheads, int64_t state_size, int64_t capacity, uint64_t seed)
    : capacity_(capacity), H_(nheads), D_(state_size), rng_(seed) {
  for (int64_t l = 0; l < n_layer; ++l) keep_.push_back(torch::empty({capacity, nheads, state_size}, torch::kFloat32));
}

void StateReservoir::offer(const ModelState& st) {
  torch::NoGradGuard ng;
  const int64_t B = st.front().ssm.size(0);
  for (int64_t r = 0; r < B; ++r, ++seen_) {
    const int64_t slot = seen_ < capacity_ ? seen_ : std::uniform_int_distribution<int64_t>(0, seen_)(rng_);
    if (slot >= capacity_) continue;
    for (size_t l = 0; l < keep_.size(); ++l) keep_[l][slot].copy_(st[l].ssm[r].reshape({H_, D_}));
  }
}

void StateReservoir::offer_share(const ModelState& st) {
  torch::NoGradGuard ng;
  const int64_t b = st.front().ssm.size(0), first = dist::rank() * b, B = dist::world() * b;
  for (int64_t r = 0; r < B; ++r, ++seen_) {
    const int64_t slot = seen_ < capacity_ ? seen_ : std::uniform_int_distribution<int64_t>(0, seen_)(rng_);
    if (slot >= capacity_) continue;
    const bool own = r >= first && r < first + b;
    for (size_t l = 0; l < keep_.size(); ++l)
      if (own) keep_[l][slot].copy_(st[l].ssm[r - first].reshape({H_, D_}));
      else keep_[l][slot].zero_();
  }
}

void StateReservoir::gather() {
  for (auto& k : keep_)  // each slot is non-zero on its one rank: the sum is that rank's row, exactly
    dist::reduce_over_ranks({k.narrow(0, 0, std::min(seen_, capacity_))});  // a layer at a time (memory)
}

std::vector<torch::Tensor> StateReservoir::states() const {
  std::vector<torch::Tensor> out;
  for (auto& k : keep_) out.push_back(k.narrow(0, 0, std::min(seen_, capacity_)));
  return out;
}

std::vector<torch::Tensor> training_states(RecurrentLM& model, const std::vector<Document>& train, const PolicySpec& ps,
                                           const UnexploredOptions& o, uint64_t seed,
                                           const std::function<bool(int64_t, int64_t)>& progress) {
  torch::NoGradGuard ng;
  model->eval();
  const auto& c = model->state_layout();
  const int64_t NL = c.n_layer, H = c.groups, D = c.group_numel(), B = o.train_batch, T = o.T;
  const int64_t M = reservoir_capacity(c, o.samples);  // within 1 GiB: said by the result's train_samples
  if (M < 50) throw Error("unexplored: 50 training states per layer of this model do not fit in 1 GiB");
  auto policy = make_policy(ps, seed);
  WindowSampler windows(train, T, SeedStreams::windows(seed));
  std::unique_ptr<StreamSampler> streams;
  if (policy->wants_stream()) streams = std::make_unique<StreamSampler>(train, T, B, SeedStreams::streams(seed));
  if (policy->wants_calibration()) calibrate_policy(model, train, *policy, windows, B, T, seed);
  StateReservoir keep(NL, H, D, M, SeedStreams::kept_states(seed));
  auto offer = [&](const ModelState& st) { keep.offer(st); };
  std::vector<int64_t> cuts;  // the window's states after T/4, T/2, 3T/4 and T tokens
  for (int64_t q = 1; q <= 4; ++q)
    if (int64_t e = q * T / 4; e > 0 && (cuts.empty() || e > cuts.back())) cuts.push_back(e);
  const auto dev = model->output_weight().device();
  for (int64_t step = 1; step <= o.train_steps; ++step) {
    PolicyStep ps_step{step, {}, model->state_layout().groups};
    torch::Tensor tokens;
    if (streams) {
      auto b = streams->next();
      tokens = b.tokens;
      ps_step.fresh = b.fresh;
    } else {
      tokens = windows.next(B);
    }
    tokens = tokens.to(dev);  // [B, T+1]
    ModelState st = policy->initial(model, B, ps_step);
    if (st.empty()) st = model->zero_state(B);
    offer(st);  // the state the window started from
    int64_t start = 0;
    for (int64_t end : cuts) {
      st = detach_state(model->forward(tokens.narrow(1, start, end - start), &st, model->forward_options(start)).final_state);
      offer(st);
      start = end;
    }
    policy->observe(st, ps_step);
    if (progress && !progress(step, o.train_steps)) throw Error("unexplored states cancelled");
  }
  return keep.states();
}

std::vector<StateEnvelope> fit_envelopes(const std::vector<torch::Tensor>& samples, const UnexploredOptions& o) {
  // Data parallel: layer l's envelope is fitted by rank l mod N (the SVDs are most of the fixed
  // cost) and summed over the ranks into everyone's zeros: every rank scores with the same fits.
  std::vector<StateEnvelope> env;
  if (samples.empty()) return env;
  const int64_t H = samples.front().size(1), D = samples.front().size(2);
  for (size_t l = 0; l < samples.size(); ++l) {
    const auto& s = samples[l];
    env.push_back(dist::mine(static_cast<int64_t>(l)) ? StateEnvelope(s, o.components, o.quantile)
                                                      : StateEnvelope::unfitted(s.size(0), H, D, o.components));
  }
  std::vector<torch::Tensor> fits;
  for (auto& e : env)
    for (auto& t : e.parameters()) fits.push_back(t);
  dist::reduce_over_ranks(fits);

  return env;
}

std::vector<StateEnvelope> zero_state_envelopes(RecurrentLM& model, const std::vector<Document>& train,
                                                const UnexploredOptions& o, uint64_t seed) {
  UnexploredOptions c = o;  // the evaluation's knobs do not matter here
  c.length = std::max<int64_t>(c.length, 1), c.sequences = std::max<int64_t>(c.sequences, 1), c.stride = 1;
  check_options(c);
  const auto samples = training_states(model, train, PolicySpec{}, o, seed);
  if (samples.front().size(0) < 50)
    throw Error("unexplored: only " + std::to_string(samples.front().size(0)) + " zero-state training states for "
                "the common envelope; it needs 50 or more: raise analyses.unexplored.train_steps or train_batch");
  return fit_envelopes(samples, o);
}

UnexploredResult unexplored_states(RecurrentLM& model, const std::vector<Document>& train,
                                   const std::vector<Document>& validation, const PolicySpec& ps,
                                   const UnexploredOptions& o0, uint64_t seed, const EvalResult* eval,
                                   const std::function<bool(int64_t, int64_t)>& progress,
                                   const std::vector<torch::Tensor>* recorded,
                                   const std::vector<StateEnvelope>* common) {
  UnexploredOptions o = o0;
  if (o.length <= 0) o.length = default_eval_length(o.T);
  if (o.stride <= 0) o.stride = std::max<int64_t>(1, o.T / 2);
  check_options(o);
  const auto& c = model->state_layout();
  const int64_t NL = c.n_layer, H = c.groups, D = c.group_numel(), S = o.sequences, L = o.length;
  std::vector<int64_t> positions;
  for (int64_t p = o.stride - 1; p < L; p += o.stride) positions.push_back(p);
  const int64_t npos = static_cast<int64_t>(positions.size());
  const int64_t eb = std::min<int64_t>(S, 16);  // sequences per forward
  // Data parallel: evaluation batch k goes to rank k mod N (the same batches as one process); the
  // replay of training states (1-2) runs on every rank, so every rank holds the same envelopes.
  int64_t my_batches = 0;
  for (int64_t k = 0; k * eb < S; ++k) my_batches += dist::mine(k);
  const int64_t total = o.train_steps + my_batches * npos;
  int64_t done = 0;

  // 1-2. Training states and their envelopes.
  auto samples = training_states(model, train, ps, o, seed, [&](int64_t d, int64_t) {
    return !progress || progress(++done, total);
  });
  const int64_t replayed = samples.front().size(0);
  if (recorded && !recorded->empty() && recorded->front().size(0) > 0)  // what the trainer actually met
    for (size_t l = 0; l < samples.size(); ++l) samples[l] = torch::cat({samples[l], (*recorded)[l]}, 0);
  if (samples.front().size(0) < 50)
    throw Error("unexplored: only " + std::to_string(samples.front().size(0)) + " training states (" +
                std::to_string(o.train_steps) + " steps x " + std::to_string(o.train_batch) +
                " windows replayed, at most 'samples' kept); the envelope needs 50 or more: raise "
                "analyses.unexplored.train_steps or train_batch");
  const std::vector<StateEnvelope> env = fit_envelopes(samples, o);
  if (common && common->size() != env.size())
    throw Error("unexplored: the common envelope has " + std::to_string(common->size()) + " layers, the model " +
                std::to_string(env.size()));

  // 3. Evaluation states, scored after every stride-th position; counts only.
  torch::NoGradGuard ng;
  model->eval();
  const auto seqs = eval_sequences(validation, L, S);  // the evaluation's own sequences
  auto counts = torch::zeros({npos, NL, H}, torch::kFloat64);
  auto counts_common = torch::zeros({npos, NL, H}, torch::kFloat64);
  std::vector<double> outside_seq(static_cast<size_t>(S * npos), 0.0);
  std::vector<double> common_seq(common ? static_cast<size_t>(S * npos) : 0, 0.0);
  const auto dev = model->output_weight().device();
  for (int64_t s0 = 0; s0 < S; s0 += eb) {
    if (!dist::mine(s0 / eb)) continue;  // another rank's batch
    const int64_t b = std::min(eb, S - s0);
    auto tok = torch::empty({b, L}, torch::kInt64);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t t = 0; t < L; ++t) tok[i][t] = seqs[s0 + i][t];
    tok = tok.to(dev);
    ModelState st;
    int64_t start = 0;
    for (int64_t j = 0; j < npos; ++j) {
      const int64_t end = positions[j] + 1;
      st = model->forward(tok.narrow(1, start, end - start), st.empty() ? nullptr : &st, model->forward_options(start)).final_state;
      start = end;
      auto per_seq = torch::zeros({b}, torch::kFloat64), per_seq_common = torch::zeros({b}, torch::kFloat64);
      for (int64_t l = 0; l < NL; ++l) {
        const auto x = st[l].ssm.reshape({b, H, D});
        auto out = (env[l].score(x) > env[l].threshold()).to(torch::kFloat64);  // [b, H]
        counts[j][l] += out.sum(0);
        per_seq += out.sum(1);
        if (!common) continue;
        auto oc = ((*common)[l].score(x) > (*common)[l].threshold()).to(torch::kFloat64);  // [b, H]
        counts_common[j][l] += oc.sum(0);
        per_seq_common += oc.sum(1);
      }
      for (int64_t i = 0; i < b; ++i) {
        outside_seq[(s0 + i) * npos + j] = per_seq[i].item<double>() / static_cast<double>(NL * H);
        if (common) common_seq[(s0 + i) * npos + j] = per_seq_common[i].item<double>() / static_cast<double>(NL * H);
      }
      if (progress && !progress(++done, total)) throw Error("unexplored states cancelled");
    }
  }

  // Counts are integers and each sequence's fraction comes from its one rank: exact in any order.
  dist::reduce_over_ranks({counts, torch::from_blob(outside_seq.data(), {S * npos}, torch::kFloat64)});
  if (common)
    dist::reduce_over_ranks({counts_common, torch::from_blob(common_seq.data(), {S * npos}, torch::kFloat64)});

  UnexploredResult r;
  r.T = o.T, r.length = L, r.sequences = S, r.n_layer = NL, r.nheads = H;
  r.components = env.front().components(), r.train_samples = samples.front().size(0);
  r.recorded_samples = r.train_samples - replayed;
  r.train_steps = o.train_steps, r.train_batch = o.train_batch, r.quantile = o.quantile;
  r.positions = positions;
  auto frac = (counts / static_cast<double>(S)).contiguous();
  r.outside.assign(frac.data_ptr<double>(), frac.data_ptr<double>() + frac.numel());
  auto fm = frac.mean({1, 2}).contiguous();
  r.outside_mean.assign(fm.data_ptr<double>(), fm.data_ptr<double>() + npos);
  r.outside_seq = outside_seq;
  if (common) {
    auto fc = (counts_common / static_cast<double>(S)).contiguous();
    r.common_outside.assign(fc.data_ptr<double>(), fc.data_ptr<double>() + fc.numel());
    auto fcm = fc.mean({1, 2}).contiguous();
    r.common_outside_mean.assign(fcm.data_ptr<double>(), fcm.data_ptr<double>() + npos);
  }
  for (int64_t l = 0; l < NL; ++l)
    for (int64_t h = 0; h < H; ++h) {
      r.heldout_outside.push_back(env[l].heldout_outside()[h].item<double>());
      r.threshold.push_back(env[l].threshold()[h].item<double>());
    }

  // 4. The excess over each stride (positions >= T) and its rank correlation with the outside fraction.
  r.excess.assign(npos, kNaN);
  r.excess_rho = r.excess_rho_lo = r.excess_rho_hi = kNaN;
  r.common_rho = r.common_rho_lo = r.common_rho_hi = kNaN;
  // The one yardstick when the evaluation has it; else the run's own state-reset reference.
  if (!eval || eval->sequences != S || eval->length != L) return r;
  const std::vector<float>& reference = reference_seq(*eval);
  if (reference.size() != static_cast<size_t>(S * L)) return r;
  const bool fixed = !eval->fixed_seq.empty();
  r.excess_reference = fixed ? "fixed" : "own";
  std::vector<double> ex(static_cast<size_t>(S * npos), kNaN);  // [S, npos]
  std::vector<int64_t> used;                                     // grid points with a defined excess
  for (int64_t j = 0; j < npos; ++j) {
    const int64_t t0 = std::max(o.T, positions[j] - o.stride + 1), t1 = positions[j];
    if (t0 > t1) continue;
    used.push_back(j);
    for (int64_t s = 0; s < S; ++s) {
      double sum = 0;
      for (int64_t t = t0; t <= t1; ++t) sum += eval->nll_seq[s * L + t] - reference[s * L + t];
      ex[s * npos + j] = sum / static_cast<double>(t1 - t0 + 1);
    }
  }
  // Spearman of an outside fraction ([S, npos]) and the excess over the used grid points, averaged
  // over `pick` (sequences, with repeats).
  auto rho_of = [&](const std::vector<double>& outside, const std::vector<int64_t>& pick) {
    std::vector<double> a, e;
    for (int64_t j : used) {
      double so = 0, se = 0;
      for (int64_t s : pick) so += outside[s * npos + j], se += ex[s * npos + j];
      a.push_back(so / static_cast<double>(pick.size()));
      e.push_back(se / static_cast<double>(pick.size()));
    }
    return std::pair{spearman(a, e), e};
  };
  std::vector<int64_t> all(S);
  std::iota(all.begin(), all.end(), 0);
  auto [rho, e_mean] = rho_of(outside_seq, all);
  r.excess_rho = rho;
  for (size_t i = 0; i < used.size(); ++i) r.excess[used[i]] = e_mean[i];
  if (common) r.common_rho = rho_of(common_seq, all).first;
  // One set of resamples for both: their intervals are of the same sequences.
  std::mt19937_64 rng(SeedStreams::heldout_split(seed));
  std::vector<double> boot, boot_common;
  for (int64_t k = 0; k < o.bootstrap; ++k) {
    std::vector<int64_t> pick(S);
    for (auto& p : pick) p = std::uniform_int_distribution<int64_t>(0, S - 1)(rng);
    if (double v = rho_of(outside_seq, pick).first; std::isfinite(v)) boot.push_back(v);
    if (common)
      if (double v = rho_of(common_seq, pick).first; std::isfinite(v)) boot_common.push_back(v);
  }
  auto interval = [](std::vector<double>& b, double& lo, double& hi) {
    if (b.size() < 10) return;
    std::sort(b.begin(), b.end());
    auto at = [&](double q) { return b[static_cast<size_t>(std::floor(q * static_cast<double>(b.size() - 1)))]; };
    lo = at(0.025), hi = at(0.975);
  };
  interval(boot, r.excess_rho_lo, r.excess_rho_hi);
  interval(boot_common, r.common_rho_lo, r.common_rho_hi);
  return r;
}

}  // namespace statescope
