// robust_range.h — a y range that a few outlying series do not dominate (plain C++, no Qt).
//
// When one run's curve lies far from the others (random noise with sigma 1 trains at 9 bits while
// the rest sit near 2), fitting every point squashes the others into a band. robust_y_range finds
// the fewest series (at most a third of them) whose removal shrinks the span at least `factor`
// times, and returns the range of the remaining ones with which series it leaves out. The left-out
// curves still draw, leaving the plot at its edge; zooming out or "Reset view" with the robust
// range off shows them whole.
#pragma once
#include <optional>
#include <vector>

namespace statescope::views {

struct RobustRange {
  double lo = 0, hi = 0;       // the range of the kept series' finite values (positive only when log)
  std::vector<int> excluded;   // indices of the series left out, ascending
};

// nullopt when no such set exists (no series dominates) or there is nothing to fit.
std::optional<RobustRange> robust_y_range(const std::vector<std::vector<double>>& series, bool log_scale,
                                          double factor = 3.0);

}  // namespace statescope::views
