// test_copying.cpp — copying examples (BOS s SEP s EOS, masked to the copy) and their padded
// documents have the promised format, an oracle scores 1 and wrong answers 0, evaluation from zero
// and passed states agrees with an independent greedy loop over full forwards, and training runs
// with every kind of state handover.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/mamba2/model.h"
#include "core/model/model_config.h"
#include "core/model/model_factory.h"
#include <nlohmann/json.hpp>
#include "core/analyses/copying/copying.h"
#include "core/base/error.h"
#include "core/train/samplers.h"
#include "core/analyses/copying/record.h"
#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "tests/through_file.h"
#include "tests/scratch.h"

using namespace statescope;

TEST(Copying, ExampleFormatAndMask) {
  std::mt19937_64 rng(5);
  for (int64_t n : {1, 7, 40}) {
    auto e = make_copy_example(n, 4, rng);
    ASSERT_EQ(static_cast<int64_t>(e.ids.size()), 2 * n + 3);
    ASSERT_EQ(e.mask.size(), e.ids.size());
    EXPECT_EQ(e.ids[0], kCopyBos);
    EXPECT_EQ(e.ids[n + 1], kCopySep);
    EXPECT_EQ(e.ids.back(), kCopyEos);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_TRUE(e.ids[1 + i] >= 'a' && e.ids[1 + i] < 'a' + 4);
      EXPECT_EQ(e.ids[1 + i], e.ids[n + 2 + i]);  // the copy
    }
    for (int64_t i = 0; i < 2 * n + 3; ++i) EXPECT_EQ(e.mask[i], i >= n + 2 ? 1 : 0) << "token " << i;  // copy + EOS only
  }
  EXPECT_THROW(make_copy_example(3, 1, rng), Error);
  EXPECT_THROW(make_copy_example(3, 27, rng), Error);
  EXPECT_THROW(make_copy_example(0, 5, rng), Error);
}

// Each training document is one example, padded (and masked) to the window, never cut: a window of
// T + 1 tokens starts at its BOS. TBTT documents stream examples at a stride of T.
TEST(Copying, TrainingDocumentsAreWholePaddedExamples) {
  const int64_t L = 6, T = copy_window(L);
  EXPECT_EQ(T, 15);
  for (int64_t per_doc : {int64_t{1}, int64_t{3}}) {
    auto docs = copy_training_docs(12, T, per_doc, L, 5, 3);
    ASSERT_EQ(static_cast<int64_t>(docs.size()), 12 / per_doc);
    for (auto& d : docs) {
      ASSERT_EQ(static_cast<int64_t>(d.tokens.size()), per_doc * T + 1);
      ASSERT_EQ(d.loss_mask.size(), static_cast<size_t>(d.tokens.size()));
      for (int64_t k = 0; k < per_doc; ++k) {
        const int64_t at = k * T;
        ASSERT_EQ(d.tokens[at], kCopyBos);
        int64_t sep = at + 1;
        while (d.tokens[sep] != kCopySep) ++sep;
        const int64_t n = sep - at - 1;
        EXPECT_GE(n, 1);
        EXPECT_LE(n, L);
        for (int64_t i = 0; i < n; ++i) EXPECT_EQ(d.tokens[at + 1 + i], d.tokens[sep + 1 + i]);
        EXPECT_EQ(d.tokens[sep + 1 + n], kCopyEos);
        int64_t scored = 0;
        for (int64_t i = at; i < at + T; ++i) {
          scored += d.loss_mask[i];
          if (i > sep + 1 + n) EXPECT_EQ(d.tokens[i], kCopyPad);
        }
        EXPECT_EQ(scored, n + 1);  // the copy and EOS
      }
      EXPECT_EQ(d.tokens[per_doc * T], kCopyPad);
      EXPECT_EQ(d.loss_mask[per_doc * T], 0);
    }
  }
  EXPECT_THROW(copy_training_docs(1, 2 * L + 2, 1, L, 5, 3), Error);  // the longest example would not fit
  // TBTT's stream windows are the examples in order: every window starts at a BOS, the fresh flag
  // comes once per document, and the mask travels with the window.
  auto docs = copy_training_docs(6, T, 3, L, 5, 4);
  StreamSampler s(docs, T, 2, 1);
  for (int step = 0; step < 6; ++step) {
    auto b = s.next();
    ASSERT_TRUE(b.mask.defined());
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(b.tokens[r][0].item<int64_t>(), kCopyBos) << "step " << step;
      EXPECT_EQ(b.fresh[r].item<bool>(), step % 3 == 0) << "step " << step;
      EXPECT_EQ(b.mask[r][T].item<float>(), 0.f);  // the next example's BOS is never a target
    }
  }
  try {
    task_documents({TaskExample{std::vector<int32_t>(T + 1, 5), std::vector<uint8_t>(T + 1, 1)}}, T, 1, 0, "copy");
    FAIL() << "an example longer than T was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("copy example 0"), std::string::npos) << e.what();
  }
}

// An oracle that reads s out of "BOS s SEP" scores exactly 1; one that shifts every letter scores 0;
// one wrong in the last letter gets exact 0 and token accuracy (n-1)/n.
struct CopyOracle : Answerer {
  int mode = 0;  // 0: right, 1: every letter wrong, 2: the last letter wrong
  TokenRows greedy(const TokenRows& prompts, int64_t n) override {
    TokenRows out;
    for (const auto& p : prompts) {
      EXPECT_EQ(p.front(), kCopyBos);
      EXPECT_EQ(p.back(), kCopySep);
      std::vector<int32_t> s(p.begin() + 1, p.end() - 1);
      EXPECT_EQ(static_cast<int64_t>(s.size()), n);
      if (mode == 1) for (auto& c : s) c = c + 1;
      if (mode == 2) s.back() = s.back() + 1;
      out.push_back(s);
    }
    return out;
  }
  std::vector<std::vector<double>> loglik(const TokenRows&, const TokenRows&) override { return {}; }
};

TEST(Copying, OracleScoresOneAndAWrongAnswerZero) {
  CopyOracle o;
  const std::vector<int64_t> lengths{1, 5, 40};
  auto [e1, t1] = score_copying(o, lengths, 4, 20, 9);
  o.mode = 1;
  auto [e0, t0] = score_copying(o, lengths, 4, 20, 9);
  o.mode = 2;
  auto [el, tl] = score_copying(o, lengths, 4, 20, 9);
  for (size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_EQ(e1[i], 1.0);
    EXPECT_EQ(t1[i], 1.0);
    EXPECT_EQ(e0[i], 0.0);
    EXPECT_EQ(t0[i], 0.0);
    EXPECT_EQ(el[i], 0.0);
    EXPECT_DOUBLE_EQ(tl[i], static_cast<double>(lengths[i] - 1) / lengths[i]);
  }
}

TEST(Copying, ScoresOnHandMadeAnswers) {
  // 3 samples of 4 tokens: all right, one wrong, all wrong.
  std::vector<int32_t> target{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  std::vector<int32_t> answer{1, 2, 3, 4, 1, 2, 9, 4, 0, 0, 0, 0};
  auto [exact, tok] = score_copies(answer, target, 3, 4);
  EXPECT_DOUBLE_EQ(exact, 1.0 / 3);
  EXPECT_DOUBLE_EQ(tok, (1.0 + 0.75 + 0.0) / 3);
  EXPECT_THROW(score_copies(answer, target, 2, 4), Error);
}

TEST(Copying, EvaluationAgreesWithIndependentGreedyLoop) {
  Mamba2Config c = std::get<Mamba2Config>(shape_config(default_copy_model(), "test"));
  c.d_model = 32; c.d_state = 8; c.headdim = 8; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(11);
  m->to(torch::kFloat64);
  const int64_t samples = 4, alphabet = 3;
  // A random model copies nothing; bias its output towards 'b' so that some tokens are right and
  // the scoring has something to count.
  {
    torch::NoGradGuard ng;
    m->output_weight()[static_cast<int>('b')].mul_(0).add_(m->output_weight()[static_cast<int>('|')]).mul_(5);
  }
  const int64_t L = 3, T = copy_window(L);
  auto r = evaluate_copying(m, {3, 5}, alphabet, samples, 42, L, T, /*conv_passed=*/false);
  ASSERT_EQ(r.exact.size(), 2u);
  ASSERT_EQ(r.exact_passed.size(), 2u);
  const ModelState passed = copy_passed_state(m, samples, L, T, alphabet, false, 42 + 7);
  for (auto& l : passed) EXPECT_FALSE(l.conv.defined());  // SSM state only
  EXPECT_GT(passed[0].ssm.abs().sum().item<double>(), 0);
  torch::NoGradGuard ng;
  for (bool from_passed : {false, true}) {
    std::mt19937_64 rng(42);
    for (int li = 0; li < 2; ++li) {
      const int64_t n = r.lengths[li];
      double right = 0, exact = 0;
      for (int64_t i = 0; i < samples; ++i) {
        auto e = make_copy_example(n, alphabet, rng);
        auto seq = torch::empty({1, n + 2}, torch::kInt64);  // BOS s SEP
        for (int64_t k = 0; k < n + 2; ++k) seq[0][k] = e.ids[k];
        ModelState init;  // row i of the passed state
        for (auto& l : passed) init.push_back({l.ssm.narrow(0, i, 1), torch::Tensor()});
        int64_t ok = 0;
        for (int64_t k = 0; k < n; ++k) {  // full forwards over the growing sequence, no carried state
          auto out = m->forward(seq, from_passed ? &init : nullptr);
          auto next = out.logits.select(1, seq.size(1) - 1).argmax(-1, true);  // [1, 1]
          ok += next.item<int64_t>() == e.ids[1 + k];
          seq = torch::cat({seq, next}, 1);
        }
        right += static_cast<double>(ok) / n;
        exact += ok == n;
      }
      const auto& tok = from_passed ? r.token_accuracy_passed : r.token_accuracy;
      const auto& ex = from_passed ? r.exact_passed : r.exact;
      EXPECT_DOUBLE_EQ(tok[li], right / samples) << "length " << n << (from_passed ? " passed" : " zero");
      EXPECT_DOUBLE_EQ(ex[li], exact / samples) << "length " << n << (from_passed ? " passed" : " zero");
    }
  }
}

TEST(Copying, TrainsWithAndWithoutStatePassing) {
  CopyOptions o;
  o.L = 4;
  o.alphabet = 4;
  o.train_docs = 64;
  o.eval_samples = 8;
  o.model = default_copy_model();
  o.model.d_model = 32; o.model.d_state = 8; o.model.headdim = 8; o.model.chunk_size = 16;
  TrainOptions t;
  t.steps = 12; t.batch = 8; t.lr = 3e-3;
  for (const char* kind : {"zero", "passing"}) {
    PolicySpec ps;
    ps.kind = kind;
    auto r = run_copying(o, ps, t, {}, default_compute());
    ASSERT_EQ(r.train.status, "finished") << kind;
    ASSERT_EQ(r.train.history.size(), 12u);
    EXPECT_LT(r.train.history.back().loss, r.train.history.front().loss) << kind;
    EXPECT_EQ(r.result.lengths, (std::vector<int64_t>{2, 4, 6, 8, 12, 16}));
    EXPECT_EQ(r.result.T, 11);  // 2L + 3
    EXPECT_FALSE(r.result.conv_passed);  // the SSM state only, by default
    ASSERT_EQ(r.result.exact_passed.size(), r.result.lengths.size());
  }
  // Post-training setting: zero-state pre-training, then the policy; steps count on.
  o.pretrain_steps = 5;
  PolicySpec passing;
  passing.kind = "passing";
  auto pt = run_copying(o, passing, t, {}, default_compute());
  ASSERT_EQ(pt.train.status, "finished");
  ASSERT_EQ(pt.train.history.size(), 17u);
  EXPECT_EQ(pt.train.history[5].step, 6);
  EXPECT_EQ(pt.train.history.back().step, 17);
  o.pretrain_steps = 0;
  // TBTT streams examples: it trains (and its label says so), as does passing with the conv state.
  PolicySpec tbtt;
  tbtt.kind = "tbtt";
  auto tb = run_copying(o, tbtt, t, {}, default_compute());
  ASSERT_EQ(tb.train.status, "finished");
  passing.pass_conv = 1;
  EXPECT_TRUE(run_copying(o, passing, t, {}, default_compute()).result.conv_passed);
  // Cancelling stops before evaluation.
  PolicySpec zero;
  auto c = run_copying(o, zero, t, [](const StepInfo& s) { return s.step < 3; }, default_compute());
  EXPECT_EQ(c.train.status, "cancelled");
  EXPECT_TRUE(c.result.lengths.empty());
}

// Foreign starting states (issue 29, point 4). noise_like: per (layer, head) the mean and standard
// deviation of the source state's entries, zero from a zero state (whose answers are then the
// zero state's own: an oracle); the reverse task's state is a chain of BOS s SEP reverse(s) EOS;
// evaluate_copying scores the same strings from each, prose only when text is given.
// The copying model is a shape of any architecture (issue 51). Its default is the Mamba-2 the
// analysis always trained (the config, field by field, and the weights of the same seed), and a
// section naming another architecture trains that one; another architecture's field is refused by
// name.
TEST(Copying, TrainsTheArchitectureItsSectionNames) {
  Mamba2Config old;  // what copying built before the shape: Mamba2Config's defaults and these
  old.d_model = 64, old.n_layer = 2, old.d_state = 32, old.headdim = 16, old.chunk_size = 64, old.vocab_size = 256;
  old.tie_embeddings = true;
  const ModelConfig now = shape_config(copying_options(nlohmann::json::object(), "t").options.model, "t");
  ASSERT_TRUE(std::holds_alternative<Mamba2Config>(now));
  EXPECT_EQ(to_hf_config_json(now), to_hf_config_json(ModelConfig(old)));
  EXPECT_EQ(std::get<Mamba2Config>(now).dt_init_floor, old.dt_init_floor);
  {
    RecurrentLM a = Mamba2LM(old);
    a->reset_parameters(5);
    RecurrentLM b = fresh_model(default_copy_model(), 5, "t");
    auto pa = a->named_parameters(), pb = b->named_parameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  }
  for (const char* arch : {"gla", "gated_deltanet", "mamba1"}) {
    const auto o = copying_options(nlohmann::json::parse(std::string(R"({"L": 3, "alphabet": 3, "steps": 3, "batch": 4,
        "samples": 2, "train_docs": 16, "model": {"arch": ")") + arch + R"(", "d_model": 32}})"), "t");
    EXPECT_EQ(architecture(shape_config(o.options.model, "t")), arch);
    PolicySpec ps;
    auto r = run_copying(o.options, ps, o.train, {}, default_compute());
    ASSERT_EQ(r.train.status, "finished") << arch;
    EXPECT_EQ(r.result.exact.size(), r.result.lengths.size()) << arch;
  }
  try {
    copying_options(nlohmann::json::parse(R"({"model": {"arch": "gla", "headdim": 8}})"), "spec.json");
    FAIL() << "a Mamba-2 field on GLA was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'analyses.copying.model.headdim' is a Mamba-2 setting"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(copying_options(nlohmann::json::parse(R"({"model": {"arch": "rwkv"}})"), "t"), Error);
  EXPECT_THROW(copying_options(nlohmann::json::parse(R"({"model": {"d_modell": 8}})"), "t"), Error);
}

TEST(Copying, ForeignStartsAreScoredOnTheSameStrings) {
  Mamba2Config c;
  c.d_model = 32, c.n_layer = 2, c.d_state = 8, c.headdim = 8, c.vocab_size = 256, c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(5);
  const int64_t L = 4, T = copy_window(L), samples = 64, alphabet = 5;
  const ModelState passed = copy_passed_state(m, samples, L, T, alphabet, false, 3);
  const ModelState noise = noise_like(passed, 9);
  ASSERT_EQ(noise.size(), passed.size());
  for (size_t l = 0; l < passed.size(); ++l) {
    ASSERT_EQ(noise[l].ssm.sizes(), passed[l].ssm.sizes());
    EXPECT_FALSE(noise[l].conv.defined());
    auto per_head = [](const torch::Tensor& x) { return x.transpose(0, 1).reshape({x.size(1), -1}).to(torch::kFloat64); };
    const auto a = per_head(passed[l].ssm), b = per_head(noise[l].ssm);
    EXPECT_TRUE(torch::allclose(b.mean(1), a.mean(1), 0, 0.15 * a.std(1).max().item<double>())) << l;
    EXPECT_TRUE(torch::allclose(b.std(1), a.std(1), 0.1, 1e-6)) << l;
  }
  ModelState zero = m->zero_state(2);
  for (auto& z : noise_like(zero, 1)) EXPECT_EQ(z.ssm.abs().max().item<double>(), 0.0);  // zero in, zero out
  const ModelState rev = reverse_task_state(m, samples, L, T, alphabet, false, 3);
  EXPECT_FALSE(torch::equal(rev[0].ssm, passed[0].ssm));  // another task's examples, another state

  // Prose: a held-out text long enough for 4T tokens; none when every document is shorter.
  std::vector<int32_t> text;
  for (int i = 0; i < 2000; ++i) text.push_back("the quick brown fox jumps over the lazy dog. "[i % 45]);
  std::vector<Document> prose{Document{"prose", TokenSpan(text), {}}};
  auto r = evaluate_copying(m, {2, 4}, alphabet, 8, 42, L, T, false, &prose);
  EXPECT_EQ(r.foreign, (std::vector<std::string>{"prose", "noise", "reversed"}));
  ASSERT_EQ(r.exact_foreign.size(), 3u * 2u);
  ASSERT_EQ(r.token_accuracy_foreign.size(), 3u * 2u);
  for (double v : r.token_accuracy_foreign) EXPECT_TRUE(v >= 0 && v <= 1);
  std::vector<Document> short_text{Document{"short", TokenSpan(std::vector<int32_t>(10, 'a')), {}}};
  auto q = evaluate_copying(m, {2, 4}, alphabet, 8, 42, L, T, false, &short_text);
  EXPECT_EQ(q.foreign, (std::vector<std::string>{"noise", "reversed"}));
  EXPECT_EQ(q.exact, r.exact);  // the zero-state scores do not depend on the foreign starts
  EXPECT_EQ(q.exact_passed, r.exact_passed);
  // Through the file: the foreign starts come back in order.
  const auto back = statescope::test::through_file("statescope_copy_foreign.h5", r, write_copying, read_copying);
  EXPECT_EQ(back.foreign, r.foreign);
  EXPECT_EQ(back.exact_foreign, r.exact_foreign);
  EXPECT_EQ(back.token_accuracy_foreign, r.token_accuracy_foreign);
}
