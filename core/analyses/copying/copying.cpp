// copying.cpp — synthetic copying: examples, training from scratch, greedy evaluation from zero and
// passed states.
#include "core/analyses/copying/copying.h"
#include "core/base/constants.h"

#include <torch/torch.h>

#include <algorithm>

#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/model/checkpoint.h"
#include "core/model/model_factory.h"  // the copying task trains a fresh model of its own (any architecture)

namespace statescope {

TaskExample make_copy_example(int64_t n, int64_t alphabet, std::mt19937_64& rng) {
  if (alphabet < 2 || alphabet > 26) throw Error("copying: alphabet must be 2..26 letters, got " + std::to_string(alphabet));
  if (n < 1) throw Error("copying: string length must be >= 1, got " + std::to_string(n));
  std::uniform_int_distribution<int> letter(0, static_cast<int>(alphabet) - 1);
  std::vector<int32_t> s;
  for (int64_t i = 0; i < n; ++i) s.push_back('a' + letter(rng));
  TaskExample e;
  e.ids.push_back(kCopyBos);
  e.ids.insert(e.ids.end(), s.begin(), s.end());
  e.ids.push_back(kCopySep);
  e.mask.assign(e.ids.size(), 0);  // BOS, the source and SEP: context
  e.ids.insert(e.ids.end(), s.begin(), s.end());
  e.ids.push_back(kCopyEos);
  e.mask.resize(e.ids.size(), 1);  // the copy and EOS: scored
  return e;
}

int64_t copy_window(int64_t L) { return 2 * L + 3; }

std::vector<Document> copy_training_docs(int64_t n, int64_t T, int64_t per_doc, int64_t L, int64_t alphabet,
                                         uint64_t seed) {
  if (L < 1) throw Error("copying: L must be >= 1, got " + std::to_string(L));
  if (T < copy_window(L))
    throw Error("copying: training window T = " + std::to_string(T) + " cannot hold an example of length L = " +
                std::to_string(L) + " (needs 2L + 3 = " + std::to_string(copy_window(L)) + ")");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> len(1, L);
  std::vector<TaskExample> ex;
  ex.reserve(n);
  for (int64_t i = 0; i < n; ++i) ex.push_back(make_copy_example(len(rng), alphabet, rng));
  return task_documents(ex, T, per_doc, kCopyPad, "copy");
}

std::pair<double, double> score_copies(const std::vector<int32_t>& answers, const std::vector<int32_t>& targets,
                                       int64_t samples, int64_t n) {
  if (static_cast<int64_t>(answers.size()) != samples * n || targets.size() != answers.size())
    throw Error("score_copies: expected " + std::to_string(samples * n) + " answers and targets");
  double exact = 0, tokens = 0;
  for (int64_t i = 0; i < samples; ++i) {
    int64_t ok = 0;
    for (int64_t k = 0; k < n; ++k) ok += answers[i * n + k] == targets[i * n + k];
    tokens += static_cast<double>(ok) / static_cast<double>(n);
    exact += ok == n;
  }
  return {exact / static_cast<double>(samples), tokens / static_cast<double>(samples)};
}

std::pair<std::vector<double>, std::vector<double>> score_copying(Answerer& answerer, const std::vector<int64_t>& lengths,
                                                                  int64_t alphabet, int64_t samples, uint64_t seed) {
  if (samples < 1) throw Error("copying: need at least one evaluation sample");
  std::mt19937_64 rng(seed);
  std::vector<double> exact, tok;
  // Data parallel: length k is answered by rank k mod N; every rank draws every string (cheap) so
  // the random stream is one process's; the scores are summed over the ranks at the end.
  int64_t item = 0;
  for (int64_t n : lengths) {
    TokenRows prompts;                      // [samples][n + 2]: BOS s SEP
    std::vector<int32_t> targets;           // [samples * n]
    for (int64_t i = 0; i < samples; ++i) {
      auto e = make_copy_example(n, alphabet, rng);
      prompts.emplace_back(e.ids.begin(), e.ids.begin() + n + 2);
      targets.insert(targets.end(), e.ids.begin() + 1, e.ids.begin() + 1 + n);
    }
    if (!dist::mine(item++)) {  // another rank's length
      exact.push_back(0);
      tok.push_back(0);
      continue;
    }
    const TokenRows got = answerer.greedy(prompts, n);  // [samples][n]
    std::vector<int32_t> answers;
    for (const auto& row : got) {
      if (static_cast<int64_t>(row.size()) != n) throw Error("copying: the answerer returned a row of the wrong length");
      answers.insert(answers.end(), row.begin(), row.end());
    }
    auto [e, t] = score_copies(answers, targets, samples, n);
    exact.push_back(e);
    tok.push_back(t);
  }
  dist::sum_over_ranks({&exact, &tok});  // each length's scores from its one rank
  return {exact, tok};
}

ModelState noise_like(const ModelState& s, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  ModelState out;
  for (const auto& l : s) {
    auto x = l.ssm.detach().to(torch::kCPU, torch::kFloat64);  // [b, H, ...]
    auto flat = x.transpose(0, 1).reshape({x.size(1), -1});     // [H, b * rest]
    auto mean = flat.mean(1), std = flat.std(1, /*unbiased=*/false);
    std::vector<int64_t> view(x.dim(), 1);
    view[1] = x.size(1);
    auto z = at::normal(0.0, 1.0, x.sizes(), gen).to(torch::kFloat64);
    LayerState n;
    n.ssm = (z * std.view(view) + mean.view(view)).to(l.ssm.options());
    out.push_back(std::move(n));  // conv undefined: zeros
  }
  return out;
}

namespace {

// The state after `chain` batches of documents made by docs(c) ([batch] rows of T tokens each),
// each batch from the previous one's final state; conv state kept only when conv_passed.
template <class Docs>
ModelState state_after_chain(RecurrentLM& model, int64_t batch, int64_t T, bool conv_passed, int64_t chain, Docs docs_of) {
  torch::NoGradGuard ng;
  model->eval();
  const auto dev = model->output_weight().device();
  const ForwardOptions fo = model->forward_options();
  ModelState st;
  for (int64_t c = 0; c < chain; ++c) {
    const std::vector<Document> docs = docs_of(c);
    auto x = torch::empty({batch, T}, torch::kInt64);  // [batch, T]: one padded example per row
    for (int64_t b = 0; b < batch; ++b) docs[b].tokens.copy(0, T, x.data_ptr<int64_t>() + b * T);
    st = detach_state(model->forward(x.to(dev), st.empty() ? nullptr : &st, fo).final_state);
    if (!conv_passed)
      for (auto& l : st) l.conv = torch::Tensor();  // undefined conv state = zeros, as the policy passes it
  }
  return st;
}

// The state after 4T tokens of prose: `batch` windows drawn from `prose`; empty when the text is
// too short or holds an id the model does not have.
ModelState prose_state(RecurrentLM& model, int64_t batch, int64_t T, const std::vector<Document>& prose, uint64_t seed) {
  const int64_t P = 4 * T, vocab = model->vocab_size();
  std::vector<const Document*> long_enough;
  for (const auto& d : prose)
    if (d.tokens.size() > static_cast<size_t>(P)) long_enough.push_back(&d);
  if (long_enough.empty()) return {};
  std::mt19937_64 rng(seed);
  auto x = torch::empty({batch, P}, torch::kInt64);  // [batch, 4T]
  for (int64_t b = 0; b < batch; ++b) {
    const Document& d = *long_enough[std::uniform_int_distribution<size_t>(0, long_enough.size() - 1)(rng)];
    const size_t at = std::uniform_int_distribution<size_t>(0, d.tokens.size() - static_cast<size_t>(P) - 1)(rng);
    d.tokens.copy(at, P, x.data_ptr<int64_t>() + b * P);
  }
  if (x.max().item<int64_t>() >= vocab || x.min().item<int64_t>() < 0) return {};  // another tokenizer's ids
  torch::NoGradGuard ng;
  model->eval();
  auto st = detach_state(model->forward(x.to(model->output_weight().device()), nullptr, model->forward_options()).final_state);
  for (auto& l : st) l.conv = torch::Tensor();
  return st;
}

}  // namespace

ModelState copy_passed_state(RecurrentLM& model, int64_t batch, int64_t L, int64_t T, int64_t alphabet, bool conv_passed,
                             uint64_t seed, int64_t chain) {
  return state_after_chain(model, batch, T, conv_passed, chain, [&](int64_t c) {
    return copy_training_docs(batch, T, 1, L, alphabet, SeedStreams::copy_length(seed, static_cast<uint64_t>(c)));
  });
}

ModelState reverse_task_state(RecurrentLM& model, int64_t batch, int64_t L, int64_t T, int64_t alphabet, bool conv_passed,
                              uint64_t seed, int64_t chain) {
  return state_after_chain(model, batch, T, conv_passed, chain, [&](int64_t c) {
    std::mt19937_64 rng(SeedStreams::copy_length(seed, static_cast<uint64_t>(c)));
    std::uniform_int_distribution<int64_t> len(1, L);
    std::vector<TaskExample> ex;
    for (int64_t b = 0; b < batch; ++b) {
      TaskExample e = make_copy_example(len(rng), alphabet, rng);
      const size_t n = (e.ids.size() - 3) / 2;  // BOS s SEP s EOS: the copy is ids[n + 2, 2n + 2)
      std::reverse(e.ids.begin() + static_cast<std::ptrdiff_t>(n + 2), e.ids.begin() + static_cast<std::ptrdiff_t>(2 * n + 2));
      ex.push_back(std::move(e));
    }
    return task_documents(ex, T, 1, kCopyPad, "reverse");
  });
}

CopyResult evaluate_copying(RecurrentLM& model, const std::vector<int64_t>& lengths, int64_t alphabet, int64_t samples,
                            uint64_t seed, int64_t L, int64_t T, bool conv_passed, const std::vector<Document>* prose) {
  model->eval();
  CopyResult r;
  r.lengths = lengths;
  r.samples = samples;
  r.alphabet = alphabet;
  r.L = L;
  r.T = T;
  r.conv_passed = conv_passed;
  std::tie(r.exact, r.token_accuracy) = score_copying(*model_answerer(model), lengths, alphabet, samples, seed);
  const ModelState passed = copy_passed_state(model, samples, L, T, alphabet, conv_passed, SeedStreams::copy_passed_start(seed));
  std::tie(r.exact_passed, r.token_accuracy_passed) =
      score_copying(*model_answerer(model, &passed), lengths, alphabet, samples, seed);  // the same strings
  // Foreign starting states, the same strings again.
  std::vector<std::pair<std::string, ModelState>> starts;
  if (prose)
    if (auto p = prose_state(model, samples, T, *prose, SeedStreams::copy_prose_start(seed)); !p.empty()) starts.emplace_back("prose", std::move(p));
  starts.emplace_back("noise", noise_like(passed, SeedStreams::copy_noise_start(seed)));
  starts.emplace_back("reversed", reverse_task_state(model, samples, L, T, alphabet, conv_passed, SeedStreams::copy_reversed_start(seed)));
  for (auto& [name, st] : starts) {
    auto [e, t] = score_copying(*model_answerer(model, &st), lengths, alphabet, samples, seed);
    r.foreign.push_back(name);
    r.exact_foreign.insert(r.exact_foreign.end(), e.begin(), e.end());
    r.token_accuracy_foreign.insert(r.token_accuracy_foreign.end(), t.begin(), t.end());
  }
  return r;
}

CopyRun run_copying(const CopyOptions& opt, const PolicySpec& policy, TrainOptions t, const ProgressFn& progress,
                    const Compute& compute, const std::vector<Document>* prose) {
  PolicySpec ps = policy;
  if (ps.pass_conv < 0) ps.pass_conv = 0;  // copying hands over the SSM state only, unless asked
  const int64_t window = opt.T > 0 ? opt.T : copy_window(opt.L);
  const int64_t per_doc = ps.kind == "tbtt" ? kTaskExamplesPerStream : 1;
  auto docs = copy_training_docs(opt.train_docs, window, per_doc, opt.L, opt.alphabet, SeedStreams::copy_examples(opt.seed));
  RecurrentLM model = fresh_model(opt.model, opt.seed, "copying model");
  place_model(model, compute);
  t.T = window;
  t.seed = opt.seed;
  CopyRun out;
  if (opt.pretrain_steps > 0) {  // zero-state pre-training, identical for every policy (same seeds)
    TrainOptions pre = t;
    pre.steps = opt.pretrain_steps;
    auto zero = make_policy(PolicySpec{}, SeedStreams::copy_pretrain_policy(opt.seed));
    // One example per window (the same examples as `docs`, not streamed, even when the policy is TBTT).
    const auto& pre_docs = per_doc == 1 ? docs : copy_training_docs(opt.train_docs, window, 1, opt.L, opt.alphabet, SeedStreams::copy_examples(opt.seed));
    out.train = train(model, pre_docs, *zero, pre, progress);
    if (out.train.status != "finished") return out;
    t.seed = SeedStreams::copy_second_phase(opt.seed);  // a fresh data order for the second phase
  }
  auto pol = make_policy(ps, SeedStreams::copy_policy(opt.seed));
  auto second = train(model, docs, *pol, t, [&](const StepInfo& s) {
    StepInfo g = s;  // steps continue the pre-training's count
    g.step += opt.pretrain_steps;
    g.steps += opt.pretrain_steps;
    return !progress || progress(g);
  });
  for (auto& s : second.history) s.step += opt.pretrain_steps, s.steps += opt.pretrain_steps;
  out.train.history.insert(out.train.history.end(), second.history.begin(), second.history.end());
  out.train.status = second.status;
  out.train.message = second.message;
  out.train.steps_done += second.steps_done;
  if (out.train.status != "finished") return out;
  std::vector<int64_t> lengths = opt.eval_lengths;
  if (lengths.empty())
    lengths = {std::max<int64_t>(1, opt.L / 2), opt.L, opt.L * 3 / 2, 2 * opt.L, 3 * opt.L, 4 * opt.L};
  out.result = evaluate_copying(model, lengths, opt.alphabet, opt.eval_samples, SeedStreams::copy_prompts(opt.seed), opt.L, window,
                                ps.conv_passed(), prose);
  return out;
}

}  // namespace statescope
