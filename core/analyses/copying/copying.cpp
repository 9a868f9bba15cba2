// copying.cpp — synthetic copying: examples, training from scratch, greedy evaluation from zero and
// passed states.
#include "core/analyses/copying/copying.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/model/checkpoint.h"
#include "core/model/mamba2/model.h"  // the copying task trains a fresh Mamba-2 of its own

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

ModelState copy_passed_state(RecurrentLM& model, int64_t batch, int64_t L, int64_t T, int64_t alphabet, bool conv_passed,
                             uint64_t seed, int64_t chain) {
  torch::NoGradGuard ng;
  model->eval();
  const auto dev = model->output_weight().device();
  const ForwardOptions fo = model->forward_options();
  ModelState st;
  for (int64_t c = 0; c < chain; ++c) {
    auto docs = copy_training_docs(batch, T, 1, L, alphabet, seed + 1000003 * static_cast<uint64_t>(c));
    auto x = torch::empty({batch, T}, torch::kInt64);  // [batch, T]: one padded example per row
    for (int64_t b = 0; b < batch; ++b) docs[b].tokens.copy(0, T, x.data_ptr<int64_t>() + b * T);
    st = detach_state(model->forward(x.to(dev), st.empty() ? nullptr : &st, fo).final_state);
    if (!conv_passed)
      for (auto& l : st) l.conv = torch::Tensor();  // undefined conv state = zeros, as the policy passes it
  }
  return st;
}

CopyResult evaluate_copying(RecurrentLM& model, const std::vector<int64_t>& lengths, int64_t alphabet, int64_t samples,
                            uint64_t seed, int64_t L, int64_t T, bool conv_passed) {
  model->eval();
  CopyResult r;
  r.lengths = lengths;
  r.samples = samples;
  r.alphabet = alphabet;
  r.L = L;
  r.T = T;
  r.conv_passed = conv_passed;
  std::tie(r.exact, r.token_accuracy) = score_copying(*model_answerer(model), lengths, alphabet, samples, seed);
  const ModelState passed = copy_passed_state(model, samples, L, T, alphabet, conv_passed, seed + 7);
  std::tie(r.exact_passed, r.token_accuracy_passed) =
      score_copying(*model_answerer(model, &passed), lengths, alphabet, samples, seed);  // the same strings
  return r;
}

CopyRun run_copying(const CopyOptions& opt, const PolicySpec& policy, TrainOptions t, const ProgressFn& progress,
                    const Compute& compute) {
  PolicySpec ps = policy;
  if (ps.pass_conv < 0) ps.pass_conv = 0;  // copying hands over the SSM state only, unless asked
  const int64_t window = opt.T > 0 ? opt.T : copy_window(opt.L);
  const int64_t per_doc = ps.kind == "tbtt" ? kTaskExamplesPerStream : 1;
  auto docs = copy_training_docs(opt.train_docs, window, per_doc, opt.L, opt.alphabet, opt.seed + 1);
  Mamba2Config c = opt.model;
  c.validate("copying model");
  RecurrentLM model = Mamba2LM(c);
  model->reset_parameters(opt.seed);
  place_model(model, compute);
  t.T = window;
  t.seed = opt.seed;
  CopyRun out;
  if (opt.pretrain_steps > 0) {  // zero-state pre-training, identical for every policy (same seeds)
    TrainOptions pre = t;
    pre.steps = opt.pretrain_steps;
    auto zero = make_policy(PolicySpec{}, opt.seed + 4);
    // One example per window (the same examples as `docs`, not streamed, even when the policy is TBTT).
    const auto& pre_docs = per_doc == 1 ? docs : copy_training_docs(opt.train_docs, window, 1, opt.L, opt.alphabet, opt.seed + 1);
    out.train = train(model, pre_docs, *zero, pre, progress);
    if (out.train.status != "finished") return out;
    t.seed = opt.seed + 5;  // a fresh data order for the second phase
  }
  auto pol = make_policy(ps, opt.seed + 2);
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
  out.result = evaluate_copying(model, lengths, opt.alphabet, opt.eval_samples, opt.seed + 3, opt.L, window,
                                ps.conv_passed());
  return out;
}

}  // namespace statescope
