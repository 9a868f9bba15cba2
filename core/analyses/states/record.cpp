// record.cpp — state statistics written and read back, and their `inspect` lines (record.h).
#include "core/analyses/states/record.h"

#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_io.h"

namespace statescope {

void write_state_stats(ExperimentFile& file, const std::string& run, const StateStatsResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/state_stats";
    const int64_t np = static_cast<int64_t>(r.positions.size()), nl = static_cast<int64_t>(r.layers.size());
    const int64_t nb = static_cast<int64_t>(r.bin_edges.size()) - 1, H = r.nheads;
    std::vector<int64_t> head(H), pos(r.length);
    for (int64_t i = 0; i < H; ++i) head[i] = i;
    for (int64_t i = 0; i < r.length; ++i) pos[i] = i;
    f.write(g + "/position", r.positions.data(), {np});
    f.write(g + "/layer", r.layers.data(), {nl});
    f.write(g + "/head", head.data(), {H});
    f.write(g + "/bin_edges", r.bin_edges.data(), {nb + 1});
    f.write(g + "/histogram", r.histogram.data(), {nl, np, H, nb});
    write_columns(f, g, {{"mean", &r.mean}, {"std", &r.std}}, {nl, np, H});
    write_columns(f, g, {{"fitted_mean", &r.fitted_mean}, {"fitted_std", &r.fitted_std}}, {nl, H});
    f.write(g + "/delta_position", pos.data(), {r.length});
    f.write(g + "/delta_norm", r.delta_norm.data(), {r.n_layer, r.length});
    f.set_attr(g, "head_axis", r.group_name);  // what 'head' counts: heads, or Mamba-1's channel groups
    // The per-(layer, position, head) state mean is the signal; never the run's default plot (3-D).
    describe_group(f, run, "state_stats", "mean", {"layer", "position", "head"},
                   "histogram: density of SSM state entries of each (layer, position, head) over sequences, "
                   "headdim and d_state; fitted_*: Gaussian per (layer, head) of states at position T-1; "
                   "delta_norm: mean ||S_t - S_{t-1}||_F",
                   {{"T", r.T}, {"sequences", r.sequences}});
  });
}

StateStatsResult read_state_stats(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "state_stats"};
  g.require("histogram");
  StateStatsResult r;
  r.positions = g.i64("position");
  r.layers = g.i64("layer");
  r.nheads = g.count(g.i64("head").size());
  r.bin_edges = g.f64("bin_edges");
  if (r.bin_edges.size() < 2) g.fail("dataset state_stats/bin_edges holds fewer than 2 edges");
  const int64_t nl = g.count(r.layers.size()), np = g.count(r.positions.size());
  const int64_t bins = g.count(r.bin_edges.size()) - 1;
  r.histogram = g.f64("histogram", g.product({nl, np, r.nheads, bins}), "[layer, position, head, bins]");
  g.columns({{"mean", &r.mean}, {"std", &r.std}}, g.product({nl, np, r.nheads}), "[layer, position, head]");
  g.columns({{"fitted_mean", &r.fitted_mean}, {"fitted_std", &r.fitted_std}}, g.product({nl, r.nheads}), "[layer, head]");
  std::vector<int64_t> d;
  r.delta_norm = g.f64("delta_norm", &d);
  if (d.size() != 2) g.fail("dataset state_stats/delta_norm is not [n_layer, length]");
  r.n_layer = d[0];
  r.length = d[1];
  r.T = g.attr_int("T");
  r.sequences = g.attr_int("sequences");
  r.group_name = g.attr_or("head_axis", "head");  // files from before Mamba-1 have none: heads
  return r;
}

void inspect_state_stats(const RunRecord& rec, std::ostream& out) {
  const StateStatsResult& s = *rec.states;
  out << "  state_stats: positions {";
  for (size_t i = 0; i < s.positions.size(); ++i) out << (i ? ", " : "") << s.positions[i];
  out << "}";
  const size_t H = static_cast<size_t>(s.nheads);
  if (H > 0 && !s.positions.empty() && !s.layers.empty()) {
    double m_last = 0, m_fit = 0;
    for (size_t h = 0; h < H; ++h) {
      m_last += s.std[(s.positions.size() - 1) * H + h] / double(H);
      m_fit += s.fitted_std[h] / double(H);
    }
    out << "; first layer's state std at the last position / fitted at T-1: " << m_last / m_fit;
  }
  out << "\n";
}

StateStatsOptions states_options(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.states.");
  f.only({"positions", "layers", "sequences", "bins", "length", "range"});
  StateStatsOptions o;
  f.read("positions", o.positions);
  f.read("layers", o.layers);
  f.read("sequences", o.sequences);
  f.read("bins", o.bins);
  f.read("length", o.length);
  f.read("range", o.range);
  positive(f, "sequences", o.sequences);
  positive(f, "bins", o.bins);
  return o;
}

AnalysisRecord record_states() {
  return make_record<&RunResults::states, read_state_stats>("states", "state_stats", "state_stats/histogram",
                                                            "State distributions", "State distributions", false,
                                                            inspect_state_stats, report_state_stats,
                                                            checked_section<states_options>,
      "State distributions: histograms of the state entries at positions below and far beyond T with the Gaussian fitted within T, and the state change per token. Cost per run: one forward of 64T over 16 sequences, keeping 6 positions' states: cheap.");
}

}  // namespace statescope
