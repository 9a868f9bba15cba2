// attention.cpp — see attention.h.
#include "core/analyses/attention/attention.h"

#include <torch/torch.h>

#include <memory>

#include "core/base/error.h"
#include "core/base/memory_budget.h"
#include "core/model/intervention.h"

namespace statescope {

namespace {

torch::Tensor causal_mask(int64_t L) { return torch::ones({L, L}, torch::kBool).tril(); }

// Mean |M[t, t-d]| over the t that have such an s, per distance d.  M [L, L] -> [L]
torch::Tensor by_distance(const torch::Tensor& M) {
  const int64_t L = M.size(0);
  auto by = torch::zeros({L}, torch::kFloat64);
  auto absM = M.abs();
  for (int64_t d = 0; d < L; ++d) by[d] = absM.diagonal(-d).mean();
  return by;
}

}  // namespace

torch::Tensor mamba1_channel_attention(const torch::Tensor& dt_c, const torch::Tensor& A_c, const torch::Tensor& B,
                                       const torch::Tensor& C, torch::Tensor* decay_c) {
  const int64_t L = dt_c.size(0), N = A_c.size(0);
  auto cum = torch::cumsum(dt_c, 0);                                               // [L] sum_{r<=t} dt_r
  auto seg = cum.unsqueeze(1) - cum.unsqueeze(0);                                  // [t, s] sum_{s<r<=t}
  const auto causal = causal_mask(L);
  auto M = torch::zeros({L, L}, torch::kFloat64);
  for (int64_t n = 0; n < N; ++n) {  // one state dimension at a time: memory L x L, not L x L x N
    auto decay = torch::exp(seg * A_c[n]).masked_fill(~causal, 0.0);               // above the diagonal: overflow, then 0
    M += C.select(1, n).unsqueeze(1) * B.select(1, n).unsqueeze(0) * decay;
  }
  if (decay_c) *decay_c = torch::exp(cum.unsqueeze(1) * A_c.unsqueeze(0));        // [L, N]
  return M * dt_c.unsqueeze(0);                                                    // column s scaled by dt_s
}

namespace {

// Where M's rows come from: one layer of one sequence, read once for every head.
class MapReader {
 public:
  virtual ~MapReader() = default;
  virtual int64_t length() const = 0;
  virtual int64_t heads() const = 0;
  virtual void check_head(int64_t head) const = 0;
  // Rows t0..t1-1 of the head's M [t1-t0, L] (float64), zero above the diagonal.
  virtual torch::Tensor rows(int64_t head, int64_t t0, int64_t t1) const = 0;
  // What is left of the initial state at each position [L].
  virtual torch::Tensor init_weight(int64_t head) const = 0;
};

// One layer's scan terms on one sequence in float64 (RecurrentLMImpl::scan_terms, with a training-free
// intervention's changed dt and A, and its resets), from which any head's rows of M come: Mamba-2's
// heads or Mamba-1's channel groups. One forward for every head.
class LayerReader : public MapReader {
 public:
  LayerReader(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, const ModelState* init) {
    if (!model->capabilities().effective_attention)
      throw Error("effective attention: written for selective scans (Mamba-2's heads, Mamba-1's channel groups); "
                  "this model is " + architecture_title(model->model_config()));
    const auto& layout = model->state_layout();
    if (layer < 0 || layer >= layout.n_layer)
      throw Error("effective attention: layer " + std::to_string(layer) + " is outside 0.." +
                  std::to_string(layout.n_layer - 1));
    if (tokens.dim() != 2 || tokens.size(0) != 1 || tokens.size(1) < 1)
      throw Error("effective attention: needs one sequence of at least one token ([1, L])");
    groups_ = layout.groups, group_name_ = layout.group_name, L_ = tokens.size(1);
    const Intervention* iv = model->intervention.get();
    const LayerIntervention* liv = iv ? iv->layer(layer) : nullptr;
    if (Intervention::clips(liv))
      throw Error("effective attention: the clip intervention rescales the state by its own norm, which no fixed "
                  "matrix M expresses");
    reset_ = iv ? iv->reset_period : 0;
    torch::NoGradGuard no_grad;
    ForwardOptions o = model->forward_options();
    o.mixer_inputs = true;
    const auto out = model->forward(tokens, init, o);
    const LayerState* li = init ? &(*init)[layer] : nullptr;
    SelectiveScanTerms in = model->scan_terms(out.mixer_inputs.at(layer), layer, li);
    if (Intervention::changes_inputs(liv)) {  // the dt and A the scan reads (positions from 0)
      in.dt = intervene_dt(*liv, iv->dt_from, 0, in.dt);
      in.A = in.A * liv->a_factor;
    }
    auto f64 = [](const torch::Tensor& t) { return t.squeeze(0).to(torch::kFloat64); };
    mamba1_ = in.per_channel_A;
    heads_per_group_ = in.heads_per_group;
    per_ = in.dt.size(2) / groups_;  // Mamba-1: channels per group
    // Mamba-2: [L, H], [H], [L, G, N]; Mamba-1: [L, Di], [Di, N], [L, N]
    dt_ = f64(in.dt), A_ = in.A.to(torch::kFloat64), B_ = f64(in.B), C_ = f64(in.C);
  }

  int64_t length() const override { return L_; }
  int64_t heads() const override { return groups_; }
  void check_head(int64_t head) const override {
    if (head < 0 || head >= groups_)
      throw Error("effective attention: " + group_name_ + " " + std::to_string(head) + " is outside 0.." +
                  std::to_string(groups_ - 1));
  }

  // Rows t0..t1-1 of the head's M [t1-t0, L]: exact, zero above the diagonal and across resets.
  torch::Tensor rows(int64_t head, int64_t t0, int64_t t1) const override {
    const int64_t r = t1 - t0;
    auto t = torch::arange(t0, t1, torch::kInt64).unsqueeze(1), s = torch::arange(L_, torch::kInt64).unsqueeze(0);
    auto keep = s <= t;                                                            // [r, L]
    if (reset_ > 0) keep = keep & (t.div(reset_, "floor") == s.div(reset_, "floor"));
    const double minus_inf = -std::numeric_limits<double>::infinity();
    if (!mamba1_) {
      const int64_t g = head / heads_per_group_;
      auto dt = dt_.select(1, head);                                               // [L]
      auto cum = torch::cumsum(dt * A_[head].item<double>(), 0);                   // [L] sum_{r<=t} dt_r A
      auto seg = cum.narrow(0, t0, r).unsqueeze(1) - cum.unsqueeze(0);             // [r, L] sum_{s<q<=t}
      auto decay = torch::exp(seg.masked_fill(~keep, minus_inf));
      return C_.select(1, g).narrow(0, t0, r).matmul(B_.select(1, g).t()) * dt.unsqueeze(0) * decay;
    }
    auto M = torch::zeros({r, L_}, torch::kFloat64);
    const int64_t N = A_.size(1);
    for (int64_t c = head * per_; c < (head + 1) * per_; ++c) {  // a channel group: the mean over its channels
      auto dt = dt_.select(1, c);
      auto cum = torch::cumsum(dt, 0);
      // +inf where nothing is read: times A < 0 it is -inf, and its exp 0
      auto seg = (cum.narrow(0, t0, r).unsqueeze(1) - cum.unsqueeze(0)).masked_fill(~keep, -minus_inf);  // [r, L]
      auto Mc = torch::zeros({r, L_}, torch::kFloat64);
      for (int64_t n = 0; n < N; ++n)  // one state dimension at a time: memory r x L
        Mc += C_.select(1, n).narrow(0, t0, r).unsqueeze(1) * B_.select(1, n).unsqueeze(0) *
              torch::exp(seg * A_[c][n].item<double>());
      M += (Mc * dt.unsqueeze(0)).masked_fill(~keep, 0.0) / double(per_);
    }
    return M;
  }

  // a_t: what is left of the initial state at t [L] (Mamba-1: mean over the group's channels and n).
  torch::Tensor init_weight(int64_t head) const override {
    torch::Tensor a;
    if (!mamba1_) {
      a = torch::exp(torch::cumsum(dt_.select(1, head) * A_[head].item<double>(), 0));
    } else {
      a = torch::zeros({L_}, torch::kFloat64);
      for (int64_t c = head * per_; c < (head + 1) * per_; ++c)
        a += torch::exp(torch::cumsum(dt_.select(1, c), 0).unsqueeze(1) * A_[c].unsqueeze(0)).mean(1) / double(per_);
    }
    if (reset_ > 0 && reset_ < L_) a.narrow(0, reset_, L_ - reset_).zero_();  // gone at the first reset
    return a;
  }

 private:
  bool mamba1_ = false;
  int64_t L_ = 0, groups_ = 1, per_ = 1, heads_per_group_ = 1, reset_ = 0;
  std::string group_name_;
  torch::Tensor dt_, A_, B_, C_;
};

// A hybrid's attention layer (its index `a` among the attention layers) on one sequence from the zero
// state: its queries and keys from one forward (ForwardOutput::attention_q, attention_k), from which
// any row of its softmax map is exact (in float64 from the computation's q and k), under the
// intervention's attention_window as the forward reads it. It keeps nothing from before the
// sequence: init is 0.
class SoftmaxReader : public MapReader {
 public:
  SoftmaxReader(RecurrentLM& model, const torch::Tensor& tokens, int64_t a) {
    torch::NoGradGuard no_grad;
    ForwardOptions o = model->forward_options();
    o.attention_scores_of = a;
    const auto out = model->forward(tokens, nullptr, o);
    if (!out.attention_q.defined()) throw Error("internal: the hybrid returned no queries for attention layer " + std::to_string(a));
    q_ = out.attention_q[0].to(torch::kFloat64), k_ = out.attention_k[0].to(torch::kFloat64);  // [H, L, d], [H, L, d]
    scale_ = out.attention_scale, window_ = out.attention_window, L_ = tokens.size(1);
  }
  int64_t length() const override { return L_; }
  int64_t heads() const override { return q_.size(0); }
  void check_head(int64_t head) const override {
    if (head < 0 || head >= heads())
      throw Error("attention: head " + std::to_string(head) + " is outside 0.." + std::to_string(heads() - 1));
  }
  torch::Tensor rows(int64_t head, int64_t t0, int64_t t1) const override {
    auto t = torch::arange(t0, t1, torch::kInt64).unsqueeze(1), s = torch::arange(L_, torch::kInt64).unsqueeze(0);
    auto hidden = s > t;                                                           // [r, L]
    if (window_ > 0) hidden = hidden | (s <= t - window_);
    auto scores = q_[head].narrow(0, t0, t1 - t0).matmul(k_[head].t()) * scale_;  // [r, L]
    return torch::softmax(scores.masked_fill(hidden, -std::numeric_limits<double>::infinity()), -1);
  }
  torch::Tensor init_weight(int64_t) const override { return torch::zeros({L_}, torch::kFloat64); }

 private:
  torch::Tensor q_, k_;
  double scale_ = 0;
  int64_t window_ = 0, L_ = 0;
};

// The reader of `layer`: a pure model's recurrent layer, or a hybrid's model layer (its attention's
// softmax, or its recurrent layer's effective attention); `kind` gets a hybrid's layer kind.
std::unique_ptr<MapReader> reader_of(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, std::string& kind) {
  const auto& lay = model->state_layout();
  if (lay.layer_kinds.empty()) return std::make_unique<LayerReader>(model, tokens, layer, nullptr);
  const int64_t n = static_cast<int64_t>(lay.layer_kinds.size());
  if (layer < 0 || layer >= n) throw Error("attention: layer " + std::to_string(layer) + " is outside 0.." + std::to_string(n - 1));
  if (tokens.dim() != 2 || tokens.size(0) != 1 || tokens.size(1) < 1)
    throw Error("attention: needs one sequence of at least one token ([1, L])");
  kind = lay.layer_kinds[static_cast<size_t>(layer)];
  int64_t a = 0, r = 0;  // layer's index among the attention layers and among the recurrent ones
  for (int64_t i = 0; i < layer; ++i) {
    a += lay.layer_kinds[static_cast<size_t>(i)] == "attention";
    r += lay.layer_kinds[static_cast<size_t>(i)] == "mamba2" || lay.layer_kinds[static_cast<size_t>(i)] == "gated_deltanet";
  }
  if (kind == "attention") return std::make_unique<SoftmaxReader>(model, tokens, a);
  if (kind == "mamba2" || kind == "gated_deltanet") return std::make_unique<LayerReader>(model, tokens, r, nullptr);
  throw Error("attention: layer " + std::to_string(layer) + " of this " + architecture_title(model->model_config()) + " is a" +
              (kind == "mlp" ? "n MLP" : " mixture-of-experts") + " layer: it reads only its own position");
}

}  // namespace

std::vector<EffectiveAttention> effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer,
                                                    const std::vector<int64_t>& heads, const ModelState* init,
                                                    const std::function<bool(int64_t, int64_t)>& progress) {
  if (tokens.dim() == 2 && tokens.size(1) > kMaxAttentionLength)
    throw Error("effective attention: " + std::to_string(tokens.size(1)) + " tokens; at most " +
                std::to_string(kMaxAttentionLength) + " (the matrix is L x L; attention_result bins longer ones)");
  const LayerReader reader(model, tokens, layer, init);
  for (int64_t head : heads) reader.check_head(head);
  const int64_t L = reader.length();
  std::vector<EffectiveAttention> all;
  for (int64_t head : heads) {
    if (progress && !progress(static_cast<int64_t>(all.size()), static_cast<int64_t>(heads.size())))
      throw Error("attention cancelled");
    auto M = reader.rows(head, 0, L);                                              // [L, L]
    all.push_back({layer, head, L, M, reader.init_weight(head), by_distance(M)});
  }
  return all;
}

EffectiveAttention effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, int64_t head,
                                       const ModelState* init) {
  return effective_attention(model, tokens, layer, std::vector<int64_t>{head}, init).front();
}

std::vector<int32_t> leading_tokens(const std::vector<Document>& docs, int64_t length) {
  std::vector<int32_t> ids;
  for (const auto& d : docs)
    for (int32_t t : d.tokens) {
      if (static_cast<int64_t>(ids.size()) >= length) return ids;
      ids.push_back(t);
    }
  return ids;
}

std::vector<int64_t> attention_bins(int64_t L) {
  std::vector<int64_t> first;
  for (int64_t p = 0; p < std::min(L, kAttentionExactBins); ++p) first.push_back(p);
  if (L <= kMaxAttentionLength) {
    for (int64_t p = kAttentionExactBins; p < L; ++p) first.push_back(p);
    return first;
  }
  // kAttentionLogBins bins from kAttentionExactBins to L, their edges a geometric series (rounded;
  // a bin is at least one position wide).
  const double ratio = std::pow(double(L) / double(kAttentionExactBins), 1.0 / double(kAttentionLogBins));
  double edge = double(kAttentionExactBins);
  for (int64_t k = 0; k < kAttentionLogBins; ++k, edge *= ratio) {
    const int64_t p = std::max(first.back() + 1, static_cast<int64_t>(std::llround(edge)));
    if (p >= L) break;
    first.push_back(p);
  }
  return first;
}

uint64_t attention_memory_bytes(int64_t L, int64_t heads) {
  const uint64_t B = static_cast<uint64_t>(attention_bins_count(L)), l = static_cast<uint64_t>(L);
  const uint64_t result = mul_sat(static_cast<uint64_t>(heads), mul_sat(B, B) + B + l) * 8;  // M, init, by_distance
  const uint64_t bins = L > kMaxAttentionLength ? mul_sat(B, B) * 16 : 0;                 // a head's sums and counts
  const uint64_t block = mul_sat(static_cast<uint64_t>(attention_block_rows(L)), l) * 8 * 12;  // a block's temporaries
  return result + bins + block;
}

int64_t attention_block_rows(int64_t L) { return std::max<int64_t>(1, (int64_t{1} << 21) / std::max<int64_t>(L, 1)); }

int64_t attention_bins_count(int64_t L) { return static_cast<int64_t>(attention_bins(L).size()); }

AttentionResult attention_result(RecurrentLM& model, const std::vector<int32_t>& tokens, int64_t layer, int64_t head,
                                 const std::function<bool(int64_t, int64_t)>& progress) {
  if (tokens.empty()) throw Error("attention: the sequence is empty");
  if (static_cast<int64_t>(tokens.size()) > kMaxBinnedAttentionLength)
    throw Error("attention: " + std::to_string(tokens.size()) + " tokens; at most " +
                std::to_string(kMaxBinnedAttentionLength));
  AttentionResult r;
  r.layer = layer;
  r.tokens = tokens;
  r.length = static_cast<int64_t>(tokens.size());
  r.positions = attention_bins(r.length);
  const auto ids = torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), torch::kInt64).view({1, r.length});
  // (one forward before the budget below: the sequence's activations, far less than M's bins)
  const std::unique_ptr<MapReader> reader = reader_of(model, ids, layer, r.layer_kind);
  if (head >= 0) r.heads.push_back(head);
  else
    for (int64_t h = 0; h < reader->heads(); ++h) r.heads.push_back(h);
  const int64_t L = r.length, nb = static_cast<int64_t>(r.positions.size()), nh = static_cast<int64_t>(r.heads.size());
  // Sized before anything is allocated: the result (M is [heads, B, B]) and one block's temporaries.
  check_memory_budget(attention_memory_bytes(L, nh),
                      "effective attention of " + std::to_string(nh) + (nh == 1 ? " head" : " heads") + " at " +
                          std::to_string(L) + " tokens (M is " + std::to_string(nb) + " x " + std::to_string(nb) +
                          " doubles per head; fewer heads (--head) or a shorter --length need less)");
  for (int64_t h : r.heads) reader->check_head(h);
  // M's rows a block at a time (memory block x L): exact up to kMaxAttentionLength, each row written
  // where it belongs; longer, each cell of the bins the mean |M| over its causal pairs (s <= t).
  // by_distance over every pair exactly; init the mean over each bin. Progress (and a cancel) after
  // every block: well under a second apart.
  const bool exact = L <= kMaxAttentionLength;
  auto bin_of = torch::zeros({L}, torch::kInt64);
  for (int64_t k = 1; k < nb; ++k) bin_of.narrow(0, r.positions[k], L - r.positions[k]).add_(1);  // [L]
  auto bin_size = torch::zeros({nb}, torch::kFloat64).index_add_(0, bin_of, torch::ones({L}, torch::kFloat64));
  const int64_t block = attention_block_rows(L), blocks = (L + block - 1) / block;
  auto s = torch::arange(L, torch::kInt64).unsqueeze(0);                           // [1, L]
  r.M.assign(static_cast<size_t>(nh * nb * nb), 0.0);
  auto append = [](std::vector<double>& dst, const torch::Tensor& src) {
    auto c = src.contiguous();
    dst.insert(dst.end(), c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  };
  for (int64_t hi = 0; hi < nh; ++hi) {
    torch::Tensor sums, counts;
    if (!exact) sums = torch::zeros({nb * nb}, torch::kFloat64), counts = torch::zeros({nb * nb}, torch::kFloat64);
    auto dist = torch::zeros({L}, torch::kFloat64);
    double* M_head = r.M.data() + hi * nb * nb;
    for (int64_t b = 0; b < blocks; ++b) {
      if (progress && !progress(hi * blocks + b, nh * blocks)) throw Error("attention cancelled");
      const int64_t t0 = b * block, t1 = std::min(L, t0 + block);
      auto t = torch::arange(t0, t1, torch::kInt64).unsqueeze(1);                  // [rows, 1]
      auto keep = s <= t;                                                          // [rows, L]
      auto rows = reader->rows(r.heads[hi], t0, t1);                               // [rows, L]
      if (exact) {
        auto c = rows.contiguous();
        std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), M_head + t0 * L);
      }
      auto m = rows.abs().masked_select(keep);
      if (!exact) {
        auto cell = (bin_of.index_select(0, t.squeeze(1)).unsqueeze(1) * nb + bin_of.unsqueeze(0)).masked_select(keep);
        sums.index_add_(0, cell, m);
        counts.index_add_(0, cell, torch::ones_like(m));
      }
      dist.index_add_(0, (t - s).masked_select(keep), m);
    }
    if (!exact) {
      auto mean = (sums / counts.clamp_min(1.0)).contiguous();                    // [nb, nb]
      std::copy(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel(), M_head);
    }
    append(r.init, torch::zeros({nb}, torch::kFloat64).index_add_(0, bin_of, reader->init_weight(r.heads[hi])) / bin_size);
    append(r.by_distance, dist / torch::arange(L, 0, -1, torch::kFloat64));       // pairs at distance d: L - d
  }
  if (progress && !progress(nh * blocks, nh * blocks)) throw Error("attention cancelled");
  return r;
}

}  // namespace statescope
