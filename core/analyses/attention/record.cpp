// record.cpp — effective attention written and read back, its `inspect` lines and spec section.
#include "core/analyses/attention/record.h"

#include <cstdio>

#include "core/base/json_fields.h"
#include "core/store/group_io.h"

namespace statescope {

void write_attention(ExperimentFile& file, const std::string& run, const AttentionResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/attention";
    const int64_t h = static_cast<int64_t>(r.heads.size()), L = r.length;
    std::vector<int64_t> tokens(r.tokens.begin(), r.tokens.end());
    f.write(g + "/tokens", tokens.data(), {L});
    const int64_t B = r.bins();
    f.write(g + "/heads", r.heads.data(), {h});
    std::vector<int64_t> positions = r.positions;
    if (positions.empty())  // one bin per position
      for (int64_t p = 0; p < L; ++p) positions.push_back(p);
    f.write(g + "/positions", positions.data(), {B});
    f.write(g + "/M", r.M.data(), {h, B, B});
    write_columns(f, g, {{"init", &r.init}}, {h, B});
    write_columns(f, g, {{"by_distance", &r.by_distance}}, {h, L});
    describe_group(f, run, "attention", "by_distance", {"head", "distance"},
                   "effective attention of one layer's heads on one sequence: M[t, s] = (C_t . B_s) dt_s "
                   "exp(sum of dt A over s < r <= t), how much position t reads position s (zero above the "
                   "diagonal); init: what is left of the initial state at t; by_distance: mean |M[t, t-d]| over t; "
                   "positions: the first position of each row/column bin of M and init (binned = 1: M holds the "
                   "mean |M| over each cell's pairs s <= t, for sequences longer than 4096)",
                   {{"layer", r.layer}, {"length", L}, {"binned", r.binned() ? 1 : 0}});
    // A hybrid's layer: which kind it is; an attention layer's M is its softmax (init 0).
    if (!r.layer_kind.empty()) f.set_attr(g, "layer_kind", r.layer_kind);
  });
}

AttentionResult read_attention(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "attention"};
  g.require("M");
  AttentionResult r;
  r.heads = g.i64("heads");
  const auto tokens = g.i64("tokens");
  r.tokens.assign(tokens.begin(), tokens.end());
  r.length = static_cast<int64_t>(r.tokens.size());
  const int64_t h = g.count(r.heads.size()), L = g.count(r.tokens.size());
  std::vector<int64_t> d;
  if (g.has("positions")) {  // files before binning: one bin per position
    r.positions = g.i64("positions");
    for (size_t k = 0; k < r.positions.size(); ++k)
      if ((k == 0 && r.positions[0] != 0) || (k > 0 && r.positions[k] <= r.positions[k - 1]) || r.positions[k] >= L)
        g.fail("dataset attention/positions must start at 0 and increase below the length " + std::to_string(L));
    if (r.positions.empty()) g.fail("dataset attention/positions is empty");
  } else {
    for (int64_t p = 0; p < L; ++p) r.positions.push_back(p);
  }
  const int64_t B = r.bins();
  r.M = g.f64("M", &d);
  if (d != std::vector<int64_t>{h, B, B}) g.fail("dataset attention/M is not [heads, bins, bins]");
  g.columns({{"init", &r.init}}, g.product({h, B}), "[heads, bins]");
  g.columns({{"by_distance", &r.by_distance}}, g.product({h, L}), "[heads, L]");
  r.layer = g.attr_int("layer");
  r.layer_kind = g.attr_or("layer_kind", "");
  return r;
}

void inspect_attention(const RunRecord& rec, std::ostream& out) {
  const AttentionResult& a = *rec.attention;
  char buf[200];
  std::snprintf(buf, sizeof buf, "  attention: layer %lld%s%s%s, %lld tokens; mean distance read per head:", (long long)a.layer,
                a.layer_kind.empty() ? "" : " (", a.layer_kind == "attention" ? "softmax attention" : a.layer_kind.c_str(),
                a.layer_kind.empty() ? "" : ")", (long long)a.length);
  out << buf;
  for (size_t i = 0; i < a.heads.size(); ++i) {
    std::snprintf(buf, sizeof buf, " H%lld %.1f", (long long)a.heads[i], mean_distance(a, i));
    out << buf;
  }
  out << "\n";
}

nlohmann::json options_attention(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.attention.");
  f.only({"layer", "length", "head"});
  auto in = [&](const char* k, int64_t dflt, int64_t lo, int64_t hi) {
    const int64_t v = f.get<int64_t>(k, dflt);
    if (v < lo || v > hi) f.fail(k, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  };
  return {{"layer", in("layer", 0, 0, 1 << 20)}, {"length", in("length", 256, 1, kMaxBinnedAttentionLength)}, {"head", in("head", -1, -1, 1 << 20)}};
}

AnalysisRecord record_attention() {
  return make_record<&RunResults::attention, read_attention>("attention", "attention", "attention/M",
                                                             "Effective attention", "Effective attention", true,
                                                             inspect_attention, report_attention, options_attention,
      "Effective attention: how much token s feeds the output at t, per head (Mamba-2: M[t, s] from dt, A, B, C; a hybrid's attention layer: its softmax), on the first 256 validation tokens, with what is left of the initial state. Cost per run: one forward and an L x L matrix per head: cheap at 256 tokens, quadratic in the length.");
}

}  // namespace statescope
