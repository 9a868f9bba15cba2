// copying.cpp — synthetic copying: sample generation, training from scratch, greedy evaluation.
#include "core/analyses/copying.h"

#include "core/model/checkpoint.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/analyses/passkey.h"  // greedy_decode

namespace statescope {

std::string make_copy_sample(int64_t n, int64_t alphabet, std::mt19937_64& rng) {
  if (alphabet < 2 || alphabet > 26) throw Error("copying: alphabet must be 2..26 letters, got " + std::to_string(alphabet));
  if (n < 1) throw Error("copying: string length must be >= 1, got " + std::to_string(n));
  std::uniform_int_distribution<int> letter(0, static_cast<int>(alphabet) - 1);
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += static_cast<char>('a' + letter(rng));
  return s + "|" + s + "\n";
}

std::vector<Document> copy_training_docs(int64_t n, int64_t window, int64_t L, int64_t alphabet, uint64_t seed) {
  if (L < 1) throw Error("copying: L must be >= 1, got " + std::to_string(L));
  if (window < 2 * L + 2)
    throw Error("copying: training window " + std::to_string(window) + " cannot hold a sample of length L = " +
                std::to_string(L) + " (needs 2L + 2 = " + std::to_string(2 * L + 2) + ")");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> len(1, L);
  std::vector<Document> docs;
  docs.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    std::string text;
    while (static_cast<int64_t>(text.size()) < window + 1) text += make_copy_sample(len(rng), alphabet, rng);
    text.resize(window + 1);
    docs.push_back({"copy" + std::to_string(i), encode_bytes(text)});
  }
  return docs;
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

CopyResult evaluate_copying(Mamba2LM& model, const std::vector<int64_t>& lengths, int64_t alphabet, int64_t samples,
                            uint64_t seed) {
  if (samples < 1) throw Error("copying: need at least one evaluation sample");
  model->eval();
  CopyResult r;
  r.lengths = lengths;
  r.samples = samples;
  r.alphabet = alphabet;
  std::mt19937_64 rng(seed);
  const auto dev = model->output_weight().device();
  for (int64_t n : lengths) {
    auto prompt = torch::empty({samples, n + 1}, torch::kInt64);  // [samples, n + 1]: "s|"
    std::vector<int32_t> targets(samples * n);
    auto pa = prompt.accessor<int64_t, 2>();
    for (int64_t i = 0; i < samples; ++i) {
      const std::string s = make_copy_sample(n, alphabet, rng);
      for (int64_t k = 0; k <= n; ++k) pa[i][k] = static_cast<unsigned char>(s[k]);
      for (int64_t k = 0; k < n; ++k) targets[i * n + k] = static_cast<unsigned char>(s[k]);
    }
    auto ans = greedy_decode(model, prompt.to(dev), n).cpu().to(torch::kInt32).contiguous();  // [samples, n]
    std::vector<int32_t> answers(ans.data_ptr<int32_t>(), ans.data_ptr<int32_t>() + samples * n);
    auto [exact, tok] = score_copies(answers, targets, samples, n);
    r.exact.push_back(exact);
    r.token_accuracy.push_back(tok);
  }
  return r;
}

CopyRun run_copying(const CopyOptions& opt, const PolicySpec& ps, TrainOptions t, const ProgressFn& progress,
                    const Compute& compute) {
  const int64_t window = opt.T > 0 ? opt.T : 4 * opt.L;
  auto docs = copy_training_docs(opt.train_docs, window, opt.L, opt.alphabet, opt.seed + 1);
  Mamba2Config c = opt.model;
  c.validate("copying model");
  Mamba2LM model(c);
  model->reset_parameters(opt.seed);
  place_model(model, compute);
  t.T = window;
  t.seed = opt.seed;
  CopyRun out;
  if (opt.pretrain_steps > 0) {  // zero-state pre-training, identical for every policy (same seeds)
    TrainOptions pre = t;
    pre.steps = opt.pretrain_steps;
    auto zero = make_policy(PolicySpec{}, opt.seed + 4);
    out.train = train(model, docs, *zero, pre, progress);
    if (out.train.status != "finished") return out;
    t.seed = opt.seed + 5;  // a fresh data order for the second phase
  }
  auto policy = make_policy(ps, opt.seed + 2);
  auto second = train(model, docs, *policy, t, [&](const StepInfo& s) {
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
  out.result = evaluate_copying(model, lengths, opt.alphabet, opt.eval_samples, opt.seed + 3);
  out.result.L = opt.L;
  out.result.T = window;
  return out;
}

}  // namespace statescope
