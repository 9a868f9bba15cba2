// record.cpp — the evaluation's groups written and read back, and its `inspect` lines (record.h).
#include "core/analyses/eval/record.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>

#include "core/store/group_io.h"

namespace statescope {

namespace {

// A hybrid's layer_kinds attribute (a list of strings, read back as ["a", "b"]); the group fails
// when it is missing or not such a list.
std::vector<std::string> kinds_attr(const H5File& f, const GroupReader& g) {
  if (!has_attr(f, g.g, "layer_kinds")) g.fail("attribute layer_kinds is missing");
  const std::string v = f.attr(g.g, "layer_kinds");
  std::vector<std::string> out;
  if (v.empty() || v.front() != '[') return {v};  // a one-layer list reads as its one string
  size_t i = 1;
  while (i < v.size()) {
    const size_t a = v.find('"', i);
    if (a == std::string::npos) break;
    const size_t b = v.find('"', a + 1);
    if (b == std::string::npos) g.fail("attribute layer_kinds is not a list of strings");
    out.push_back(v.substr(a + 1, b - a - 1));
    i = b + 1;
  }
  if (out.empty()) g.fail("attribute layer_kinds is an empty list");
  return out;
}

// Every model layer in `layers` names one of `kinds`; the group fails naming `dataset` otherwise.
void check_layers(const GroupReader& g, const char* dataset, const std::vector<int64_t>& layers,
                  const std::vector<std::string>& kinds) {
  for (int64_t l : layers)
    if (l < 0 || l >= static_cast<int64_t>(kinds.size()))
      g.fail(std::string("dataset ") + dataset + " names a layer outside layer_kinds");
}

}  // namespace

void write_eval(ExperimentFile& file, const std::string& run, const EvalResult& r) {
  file.write_group([&](H5File& f) {
    const int64_t L = r.length, n = std::max<int64_t>(1, r.sequences);
    std::vector<int64_t> pos(L);
    for (int64_t i = 0; i < L; ++i) pos[i] = i;
    const std::string p = run + "/ppl";
    f.write(p + "/position", pos.data(), {L});
    f.write(p + "/nll", r.nll.data(), {L});
    // Standard errors over sequences, per position.
    auto stderr_of = [&](const std::vector<float>& a, const std::vector<float>* b) {
      std::vector<double> se(L, 0.0);
      if (n < 2) return se;
      for (int64_t i = 0; i < L; ++i) {
        double s1 = 0, s2 = 0;
        for (int64_t k = 0; k < n; ++k) {
          const double v = a[k * L + i] - (b ? (*b)[k * L + i] : 0.0f);
          s1 += v;
          s2 += v * v;
        }
        const double mean = s1 / n;
        se[i] = std::sqrt(std::max(0.0, s2 / n - mean * mean) / static_cast<double>(n - 1));
      }
      return se;
    };
    auto se = stderr_of(r.nll_seq, nullptr);
    f.write(p + "/nll_stderr", se.data(), {L});
    f.write(p + "/nll_per_sequence", r.nll_seq.data(), {n, L});
    nx_data(f, p, "nll", {"position"});
    prefer_default(f, run, "ppl");
    f.set_attr(p, "units", "nats per token; position p predicts token p+1");
    f.set_attr_i64(p, "T", r.T);
    f.set_attr_i64(p, "sequences", r.sequences);
    if (!r.windowed_nll.empty()) {
      f.write(p + "/windowed_nll", r.windowed_nll.data(), {L});
      f.write(p + "/windowed_nll_per_sequence", r.windowed_seq.data(), {n, L});
      std::vector<double> ex(L);
      for (int64_t i = 0; i < L; ++i) ex[i] = r.nll[i] - r.windowed_nll[i];
      auto exse = stderr_of(r.nll_seq, &r.windowed_seq);
      f.write(p + "/excess", ex.data(), {L});
      f.write(p + "/excess_stderr", exse.data(), {L});
    }
    if (!r.fixed_seq.empty()) {  // the one yardstick: the loaded model's state-reset loss
      std::vector<double> ref(L, 0.0), fx(L);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < L; ++i) ref[i] += r.fixed_seq[k * L + i] / static_cast<double>(n);
      for (int64_t i = 0; i < L; ++i) fx[i] = r.nll[i] - ref[i];
      auto fxse = stderr_of(r.nll_seq, &r.fixed_seq);
      f.write(p + "/fixed_reference_nll", ref.data(), {L});
      f.write(p + "/fixed_reference_per_sequence", r.fixed_seq.data(), {n, L});
      f.write(p + "/fixed_excess", fx.data(), {L});
      f.write(p + "/fixed_excess_stderr", fxse.data(), {L});
      f.set_attr(p, "fixed_reference", "the loaded model's loss with the state reset every T/2 on the same bytes: "
                                       "one reference for every run of the experiment");
    }
    if (!r.norm.empty()) {
      const std::string s = run + "/state_norm";
      std::vector<int64_t> layer(r.n_layer), head(r.nheads);
      for (int64_t i = 0; i < r.n_layer; ++i) layer[i] = i;
      for (int64_t i = 0; i < r.nheads; ++i) head[i] = i;
      f.write(s + "/position", pos.data(), {L});
      f.write(s + "/layer", layer.data(), {r.n_layer});
      f.write(s + "/head", head.data(), {r.nheads});
      f.write(s + "/norm", r.norm.data(), {r.n_layer, L});
      f.write(s + "/norm_per_head", r.norm_per_head.data(), {r.n_layer, r.nheads, L});
      nx_data(f, s, "norm", {"layer", "position"});
      f.set_attr(s, "units", "Frobenius norm of the SSM state after token p, mean over sequences");
      f.set_attr(s, "head_axis", r.group_name);  // what 'head' counts: heads, or Mamba-1's channel groups
      f.set_attr_i64(s, "T", r.T);  // positions >= T lie beyond the training context
      if (!r.layer_kinds.empty()) {  // a hybrid: which model layer each row is, and every layer's kind
        f.write(s + "/model_layer", r.recurrent_layers.data(), {r.n_layer});
        f.set_attr_strings(s, "layer_kinds", r.layer_kinds);
      }
    }
    if (!r.attn_entropy.empty()) {  // a hybrid's attention layers: what each position's attention reads
      const std::string a = run + "/attention_stats";
      const int64_t A = static_cast<int64_t>(r.attention_layers.size()), H = r.attention_heads;
      std::vector<int64_t> head(H);
      for (int64_t i = 0; i < H; ++i) head[i] = i;
      f.write(a + "/position", pos.data(), {L});
      f.write(a + "/layer", r.attention_layers.data(), {A});
      f.write(a + "/head", head.data(), {H});
      f.write(a + "/entropy", r.attn_entropy.data(), {A, H, L});
      f.write(a + "/first_mass", r.attn_first.data(), {A, H, L});
      nx_data(f, a, "entropy", {"layer", "head", "position"});
      f.set_attr(a, "units", "entropy: bits of the attention of position p over the positions it reads; first_mass: its share on "
                             "positions 0 .. first_tokens-1; mean over sequences; layer: the model layer");
      f.set_attr_i64(a, "first_tokens", r.first_tokens);
      f.set_attr_i64(a, "T", r.T);
      f.set_attr_strings(a, "layer_kinds", r.layer_kinds);
    }
  });
}

EvalResult read_eval(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "ppl"};
  g.require("nll");
  EvalResult r;
  r.nll = g.f64("nll");
  r.length = g.count(r.nll.size());
  r.T = g.attr_int("T");
  r.sequences = g.attr_int("sequences");
  const int64_t per_seq = g.product({r.sequences, r.length});
  r.nll_seq = g.f32("nll_per_sequence", per_seq, "[sequences, length]");
  if (g.has("windowed_nll")) {
    r.windowed_nll = g.f64("windowed_nll", r.length, "[length]");
    r.windowed_seq = g.f32("windowed_nll_per_sequence", per_seq, "[sequences, length]");
  }
  if (g.has("fixed_reference_per_sequence"))  // files from before the one yardstick have none
    r.fixed_seq = g.f32("fixed_reference_per_sequence", per_seq, "[sequences, length]");
  const GroupReader s{f, run, "state_norm"};
  if (s.has("norm")) {
    std::vector<int64_t> d;
    r.norm = s.f64("norm", &d);
    if (d.size() != 2 || d[1] != r.length) s.fail("dataset state_norm/norm is not [n_layer, length]");
    r.n_layer = d[0];
    r.norm_per_head = s.f64("norm_per_head", &d);
    if (d.size() != 3 || d[0] != r.n_layer || d[2] != r.length)
      s.fail("dataset state_norm/norm_per_head is not [n_layer, nheads, length]");
    r.nheads = d[1];
    if (has_attr(f, s.g, "head_axis")) r.group_name = f.attr(s.g, "head_axis");
    if (s.has("model_layer")) {
      r.recurrent_layers = s.i64("model_layer");
      if (static_cast<int64_t>(r.recurrent_layers.size()) != r.n_layer) s.fail("dataset state_norm/model_layer is not [n_layer]");
      r.layer_kinds = kinds_attr(f, s);
      check_layers(s, "state_norm/model_layer", r.recurrent_layers, r.layer_kinds);
    }
  }
  const GroupReader a{f, run, "attention_stats"};
  if (a.has("entropy")) {
    std::vector<int64_t> d, first;
    r.attn_entropy = a.f64("entropy", &d);
    if (d.size() != 3 || d[2] != r.length) a.fail("dataset attention_stats/entropy is not [layers, heads, length]");
    r.attention_heads = d[1];
    r.attn_first = a.f64("first_mass", &first);
    if (first != d) a.fail("dataset attention_stats/first_mass is not the shape of entropy");
    r.attention_layers = a.i64("layer");
    if (static_cast<int64_t>(r.attention_layers.size()) != d[0]) a.fail("dataset attention_stats/layer does not count entropy's layers");
    r.first_tokens = a.attr_int("first_tokens");
    if (r.layer_kinds.empty()) r.layer_kinds = kinds_attr(f, a);
    check_layers(a, "attention_stats/layer", r.attention_layers, r.layer_kinds);
  }
  return r;
}

namespace {

// Which heads' states grow past T: ||h|| at the last position / at T-1, per (layer, head).
void head_growth(const EvalResult& r, std::ostream& out) {
  const int64_t L = r.length, rows = r.n_layer * r.nheads;
  if (r.T < 1 || r.T > L || static_cast<int64_t>(r.norm_per_head.size()) != rows * L || rows == 0) return;
  std::vector<std::pair<double, int64_t>> g;
  for (int64_t i = 0; i < rows; ++i) {
    const double ref = r.norm_per_head[i * L + r.T - 1];
    if (ref > 0) g.emplace_back(r.norm_per_head[i * L + L - 1] / ref, i);
  }
  if (g.empty()) return;
  std::sort(g.begin(), g.end(), std::greater<>());  // largest growth first
  const size_t n = g.size();
  const double median = n % 2 ? g[n / 2].first : 0.5 * (g[n / 2 - 1].first + g[n / 2].first);
  const auto over5 = std::count_if(g.begin(), g.end(), [](const auto& x) { return x.first > 5; });
  const bool heads = r.group_name == "head";  // Mamba-1's columns are channel groups (G)
  out << "  state norm per " << r.group_name << ", position " << L << " / position " << r.T << ": median " << std::fixed
      << std::setprecision(2) << median << ", largest";
  for (size_t k = 0; k < std::min<size_t>(3, g.size()); ++k)
    out << (k ? ", " : " ") << std::setprecision(1) << g[k].first << " (L" << r.model_layer(g[k].second / r.nheads) << (heads ? " H" : " G")
        << g[k].second % r.nheads << ")";
  out << "; " << over5 << "/" << g.size() << " " << r.group_name << "s grew more than 5x\n" << std::defaultfloat;
}

// What a hybrid's attention layers read at T-1 and at the last position, mean over heads: the entropy
// (bits) and the mass on the first tokens (a softmax that spreads past T, or parks on its sink).
void attention_lines(const EvalResult& r, std::ostream& out) {
  const int64_t L = r.length, H = r.attention_heads, A = static_cast<int64_t>(r.attention_layers.size());
  if (r.T < 1 || r.T > L || H < 1 || static_cast<int64_t>(r.attn_entropy.size()) != A * H * L ||
      r.attn_first.size() != r.attn_entropy.size())
    return;
  auto mean = [&](const std::vector<double>& v, int64_t a, int64_t p) {
    double s = 0;
    for (int64_t h = 0; h < H; ++h) s += v[static_cast<size_t>((a * H + h) * L + p)];
    return s / static_cast<double>(H);
  };
  for (int64_t a = 0; a < A; ++a)
    out << "  attention L" << r.attention_layers[static_cast<size_t>(a)] << ", position " << r.T << " -> " << L << ": entropy "
        << std::fixed << std::setprecision(2) << mean(r.attn_entropy, a, r.T - 1) << " -> " << mean(r.attn_entropy, a, L - 1)
        << " bits (uniform: " << std::log2(static_cast<double>(r.T)) << " -> " << std::log2(static_cast<double>(L))
        << "), mass on the first " << r.first_tokens << " tokens " << std::setprecision(3) << mean(r.attn_first, a, r.T - 1)
        << " -> " << mean(r.attn_first, a, L - 1) << "\n" << std::defaultfloat;
}

}  // namespace

void inspect_eval(const RunRecord& rec, std::ostream& out) {
  const EvalResult& r = *rec.eval;
  out << "  eval: " << r.sequences << " sequences x " << r.length << " positions, T = " << r.T << "\n";
  head_growth(r, out);
  attention_lines(r, out);
}

AnalysisRecord record_eval() {
  return make_record<&RunResults::eval, read_eval>("eval", "ppl", "ppl/nll", "Per position", "Per position", true,
                                                   inspect_eval, report_eval, nullptr,
      "Loss per position to far past T against the one yardstick, and the state norms: every run has it. Cost per run: the evaluation's sequences x length, twice (full context and the state-reset reference).");
}

}  // namespace statescope
