// experiment_reader.cpp — what every run has besides its analyses: its training steps and its sweep
// cell (experiment_store.h). Each analysis reads its own group (core/analyses/<name>/record.cpp).
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/store/experiment_store.h"

namespace statescope {

SweepCell read_sweep_cell(const H5File& f, const std::string& run) {
  SweepCell c;
  try {
    const auto spec = nlohmann::json::parse(f.attr(run, "spec"));
    const auto& info = spec.at("run");
    if (!info.contains("sweep_cell")) return c;
    c.group = info.at("sweep_group").get<std::string>();
    for (auto it = info.at("sweep_cell").begin(); it != info.at("sweep_cell").end(); ++it)
      c.values.emplace_back(it.key(), it.value().get<double>());
  } catch (const nlohmann::json::exception&) {
    return {};  // no spec or not ours: not a sweep's run
  } catch (const Error&) {
    return {};
  }
  return c;
}

std::vector<StepInfo> read_train(const H5File& f, const std::string& run) {
  const std::string g = run + "/train";
  std::vector<StepInfo> out;
  if (!f.has(g + "/loss")) return out;
  auto step = f.read_i64(g + "/step");
  auto loss = f.read_f64(g + "/loss"), lr = f.read_f64(g + "/lr"), gn = f.read_f64(g + "/grad_norm");
  const size_t n = std::min({step.size(), loss.size(), lr.size(), gn.size()});  // a killed writer may leave one short
  for (size_t i = 0; i < n; ++i) {
    StepInfo s;
    s.step = step[i];
    s.steps = step[n - 1];
    s.loss = loss[i];
    s.lr = lr[i];
    s.grad_norm = gn[i];
    out.push_back(s);
  }
  return out;
}

}  // namespace statescope
