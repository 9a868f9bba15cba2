// hybrid_golden.h — a whole hybrid against its transformers fixture (tests/golden/hf-<family>/, written
// by tests/golden/make_golden_hybrids.py through whole_model_golden): the weights loaded through the
// model's own checkpoint reading (load_state_dict) in float64, the logits of one pass, the state after a
// first piece of 13 tokens (recurrent ssm and conv, attention keys and values) and the second piece's
// logits from statescope's state and from transformers'.
// Tolerances: transformers computes the scans and norms in float32 inside its float64 models.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/error.h"
#include "core/model/checkpoint.h"
#include "core/store/h5file.h"
#include "tests/golden_util.h"

namespace statescope::test {

inline torch::Tensor f64(const H5File& f, const std::string& name) {
  std::vector<int64_t> d;
  auto v = f.read_f64(name, &d);
  return torch::from_blob(v.data(), d, torch::kFloat64).clone();
}

inline nlohmann::json golden_config(const std::string& dir) {
  std::ifstream in(kGolden + dir + "/config.json");
  return nlohmann::json::parse(in);
}

// max |a - b| / max |b|
inline double rel(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

// `m` in float64 with the fixture's weights, read as load_model_dir reads them (the family's renames,
// buffers, every tensor used).
inline void load_golden_weights(RecurrentLM m, const std::string& dir) {
  m->to(torch::kFloat64);
  const auto path = kGolden + dir + "/model.safetensors";
  const auto unused = load_state_dict(*m, read_weights_file(path), path);
  EXPECT_TRUE(unused.empty()) << "unused: " << (unused.empty() ? "" : unused.front());
}

// Logits of `ids` from `init` (null: the empty state); the state after them to *final when given.
inline torch::Tensor pass(RecurrentLM m, const torch::Tensor& ids, const ModelState* init = nullptr, ModelState* final = nullptr) {
  ForwardOptions o;  // the chunked scan in ATen
  auto out = m->forward(ids, init, o);
  if (final) *final = std::move(out.final_state);
  return out.logits;
}

// From a random non-zero recurrent state `init` (and no keys yet), `ids` in two pieces (7 tokens, then
// the rest) give the logits and the state of one pass to `tol` (recurrent layer 1's ssm, attention
// layer 0's keys), and the initial state matters.
inline void expect_pieces_from_state(RecurrentLM m, const torch::Tensor& ids, const ModelState& init, double tol) {
  ModelState s, p;
  auto one = pass(m, ids, &init, &s);
  auto a = pass(m, ids.narrow(1, 0, 7), &init, &p);
  auto b = pass(m, ids.narrow(1, 7, ids.size(1) - 7), &p, &p);
  EXPECT_LT(rel(torch::cat({a, b}, 1), one), tol);
  EXPECT_LT(rel(p[1].ssm, s[1].ssm), tol);
  EXPECT_LT(rel(p.attention[0].keys, s.attention[0].keys), tol);
  EXPECT_GT(rel(pass(m, ids), one), 1e-6) << "the initial state matters";
}

// The whole-model checks (see above); `tol` bounds the logits and the state.
inline void check_against_transformers(RecurrentLM m, const std::string& dir, double tol) {
  H5File g(kGolden + dir + "/golden.h5", H5File::Mode::Read);
  auto ids = read(g, "input_ids");
  torch::NoGradGuard ng;
  const double whole = rel(pass(m, ids), f64(g, "logits"));
  EXPECT_LT(whole, tol) << "one pass";
  ModelState s;
  auto la = pass(m, ids.narrow(1, 0, 13), nullptr, &s);
  const auto ssm = f64(g, "piece_a_ssm_state"), conv = f64(g, "piece_a_conv_state");
  const auto keys = f64(g, "piece_a_keys"), values = f64(g, "piece_a_values");
  ASSERT_EQ(static_cast<int64_t>(s.size()), ssm.size(0));
  ASSERT_EQ(static_cast<int64_t>(s.attention.size()), keys.size(0));
  ModelState hf;  // transformers' state after the first piece
  for (int64_t l = 0; l < ssm.size(0); ++l) {
    EXPECT_LT(rel(s[l].ssm, ssm[l]), tol) << "ssm of recurrent layer " << l;
    // The conv state, keys and values are their layers' inputs: they carry the upstream float32 rounding.
    EXPECT_LT(rel(s[l].conv, conv[l]), tol) << "conv of recurrent layer " << l;
    hf.push_back({ssm[l], conv[l]});
  }
  for (int64_t l = 0; l < keys.size(0); ++l) {
    EXPECT_LT(rel(s.attention[l].keys, keys[l]), tol) << "keys of attention layer " << l;
    EXPECT_LT(rel(s.attention[l].values, values[l]), tol) << "values of attention layer " << l;
    hf.attention.push_back({keys[l], values[l]});
  }
  const auto rest = ids.narrow(1, 13, ids.size(1) - 13);
  auto lb = pass(m, rest, &s);
  const double piece = rel(lb, f64(g, "piece_b_logits"));
  EXPECT_LT(piece, tol) << "second piece from statescope's state";
  EXPECT_LT(rel(pass(m, rest, &hf), f64(g, "piece_b_logits")), tol) << "second piece from transformers' state";
  EXPECT_LT(rel(torch::cat({la, lb}, 1), pass(m, ids)), 1e-10) << "statescope's two pieces are its one pass";
  std::printf("[ info ] %s vs transformers: max |d logits| / max |logits| = %.1e one pass, %.1e second piece\n",
              dir.c_str(), whole, piece);
}

}  // namespace statescope::test
