// record.cpp — decay timescales written and read back, their `inspect` lines and spec section.
#include "core/analyses/decay/record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/json_fields.h"
#include "core/store/group_io.h"

namespace statescope {

void write_decay(ExperimentFile& file, const std::string& run, const DecayResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/decay";
    const int64_t nb = static_cast<int64_t>(r.bin_edges.size()) - 1;
    f.write(g + "/bin_edges", r.bin_edges.data(), {nb + 1});
    write_columns(f, g, {{"near", &r.near}, {"far", &r.far}}, {r.n_layer, r.groups, nb});
    write_columns(f, g, {{"median_near", &r.median_near}, {"median_far", &r.median_far}}, {r.n_layer, r.groups});
    f.set_attr(g, "head_axis", r.group_name);
    describe_group(f, run, "decay", "far", {"layer", "group", "bin"},
                   "memory length m_t = -1/(dt_t A) of each (layer, group) at each evaluation token, mean of dt_t A "
                   "over the group (Mamba-1: its channels and d_state); near/far: fraction of tokens in each "
                   "log10(m) bin (bin_edges) at positions [0, T) and [max(T, length/2), length); median_*: the "
                   "median m in tokens, interpolated in the histogram",
                   {{"T", r.T}, {"length", r.length}, {"sequences", r.sequences}});
  });
}

DecayResult read_decay(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "decay"};
  g.require("far");
  DecayResult r;
  r.bin_edges = g.f64("bin_edges");
  if (r.bin_edges.size() < 2) g.fail("dataset decay/bin_edges holds fewer than 2 edges");
  std::vector<int64_t> d;
  g.f64("median_far", &d);
  if (d.size() != 2) g.fail("dataset decay/median_far is not [layer, group]");
  r.n_layer = d[0], r.groups = d[1];
  const int64_t cells = g.product({r.n_layer, r.groups});
  g.columns({{"near", &r.near}, {"far", &r.far}}, g.product({cells, g.count(r.bin_edges.size() - 1)}),
            "[layer, group, bins]");
  g.columns({{"median_near", &r.median_near}, {"median_far", &r.median_far}}, cells, "[layer, group]");
  r.T = g.attr_int("T"), r.length = g.attr_int("length"), r.sequences = g.attr_int("sequences");
  r.group_name = g.attr_or("head_axis", "head");
  return r;
}

void inspect_decay(const RunRecord& rec, std::ostream& out) {
  const DecayResult& d = *rec.decay;
  int64_t longer = 0, shorter = 0;
  for (size_t i = 0; i < d.median_far.size(); ++i) {
    longer += d.median_far[i] > 2 * d.median_near[i];
    shorter += d.median_far[i] < 0.5 * d.median_near[i];
  }
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "  decay: memory length -1/(dt A) over %lld sequences x %lld positions, median over %lld layers x "
                "%lld %ss of their medians: %.3g tokens within T, %.3g far past T; %lld %ss remember over 2x "
                "longer far past T, %lld over 2x shorter\n",
                (long long)d.sequences, (long long)d.length, (long long)d.n_layer, (long long)d.groups,
                d.group_name.c_str(), median_of(d.median_near), median_of(d.median_far), (long long)longer,
                d.group_name.c_str(), (long long)shorter);
  out << buf;
}

nlohmann::json options_decay(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.decay.");
  f.only({"length", "sequences", "bins", "segment"});
  auto in = [&](const char* k, int64_t dflt, int64_t lo, int64_t hi) {
    const int64_t v = f.get<int64_t>(k, dflt);
    if (v < lo || v > hi) f.fail(k, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  };
  return {{"length", in("length", 0, 0, int64_t{1} << 24)}, {"sequences", in("sequences", 8, 1, 4096)},
          {"bins", in("bins", 160, 4, 4000)}, {"segment", in("segment", 1024, 1, int64_t{1} << 20)}};
}

AnalysisRecord record_decay() {
  return make_record<&RunResults::decay, read_decay>("decay", "decay", "decay/far", "Decay timescales",
                                                     "Decay timescales", true, inspect_decay, report_decay, options_decay,
      "Decay timescales: every head's memory length -1/(dt A) at each token, within T and far past it. Cost per run: one forward of 16T tokens over 8 sequences: cheap.");
}

}  // namespace statescope
