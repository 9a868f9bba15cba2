// evaluate.cpp — streamed per-position evaluation and the windowed (state-reset) reference.
#include "core/analyses/eval/evaluate.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/base/memory_budget.h"
#include "core/dist/comm.h"
#include "core/compute/runtime.h"
#include "core/train/options.h"

namespace statescope {
namespace F = torch::nn::functional;

std::vector<std::vector<int32_t>> eval_sequences(const std::vector<Document>& docs, int64_t length, int64_t n) {
  // Consecutive pieces of the documents joined in order; reads only the tokens it returns.
  int64_t total = 0;
  for (auto& d : docs) total += static_cast<int64_t>(d.tokens.size());
  const int64_t fit = total / (length + 1);
  if (fit < n)
    throw Error("validation text has " + std::to_string(total) + " tokens: room for " + std::to_string(fit) +
                " sequences of length " + std::to_string(length + 1) + ", " + std::to_string(n) + " requested");
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(n));
  size_t doc = 0, pos = 0;
  for (auto& seq : out) {
    seq.reserve(static_cast<size_t>(length + 1));
    while (static_cast<int64_t>(seq.size()) < length + 1) {
      const auto& t = docs[doc].tokens;
      const size_t take = std::min(t.size() - pos, static_cast<size_t>(length + 1) - seq.size());
      seq.insert(seq.end(), t.begin() + static_cast<std::ptrdiff_t>(pos),
                 t.begin() + static_cast<std::ptrdiff_t>(pos + take));
      pos += take;
      if (pos == t.size()) ++doc, pos = 0;
    }
  }
  return out;
}

namespace {

// A NaN or Inf loss means the logits overflowed (finite weights and states are checked on load
// and in forward): said by position, never averaged into the results.  seg [b, n], positions p..
void check_finite_loss(const torch::Tensor& seg, int64_t p, const char* what) {
  auto bad = ~torch::isfinite(seg);
  if (!bad.any().item<bool>()) return;
  auto at = bad.nonzero()[0];  // [sequence in batch, position in segment]
  throw Error(std::string("evaluation: the ") + what + " loss is not finite (NaN or Inf logits) at position " +
              std::to_string(p + at[1].item<int64_t>()) + " of sequence " + std::to_string(at[0].item<int64_t>()) +
              " of the batch (" + std::to_string(bad.sum().item<int64_t>()) + " such tokens)");
}

// Per-token loss with the full context, streamed in segments of o.segment tokens with the state
// carried; adds the state norms into norm_sum [NL, L] and head_sum [NL, H, L], and a hybrid's
// attention statistics into ent_sum and first_sum [NA, heads, L] (when defined).
// tok [b, L+1] on the model's device -> nll [b, L] float64 on the CPU.
torch::Tensor score_full_context(RecurrentLM& model, const torch::Tensor& tok, const EvalOptions& o, torch::Tensor& norm_sum,
                                 torch::Tensor& head_sum, torch::Tensor& ent_sum, torch::Tensor& first_sum,
                                 const std::function<void()>& tick) {
  const int64_t b = tok.size(0), L = o.length, V = model->vocab_size();
  auto nll = torch::empty({b, L}, torch::kFloat64);
  ModelState state;
  for (int64_t p = 0; p < L; p += o.segment) {
    const int64_t n = std::min(o.segment, L - p);
    ForwardOptions fo = model->forward_options(p);  // the run's Compute: the CUDA kernels on a GPU when fused
    fo.state_norms = o.norms;
    fo.delta_norms = false;  // the evaluation keeps ||S_t|| only
    fo.attention_stats = ent_sum.defined();
    auto out = model->forward(tok.narrow(1, p, n), state.empty() ? nullptr : &state, fo);
    auto lp = F::cross_entropy(out.logits.reshape({-1, V}).to(torch::kFloat32),
                               tok.narrow(1, p + 1, n).reshape({-1}), F::CrossEntropyFuncOptions().reduction(torch::kNone));
    nll.narrow(1, p, n).copy_(lp.view({b, n}).to(torch::kCPU, torch::kFloat64));
    check_finite_loss(nll.narrow(1, p, n), p, "full-context");
    if (o.norms) {
      norm_sum.narrow(1, p, n).add_(out.norm.sum(1).to(torch::kCPU, torch::kFloat64));                       // [NL, n]
      head_sum.narrow(2, p, n).add_(out.norm_per_head.sum(1).permute({0, 2, 1}).to(torch::kCPU, torch::kFloat64));  // [NL, H, n]
    }
    if (fo.attention_stats) {
      if (!out.attention_entropy.defined()) throw Error("internal: the hybrid returned no attention statistics");
      ent_sum.narrow(2, p, n).add_(out.attention_entropy.sum(1).permute({0, 2, 1}).to(torch::kCPU, torch::kFloat64));   // [NA, heads, n]
      first_sum.narrow(2, p, n).add_(out.attention_first.sum(1).permute({0, 2, 1}).to(torch::kCPU, torch::kFloat64));   // [NA, heads, n]
    }
    state = out.final_state;
    tick();
  }
  return nll;
}

// Where the windowed reference's windows start: full windows of T at stride T/2, and the ones cut
// short by the end of the sequence.
struct Windows {
  std::vector<int64_t> full_starts, short_starts;
  int64_t group = 1;  // windows per forward: the same token budget as a full-context segment
  int64_t forwards() const {
    return static_cast<int64_t>((full_starts.size() + group - 1) / group + short_starts.size());
  }
};

Windows plan_windows(const EvalOptions& o) {
  Windows w;
  const int64_t half = o.T / 2;
  w.group = std::max<int64_t>(1, o.segment / o.T);
  for (int64_t s = half; s + half < o.length; s += half) (s + o.T <= o.length ? w.full_starts : w.short_starts).push_back(s);
  return w;
}

// The windowed (state-reset) reference. Windows of length T at stride T/2, state reset in each.
// Position p >= T/2 is scored in the window starting at s = (p/half - 1)*half, where it has
// p - s + 1 in [T/2+1, T] tokens of context. Positions p < T have the same context as the full
// pass, so they are copied from `nll`: the excess is exactly 0 below T. Windows per forward use the
// same token budget as a full-context segment, so peak memory depends on the segment size and not
// on the length.  tok [b, L+1], nll [b, L] -> win [b, L] float64 on the CPU.
torch::Tensor score_windowed(RecurrentLM& model, const torch::Tensor& tok, const torch::Tensor& nll, const EvalOptions& o,
                             const Windows& plan, const std::function<void()>& tick) {
  const int64_t b = tok.size(0), L = o.length, half = o.T / 2, V = model->vocab_size();
  auto win = nll.clone();  // [b, L]
  auto score = [&](const std::vector<int64_t>& starts, int64_t len) {  // windows with `len` predictions each
    for (size_t k0 = 0; k0 < starts.size(); k0 += plan.group) {
      const int64_t nk = std::min<int64_t>(plan.group, static_cast<int64_t>(starts.size() - k0));
      std::vector<torch::Tensor> rows;
      for (int64_t k = 0; k < nk; ++k) rows.push_back(tok.narrow(1, starts[k0 + k], len + 1));
      auto w = torch::cat(rows, 0);                                     // [nk*b, len+1]
      // Only positions from s + skip are scored (window s keeps [max(s + T/2, T), s + len)): the
      // first ones only warm the state up, so they get no final norm, LM head or cross-entropy.
      int64_t skip = len;
      for (int64_t k = 0; k < nk; ++k) skip = std::min(skip, std::max<int64_t>(half, o.T - starts[k0 + k]));
      ForwardOptions fo = model->forward_options(0);  // the run's scan and intervention, from a reset state
      fo.logits_from = std::clamp<int64_t>(skip, 0, len);
      auto out = model->forward(w.narrow(1, 0, len), nullptr, fo);
      const int64_t kept = len - fo.logits_from;
      auto lp = F::cross_entropy(out.logits.reshape({-1, V}).to(torch::kFloat32),
                                 w.narrow(1, 1 + fo.logits_from, kept).reshape({-1}),
                                 F::CrossEntropyFuncOptions().reduction(torch::kNone))
                    .view({nk, b, kept}).to(torch::kCPU, torch::kFloat64);   // [nk, b, kept]
      for (int64_t k = 0; k < nk; ++k) {
        const int64_t s = starts[k0 + k];
        const int64_t p0 = std::max<int64_t>(s + half, o.T), p1 = std::min<int64_t>(s + len, L);
        if (p1 > p0) {
          win.narrow(1, p0, p1 - p0).copy_(lp[k].narrow(1, p0 - s - fo.logits_from, p1 - p0));
          check_finite_loss(win.narrow(1, p0, p1 - p0), p0, "state-reset reference");
        }
      }
      tick();
    }
  };
  for (int64_t s : plan.short_starts) score({s}, L - s);  // cut short by the end of the sequence
  score(plan.full_starts, o.T);
  return win;
}

}  // namespace

EvalResult evaluate_positions(RecurrentLM& model, const std::vector<Document>& docs, const EvalOptions& o,
                              const std::function<bool(int64_t, int64_t)>& progress) {
  if (o.length <= 0 || o.sequences <= 0 || o.segment <= 0 || o.batch <= 0 || o.T < 2)
    throw Error("evaluate: length, sequences, segment, batch must be positive and T >= 2");
  // Stated limits before anything is sized by them: tokens per forward, and the per-sequence
  // results [sequences, length] (two float32 tables).
  if (o.batch > kMaxTokensPerStep / o.segment || o.batch > kMaxTokensPerStep / o.T)
    throw Error("evaluate: batch " + std::to_string(o.batch) + " x segment " + std::to_string(o.segment) +
                " (or x T) exceeds " + std::to_string(kMaxTokensPerStep) + " tokens per forward");
  if (o.sequences > (int64_t{1} << 30) / o.length)
    throw Error("evaluate: sequences " + std::to_string(o.sequences) + " x length " + std::to_string(o.length) +
                " exceeds 2^30 scored positions");
  torch::NoGradGuard ng;
  model->eval();
  const auto& lay = model->state_layout();
  const int64_t L = o.length, H = lay.groups, NL = lay.n_layer;  // H: heads, or Mamba-1's channel groups
  // A hybrid's attention layers (with the norms): NA layers of AH query heads each.
  const int64_t NA = o.norms ? lay.attention_layers : 0, AH = NA > 0 ? lay.attention_heads : 0;
  // What grows with the length, sized before it is allocated: the per-sequence tables (float32:
  // full pass, state reset, the yardstick) and the per-position norms with their sums (float64).
  check_memory_budget(mul_sat(mul_sat(static_cast<uint64_t>(o.sequences), static_cast<uint64_t>(L)), 4 * 3) +
                          (o.norms ? mul_sat(mul_sat(static_cast<uint64_t>(NL * (H + 1) + 2 * NA * AH), static_cast<uint64_t>(L)), 8 * 3) : 0),
                      "evaluation of " + std::to_string(o.sequences) + " sequences x " + std::to_string(L) +
                          " positions (with per-position state norms: --no-state-norms drops them)");
  auto seqs = eval_sequences(docs, L, o.sequences);
  EvalResult r;
  r.length = L; r.sequences = o.sequences; r.n_layer = NL; r.nheads = H; r.T = o.T;
  r.group_name = lay.group_name;
  r.layer_kinds = lay.layer_kinds;
  if (!lay.layer_kinds.empty()) {
    for (int64_t i = 0; i < NL; ++i) r.recurrent_layers.push_back(lay.model_layer(i));
    for (size_t i = 0; i < lay.layer_kinds.size(); ++i)
      if (lay.layer_kinds[i] == "attention") r.attention_layers.push_back(static_cast<int64_t>(i));
  }
  auto nll_all = torch::zeros({o.sequences, L}, torch::kFloat32);
  auto win_all = torch::zeros({o.windowed ? o.sequences : 0, L}, torch::kFloat32);
  // Per-position state norms: [NL, L] and [NL, H, L] (the only results that grow with L by more than
  // a few bytes per position: 8 NL H bytes each); empty when not asked for.
  const int64_t LN = o.norms ? L : 0;
  auto norm_sum = torch::zeros({NL, LN}, torch::kFloat64), head_sum = torch::zeros({NL, H, LN}, torch::kFloat64);
  torch::Tensor ent_sum, first_sum;  // [NA, AH, L], defined for a hybrid with the norms
  if (NA > 0) ent_sum = torch::zeros({NA, AH, L}, torch::kFloat64), first_sum = torch::zeros({NA, AH, L}, torch::kFloat64);
  const Windows plan = plan_windows(o);
  // Data parallel: batch k of sequences goes to rank k % world (the same batches as one process, so
  // every sequence's losses are bit for bit those of one process); the results are summed over the
  // ranks at the end, where each entry of nll_all and win_all comes from exactly one rank.
  const int64_t batches = (o.sequences + o.batch - 1) / o.batch;
  int64_t mine = 0;
  for (int64_t k = 0; k < batches; ++k) mine += dist::mine(k);
  // Progress counts forward calls, so one long sequence still reports as it goes.
  const int64_t per_batch = (L + o.segment - 1) / o.segment + (o.windowed ? plan.forwards() : 0);
  const int64_t total_work = mine * per_batch;
  int64_t done = 0;
  auto tick = [&] {
    ++done;
    if (progress && !progress(done, total_work)) throw Error("evaluation cancelled");
  };

  for (int64_t s0 = 0; s0 < o.sequences; s0 += o.batch) {
    if (!dist::mine(s0 / o.batch)) continue;  // another rank's batch
    const int64_t b = std::min(o.batch, o.sequences - s0);
    auto tok = torch::empty({b, L + 1}, torch::kInt64);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t t = 0; t <= L; ++t) tok[i][t] = seqs[s0 + i][t];
    tok = tok.to(model->output_weight().device());  // [b, L+1]
    auto nll = score_full_context(model, tok, o, norm_sum, head_sum, ent_sum, first_sum, tick);  // [b, L]
    nll_all.narrow(0, s0, b).copy_(nll);
    if (o.windowed) win_all.narrow(0, s0, b).copy_(score_windowed(model, tok, nll, o, plan, tick));
  }
  if (done != total_work) throw Error("internal: evaluation progress counted " + std::to_string(done) + " of " + std::to_string(total_work));
  // [S, L] rows from their one rank each; the norm sums in rank order (double precision). One
  // collective per dtype.
  dist::reduce_over_ranks({nll_all, win_all});
  if (o.norms) dist::reduce_over_ranks({norm_sum, head_sum});
  if (NA > 0) dist::reduce_over_ranks({ent_sum, first_sum});
  auto to_vec = [&](const torch::Tensor& t) {
    auto c = (t / static_cast<double>(o.sequences)).contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  };
  auto flat = [](const torch::Tensor& t) {
    auto c = t.contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  };
  r.nll = to_vec(nll_all.to(torch::kFloat64).sum(0));
  r.nll_seq = flat(nll_all);
  if (o.windowed) {
    r.windowed_nll = to_vec(win_all.to(torch::kFloat64).sum(0));
    r.windowed_seq = flat(win_all);
  }
  if (o.norms) {
    r.norm = to_vec(norm_sum);
    r.norm_per_head = to_vec(head_sum);
  }
  if (NA > 0) {
    r.attention_heads = AH, r.first_tokens = kFirstTokens;
    r.attn_entropy = to_vec(ent_sum);
    r.attn_first = to_vec(first_sum);
  }
  return r;
}

}  // namespace statescope
